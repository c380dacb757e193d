package otelsetup

import (
	"encoding/binary"
	"math"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// The protobuf wire format of the few OTLP messages toolsearch exports (opentelemetry/proto/collector/trace/v1
// and metrics/v1, and the messages they hold), written by hand: the generated code and the protobuf runtime
// that the OTLP exporters of go.opentelemetry.io bring add 14 MB to the binary (see RATIONALE.md). Field
// numbers are those of the .proto files; the test decodes what is written here with the generated messages.

const (
	wireVarint  = 0
	wireFixed64 = 1
	wireBytes   = 2
	wireFixed32 = 5
)

func appendTag(b []byte, field, wire int) []byte {
	return binary.AppendUvarint(b, uint64(field)<<3|uint64(wire))
}

func appendVarintField(b []byte, field int, v uint64) []byte {
	return binary.AppendUvarint(appendTag(b, field, wireVarint), v)
}

// appendUintField leaves out a zero, as proto3 does for a field that is not in a oneof.
func appendUintField(b []byte, field int, v uint64) []byte {
	if v == 0 {
		return b
	}
	return appendVarintField(b, field, v)
}

func appendFixed64Field(b []byte, field int, v uint64) []byte {
	return binary.LittleEndian.AppendUint64(appendTag(b, field, wireFixed64), v)
}

func appendDoubleField(b []byte, field int, v float64) []byte {
	return appendFixed64Field(b, field, math.Float64bits(v))
}

func appendFixed32Field(b []byte, field int, v uint32) []byte {
	return binary.LittleEndian.AppendUint32(appendTag(b, field, wireFixed32), v)
}

func appendBytesField(b []byte, field int, v []byte) []byte {
	b = binary.AppendUvarint(appendTag(b, field, wireBytes), uint64(len(v)))
	return append(b, v...)
}

func appendStringField(b []byte, field int, v string) []byte {
	if v == "" {
		return b
	}
	b = binary.AppendUvarint(appendTag(b, field, wireBytes), uint64(len(v)))
	return append(b, v...)
}

// appendTime writes a time as fixed64 nanoseconds since the epoch; the zero time is left out.
func appendTime(b []byte, field int, t time.Time) []byte {
	if t.IsZero() {
		return b
	}
	return appendFixed64Field(b, field, uint64(t.UnixNano()))
}

// appendMessage writes field as an embedded message that body appends. Its length is known only afterwards:
// one byte is reserved for it, and the body moves when the length needs more.
func appendMessage(b []byte, field int, body func([]byte) []byte) []byte {
	b = appendTag(b, field, wireBytes)
	start := len(b)
	b = body(append(b, 0))
	n := len(b) - start - 1
	if n < 0x80 {
		b[start] = byte(n)
		return b
	}
	var lenBuf [binary.MaxVarintLen64]byte
	l := binary.PutUvarint(lenBuf[:], uint64(n))
	b = append(b, lenBuf[:l-1]...) // room for the longer length
	copy(b[start+l:], b[start+1:start+1+n])
	copy(b[start:], lenBuf[:l])
	return b
}

// AnyValue: string_value 1, bool_value 2, int_value 3, double_value 4, array_value 5, kvlist_value 6,
// bytes_value 7. The members of a oneof are written even when zero: their presence is the value.
func appendAnyValue(b []byte, v attribute.Value) []byte {
	switch v.Type() {
	case attribute.BOOL:
		var n uint64
		if v.AsBool() {
			n = 1
		}
		return appendVarintField(b, 2, n)
	case attribute.INT64:
		return appendVarintField(b, 3, uint64(v.AsInt64()))
	case attribute.FLOAT64:
		return appendDoubleField(b, 4, v.AsFloat64())
	case attribute.STRING:
		return appendBytesField(b, 1, []byte(v.AsString()))
	case attribute.BYTESLICE:
		return appendBytesField(b, 7, v.AsByteSlice())
	case attribute.BOOLSLICE:
		return appendArray(b, len(v.AsBoolSlice()), func(b []byte, i int) []byte {
			return appendAnyValue(b, attribute.BoolValue(v.AsBoolSlice()[i]))
		})
	case attribute.INT64SLICE:
		s := v.AsInt64Slice()
		return appendArray(b, len(s), func(b []byte, i int) []byte { return appendVarintField(b, 3, uint64(s[i])) })
	case attribute.FLOAT64SLICE:
		s := v.AsFloat64Slice()
		return appendArray(b, len(s), func(b []byte, i int) []byte { return appendDoubleField(b, 4, s[i]) })
	case attribute.STRINGSLICE:
		s := v.AsStringSlice()
		return appendArray(b, len(s), func(b []byte, i int) []byte { return appendBytesField(b, 1, []byte(s[i])) })
	case attribute.SLICE:
		s := v.AsSlice()
		return appendArray(b, len(s), func(b []byte, i int) []byte { return appendAnyValue(b, s[i]) })
	case attribute.MAP:
		kvs := v.AsMap()
		return appendMessage(b, 6, func(b []byte) []byte { return appendKeyValues(b, 1, kvs) })
	}
	return b // EMPTY: an AnyValue with nothing set
}

// appendArray writes an ArrayValue (values 1) of n AnyValues.
func appendArray(b []byte, n int, elem func([]byte, int) []byte) []byte {
	return appendMessage(b, 5, func(b []byte) []byte {
		for i := 0; i < n; i++ {
			b = appendMessage(b, 1, func(b []byte) []byte { return elem(b, i) })
		}
		return b
	})
}

// appendKeyValues writes each KeyValue (key 1, value 2) as field.
func appendKeyValues(b []byte, field int, kvs []attribute.KeyValue) []byte {
	for _, kv := range kvs {
		b = appendMessage(b, field, func(b []byte) []byte {
			b = appendStringField(b, 1, string(kv.Key))
			return appendMessage(b, 2, func(b []byte) []byte { return appendAnyValue(b, kv.Value) })
		})
	}
	return b
}

// appendResource writes a Resource (attributes 1).
func appendResource(b []byte, field int, res *resource.Resource) []byte {
	return appendMessage(b, field, func(b []byte) []byte { return appendKeyValues(b, 1, res.Attributes()) })
}

// appendScope writes an InstrumentationScope (name 1, version 2, attributes 3).
func appendScope(b []byte, field int, s instrumentation.Scope) []byte {
	return appendMessage(b, field, func(b []byte) []byte {
		b = appendStringField(b, 1, s.Name)
		b = appendStringField(b, 2, s.Version)
		return appendKeyValues(b, 3, s.Attributes.ToSlice())
	})
}

// Span flags: the W3C trace flags in the low byte, and whether the parent is remote (SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE,
// SPAN_FLAGS_CONTEXT_IS_REMOTE).
const (
	flagHasIsRemote = 0x100
	flagIsRemote    = 0x200
)

// encodeTraces writes an ExportTraceServiceRequest (resource_spans 1) of spans, grouped by resource and scope
// in the order they first appear.
func encodeTraces(spans []sdktrace.ReadOnlySpan) []byte {
	type scopeKey struct {
		res   *resource.Resource
		scope instrumentation.Scope
	}
	var resources []*resource.Resource
	scopes := map[*resource.Resource][]instrumentation.Scope{}
	byScope := map[scopeKey][]sdktrace.ReadOnlySpan{}
	for _, s := range spans {
		res, scope := s.Resource(), s.InstrumentationScope()
		if res == nil {
			res = resource.Empty()
		}
		if _, ok := scopes[res]; !ok {
			resources = append(resources, res)
			scopes[res] = nil
		}
		k := scopeKey{res, scope}
		if _, ok := byScope[k]; !ok {
			scopes[res] = append(scopes[res], scope)
		}
		byScope[k] = append(byScope[k], s)
	}
	var b []byte
	for _, res := range resources {
		// ResourceSpans: resource 1, scope_spans 2, schema_url 3.
		b = appendMessage(b, 1, func(b []byte) []byte {
			b = appendResource(b, 1, res)
			for _, scope := range scopes[res] {
				// ScopeSpans: scope 1, spans 2, schema_url 3.
				b = appendMessage(b, 2, func(b []byte) []byte {
					b = appendScope(b, 1, scope)
					for _, s := range byScope[scopeKey{res, scope}] {
						b = appendMessage(b, 2, func(b []byte) []byte { return appendSpan(b, s) })
					}
					return appendStringField(b, 3, scope.SchemaURL)
				})
			}
			return appendStringField(b, 3, res.SchemaURL())
		})
	}
	return b
}

// appendSpan writes the fields of a Span: trace_id 1, span_id 2, trace_state 3, parent_span_id 4, name 5,
// kind 6, start_time_unix_nano 7, end_time_unix_nano 8, attributes 9, dropped_attributes_count 10, events 11,
// dropped_events_count 12, links 13, dropped_links_count 14, status 15, flags 16.
func appendSpan(b []byte, s sdktrace.ReadOnlySpan) []byte {
	sc := s.SpanContext()
	tid, sid := sc.TraceID(), sc.SpanID()
	b = appendBytesField(b, 1, tid[:])
	b = appendBytesField(b, 2, sid[:])
	b = appendStringField(b, 3, sc.TraceState().String())
	flags := uint32(sc.TraceFlags()) | flagHasIsRemote
	if p := s.Parent(); p.IsValid() {
		psid := p.SpanID()
		b = appendBytesField(b, 4, psid[:])
		if p.IsRemote() {
			flags |= flagIsRemote
		}
	}
	b = appendStringField(b, 5, s.Name())
	// trace.SpanKind has the numbers of OTLP's SpanKind, unspecified 0 to consumer 5.
	b = appendUintField(b, 6, uint64(s.SpanKind()))
	b = appendTime(b, 7, s.StartTime())
	b = appendTime(b, 8, s.EndTime())
	b = appendKeyValues(b, 9, s.Attributes())
	b = appendUintField(b, 10, uint64(s.DroppedAttributes()))
	for _, e := range s.Events() {
		// Event: time_unix_nano 1, name 2, attributes 3, dropped_attributes_count 4.
		b = appendMessage(b, 11, func(b []byte) []byte {
			b = appendTime(b, 1, e.Time)
			b = appendStringField(b, 2, e.Name)
			b = appendKeyValues(b, 3, e.Attributes)
			return appendUintField(b, 4, uint64(e.DroppedAttributeCount))
		})
	}
	b = appendUintField(b, 12, uint64(s.DroppedEvents()))
	for _, l := range s.Links() {
		// Link: trace_id 1, span_id 2, trace_state 3, attributes 4, dropped_attributes_count 5, flags 6.
		b = appendMessage(b, 13, func(b []byte) []byte {
			ltid, lsid := l.SpanContext.TraceID(), l.SpanContext.SpanID()
			b = appendBytesField(b, 1, ltid[:])
			b = appendBytesField(b, 2, lsid[:])
			b = appendStringField(b, 3, l.SpanContext.TraceState().String())
			b = appendKeyValues(b, 4, l.Attributes)
			b = appendUintField(b, 5, uint64(l.DroppedAttributeCount))
			lflags := uint32(l.SpanContext.TraceFlags()) | flagHasIsRemote
			if l.SpanContext.IsRemote() {
				lflags |= flagIsRemote
			}
			return appendFixed32Field(b, 6, lflags)
		})
	}
	b = appendUintField(b, 14, uint64(s.DroppedLinks()))
	if st := s.Status(); st.Code != codes.Unset {
		// Status: message 2, code 3 (OTLP's numbers differ from codes.Code: ok 1, error 2).
		code := uint64(2)
		if st.Code == codes.Ok {
			code = 1
		}
		b = appendMessage(b, 15, func(b []byte) []byte {
			b = appendStringField(b, 2, st.Description)
			return appendVarintField(b, 3, code)
		})
	}
	return appendFixed32Field(b, 16, flags)
}

// otlpTemporality is OTLP's AggregationTemporality: delta 1, cumulative 2.
func otlpTemporality(t metricdata.Temporality) uint64 {
	switch t {
	case metricdata.DeltaTemporality:
		return 1
	case metricdata.CumulativeTemporality:
		return 2
	}
	return 0
}

// encodeMetrics writes an ExportMetricsServiceRequest (resource_metrics 1).
func encodeMetrics(rm *metricdata.ResourceMetrics) []byte {
	res := rm.Resource
	if res == nil {
		res = resource.Empty()
	}
	// ResourceMetrics: resource 1, scope_metrics 2, schema_url 3.
	return appendMessage(nil, 1, func(b []byte) []byte {
		b = appendResource(b, 1, res)
		for _, sm := range rm.ScopeMetrics {
			// ScopeMetrics: scope 1, metrics 2, schema_url 3.
			b = appendMessage(b, 2, func(b []byte) []byte {
				b = appendScope(b, 1, sm.Scope)
				for _, m := range sm.Metrics {
					b = appendMessage(b, 2, func(b []byte) []byte { return appendMetric(b, m) })
				}
				return appendStringField(b, 3, sm.Scope.SchemaURL)
			})
		}
		return appendStringField(b, 3, res.SchemaURL())
	})
}

// appendMetric writes a Metric: name 1, description 2, unit 3, and its data as gauge 5, sum 7, histogram 9,
// exponential_histogram 10 or summary 11.
func appendMetric(b []byte, m metricdata.Metrics) []byte {
	b = appendStringField(b, 1, m.Name)
	b = appendStringField(b, 2, m.Description)
	b = appendStringField(b, 3, m.Unit)
	switch d := m.Data.(type) {
	case metricdata.Gauge[int64]:
		b = appendMessage(b, 5, func(b []byte) []byte { return appendNumberPoints(b, d.DataPoints) })
	case metricdata.Gauge[float64]:
		b = appendMessage(b, 5, func(b []byte) []byte { return appendNumberPoints(b, d.DataPoints) })
	case metricdata.Sum[int64]:
		b = appendMessage(b, 7, func(b []byte) []byte { return appendSum(b, d) })
	case metricdata.Sum[float64]:
		b = appendMessage(b, 7, func(b []byte) []byte { return appendSum(b, d) })
	case metricdata.Histogram[int64]:
		b = appendMessage(b, 9, func(b []byte) []byte { return appendHistogram(b, d) })
	case metricdata.Histogram[float64]:
		b = appendMessage(b, 9, func(b []byte) []byte { return appendHistogram(b, d) })
	case metricdata.ExponentialHistogram[int64]:
		b = appendMessage(b, 10, func(b []byte) []byte { return appendExpHistogram(b, d) })
	case metricdata.ExponentialHistogram[float64]:
		b = appendMessage(b, 10, func(b []byte) []byte { return appendExpHistogram(b, d) })
	case metricdata.Summary:
		b = appendMessage(b, 11, func(b []byte) []byte { return appendSummary(b, d) })
	}
	return b
}

// Sum: data_points 1, aggregation_temporality 2, is_monotonic 3.
func appendSum[N int64 | float64](b []byte, s metricdata.Sum[N]) []byte {
	b = appendNumberPoints(b, s.DataPoints)
	b = appendUintField(b, 2, otlpTemporality(s.Temporality))
	if s.IsMonotonic {
		b = appendVarintField(b, 3, 1)
	}
	return b
}

// appendNumberPoints writes each NumberDataPoint (start_time_unix_nano 2, time_unix_nano 3, as_double 4,
// exemplars 5, as_int 6, attributes 7) as field 1.
func appendNumberPoints[N int64 | float64](b []byte, points []metricdata.DataPoint[N]) []byte {
	for _, p := range points {
		b = appendMessage(b, 1, func(b []byte) []byte {
			b = appendTime(b, 2, p.StartTime)
			b = appendTime(b, 3, p.Time)
			b = appendNumber(b, 4, 6, p.Value)
			b = appendExemplars(b, 5, p.Exemplars)
			return appendKeyValues(b, 7, p.Attributes.ToSlice())
		})
	}
	return b
}

// appendNumber writes a float64 as the double field, an int64 as the sfixed64 one.
func appendNumber[N int64 | float64](b []byte, doubleField, intField int, v N) []byte {
	switch v := any(v).(type) {
	case float64:
		return appendDoubleField(b, doubleField, v)
	case int64:
		return appendFixed64Field(b, intField, uint64(v))
	}
	return b
}

// appendExemplars writes each Exemplar (time_unix_nano 2, as_double 3, span_id 4, trace_id 5, as_int 6,
// filtered_attributes 7) as field.
func appendExemplars[N int64 | float64](b []byte, field int, exemplars []metricdata.Exemplar[N]) []byte {
	for _, e := range exemplars {
		b = appendMessage(b, field, func(b []byte) []byte {
			b = appendTime(b, 2, e.Time)
			b = appendNumber(b, 3, 6, e.Value)
			if len(e.SpanID) > 0 {
				b = appendBytesField(b, 4, e.SpanID)
			}
			if len(e.TraceID) > 0 {
				b = appendBytesField(b, 5, e.TraceID)
			}
			return appendKeyValues(b, 7, e.FilteredAttributes)
		})
	}
	return b
}

// Histogram: data_points 1, aggregation_temporality 2. HistogramDataPoint: start_time_unix_nano 2,
// time_unix_nano 3, count 4, sum 5, bucket_counts 6 (packed fixed64), explicit_bounds 7 (packed double),
// exemplars 8, attributes 9, min 11, max 12.
func appendHistogram[N int64 | float64](b []byte, h metricdata.Histogram[N]) []byte {
	for _, p := range h.DataPoints {
		b = appendMessage(b, 1, func(b []byte) []byte {
			b = appendTime(b, 2, p.StartTime)
			b = appendTime(b, 3, p.Time)
			b = appendFixed64Field(b, 4, p.Count)
			b = appendDoubleField(b, 5, float64(p.Sum))
			if len(p.BucketCounts) > 0 {
				b = appendMessage(b, 6, func(b []byte) []byte {
					for _, c := range p.BucketCounts {
						b = binary.LittleEndian.AppendUint64(b, c)
					}
					return b
				})
			}
			if len(p.Bounds) > 0 {
				b = appendMessage(b, 7, func(b []byte) []byte {
					for _, x := range p.Bounds {
						b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
					}
					return b
				})
			}
			b = appendExemplars(b, 8, p.Exemplars)
			b = appendKeyValues(b, 9, p.Attributes.ToSlice())
			if v, ok := p.Min.Value(); ok {
				b = appendDoubleField(b, 11, float64(v))
			}
			if v, ok := p.Max.Value(); ok {
				b = appendDoubleField(b, 12, float64(v))
			}
			return b
		})
	}
	return appendUintField(b, 2, otlpTemporality(h.Temporality))
}

// ExponentialHistogram: data_points 1, aggregation_temporality 2. Its data point: attributes 1,
// start_time_unix_nano 2, time_unix_nano 3, count 4, sum 5, scale 6 (sint32), zero_count 7, positive 8,
// negative 9, exemplars 11, min 12, max 13, zero_threshold 14; a Buckets: offset 1 (sint32), bucket_counts 2
// (packed uint64).
func appendExpHistogram[N int64 | float64](b []byte, h metricdata.ExponentialHistogram[N]) []byte {
	buckets := func(b []byte, field int, eb metricdata.ExponentialBucket) []byte {
		return appendMessage(b, field, func(b []byte) []byte {
			b = appendUintField(b, 1, zigzag(eb.Offset))
			if len(eb.Counts) > 0 {
				b = appendMessage(b, 2, func(b []byte) []byte {
					for _, c := range eb.Counts {
						b = binary.AppendUvarint(b, c)
					}
					return b
				})
			}
			return b
		})
	}
	for _, p := range h.DataPoints {
		b = appendMessage(b, 1, func(b []byte) []byte {
			b = appendKeyValues(b, 1, p.Attributes.ToSlice())
			b = appendTime(b, 2, p.StartTime)
			b = appendTime(b, 3, p.Time)
			b = appendFixed64Field(b, 4, p.Count)
			b = appendDoubleField(b, 5, float64(p.Sum))
			b = appendUintField(b, 6, zigzag(p.Scale))
			if p.ZeroCount != 0 {
				b = appendFixed64Field(b, 7, p.ZeroCount)
			}
			b = buckets(b, 8, p.PositiveBucket)
			b = buckets(b, 9, p.NegativeBucket)
			b = appendExemplars(b, 11, p.Exemplars)
			if v, ok := p.Min.Value(); ok {
				b = appendDoubleField(b, 12, float64(v))
			}
			if v, ok := p.Max.Value(); ok {
				b = appendDoubleField(b, 13, float64(v))
			}
			if p.ZeroThreshold != 0 {
				b = appendDoubleField(b, 14, p.ZeroThreshold)
			}
			return b
		})
	}
	return appendUintField(b, 2, otlpTemporality(h.Temporality))
}

func zigzag(v int32) uint64 { return uint64(uint32(v<<1) ^ uint32(v>>31)) }

// Summary: data_points 1. SummaryDataPoint: start_time_unix_nano 2, time_unix_nano 3, count 4, sum 5,
// quantile_values 6 (quantile 1, value 2), attributes 7.
func appendSummary(b []byte, s metricdata.Summary) []byte {
	for _, p := range s.DataPoints {
		b = appendMessage(b, 1, func(b []byte) []byte {
			b = appendTime(b, 2, p.StartTime)
			b = appendTime(b, 3, p.Time)
			b = appendFixed64Field(b, 4, p.Count)
			b = appendDoubleField(b, 5, p.Sum)
			for _, q := range p.QuantileValues {
				b = appendMessage(b, 6, func(b []byte) []byte {
					b = appendDoubleField(b, 1, q.Quantile)
					return appendDoubleField(b, 2, q.Value)
				})
			}
			return appendKeyValues(b, 7, p.Attributes.ToSlice())
		})
	}
	return b
}
