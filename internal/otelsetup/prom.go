package otelsetup

import (
	"bufio"
	"fmt"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// promHandler serves a manual reader's metrics in the Prometheus text format (version 0.0.4): what a scraper
// reads, without the Prometheus client library and its dependencies.
type promHandler struct {
	reader *sdkmetric.ManualReader
}

func (h *promHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	var rm metricdata.ResourceMetrics
	if err := h.reader.Collect(r.Context(), &rm); err != nil {
		http.Error(w, "collecting metrics failed: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	bw := bufio.NewWriter(w)
	writeProm(bw, &rm)
	_ = bw.Flush()
}

// writeProm writes every metric: counters as <name>_total, gauges and non-monotonic sums as gauges, histograms
// as _bucket (cumulative, with le), _sum and _count. Names get the unit's Prometheus suffix (_seconds,
// _bytes); dots become underscores.
func writeProm(w *bufio.Writer, rm *metricdata.ResourceMetrics) {
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			name := promName(m.Name, m.Unit)
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				writeSum(w, name, m.Description, d.IsMonotonic, d.DataPoints)
			case metricdata.Sum[float64]:
				writeSum(w, name, m.Description, d.IsMonotonic, d.DataPoints)
			case metricdata.Gauge[int64]:
				writeHead(w, name, m.Description, "gauge")
				writePoints(w, name, d.DataPoints)
			case metricdata.Gauge[float64]:
				writeHead(w, name, m.Description, "gauge")
				writePoints(w, name, d.DataPoints)
			case metricdata.Histogram[int64]:
				writeHistogram(w, name, m.Description, d.DataPoints)
			case metricdata.Histogram[float64]:
				writeHistogram(w, name, m.Description, d.DataPoints)
			}
		}
	}
}

func writeSum[N int64 | float64](w *bufio.Writer, name, help string, monotonic bool, points []metricdata.DataPoint[N]) {
	if monotonic {
		name += "_total"
		writeHead(w, name, help, "counter")
	} else {
		writeHead(w, name, help, "gauge")
	}
	writePoints(w, name, points)
}

func writePoints[N int64 | float64](w *bufio.Writer, name string, points []metricdata.DataPoint[N]) {
	for _, p := range points {
		fmt.Fprintf(w, "%s%s %s\n", name, labels(p.Attributes, ""), number(float64(p.Value)))
	}
}

func writeHistogram[N int64 | float64](w *bufio.Writer, name, help string, points []metricdata.HistogramDataPoint[N]) {
	writeHead(w, name, help, "histogram")
	for _, p := range points {
		var cumulative uint64
		for i, bound := range p.Bounds {
			cumulative += p.BucketCounts[i]
			fmt.Fprintf(w, "%s_bucket%s %d\n", name, labels(p.Attributes, number(bound)), cumulative)
		}
		fmt.Fprintf(w, "%s_bucket%s %d\n", name, labels(p.Attributes, "+Inf"), p.Count)
		fmt.Fprintf(w, "%s_sum%s %s\n", name, labels(p.Attributes, ""), number(float64(p.Sum)))
		fmt.Fprintf(w, "%s_count%s %d\n", name, labels(p.Attributes, ""), p.Count)
	}
}

func writeHead(w *bufio.Writer, name, help, kind string) {
	if help != "" {
		fmt.Fprintf(w, "# HELP %s %s\n", name, strings.NewReplacer(`\`, `\\`, "\n", `\n`).Replace(help))
	}
	fmt.Fprintf(w, "# TYPE %s %s\n", name, kind)
}

// labels renders a point's attributes, sorted by key, with le last when set.
func labels(set attribute.Set, le string) string {
	kvs := set.ToSlice()
	if len(kvs) == 0 && le == "" {
		return ""
	}
	parts := make([]string, 0, len(kvs)+1)
	for _, kv := range kvs {
		parts = append(parts, promLabel(string(kv.Key))+`="`+escapeValue(kv.Value.Emit())+`"`)
	}
	sort.Strings(parts)
	if le != "" {
		parts = append(parts, `le="`+le+`"`)
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func escapeValue(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s)
}

// promName is a metric name as Prometheus spells it: [a-zA-Z_:][a-zA-Z0-9_:]*, with the unit's suffix.
func promName(name, unit string) string {
	out := sanitize(name, true)
	switch unit {
	case "s":
		out += "_seconds"
	case "By":
		out += "_bytes"
	}
	return out
}

// promLabel is a label name: [a-zA-Z_][a-zA-Z0-9_]*.
func promLabel(key string) string { return sanitize(key, false) }

func sanitize(s string, colon bool) string {
	b := []byte(s)
	for i, c := range b {
		ok := c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || (i > 0 && c >= '0' && c <= '9') || (colon && c == ':')
		if !ok {
			b[i] = '_'
		}
	}
	if len(b) == 0 {
		return "_"
	}
	return string(b)
}

func number(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "+Inf"
	case math.IsInf(f, -1):
		return "-Inf"
	case math.IsNaN(f):
		return "NaN"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}
