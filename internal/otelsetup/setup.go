package otelsetup

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// ErrUnsupported is wrapped by Setup when the environment asks for an exporter or protocol this build does not
// have.
var ErrUnsupported = errors.New("otelsetup: unsupported")

// Options configure Setup. A nil *Options means the defaults.
type Options struct {
	// ServiceVersion is service.version of the resource; "" leaves it out.
	ServiceVersion string
	// Prometheus keeps the metrics in memory for Telemetry.Metrics, which serves them as Prometheus text.
	Prometheus bool
	// KeepGlobals leaves the global providers of go.opentelemetry.io/otel as they are; by default Setup installs
	// its own there, for code that takes the globals.
	KeepGlobals bool
}

// Telemetry is what Setup made: the providers to hand to the library, and what serves /metrics.
type Telemetry struct {
	// TracerProvider and MeterProvider are no-ops when nothing was asked for.
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider
	// Metrics serves the metrics as Prometheus text; nil unless Options.Prometheus.
	Metrics http.Handler
	// Traces and OTLPMetrics say where spans and metrics are exported ("" when they are not), for the command's
	// start-up line.
	Traces, OTLPMetrics string

	shutdown []func(context.Context) error
}

// DefaultServiceName is service.name when OTEL_SERVICE_NAME (and OTEL_RESOURCE_ATTRIBUTES) say nothing.
const DefaultServiceName = "toolsearch"

// Setup reads the standard environment variables and builds the providers:
//   - traces are exported over OTLP/HTTP when OTEL_TRACES_EXPORTER is "otlp", or when it is unset and
//     OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set; "none" turns them off;
//   - metrics likewise, with OTEL_METRICS_EXPORTER and OTEL_EXPORTER_OTLP_METRICS_ENDPOINT;
//   - OTEL_EXPORTER_OTLP_PROTOCOL (or the _TRACES_ / _METRICS_ one) must be http/protobuf, the default;
//   - OTEL_SDK_DISABLED=true turns off both exports (Options.Prometheus, asked for explicitly, still serves);
//   - the exporters (our own, see wire.go) read OTEL_EXPORTER_OTLP_{,TRACES_,METRICS_}ENDPOINT, _HEADERS,
//     _TIMEOUT, _COMPRESSION (gzip or none), _CERTIFICATE, _CLIENT_CERTIFICATE and _CLIENT_KEY, and
//     OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE; the tracer provider reads
//     OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG, the batch processor OTEL_BSP_*, the periodic reader
//     OTEL_METRIC_EXPORT_INTERVAL, and the resource OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES.
//
// With nothing set, both providers are no-ops and Setup starts nothing. The providers are also installed as the
// global ones unless Options.KeepGlobals. The caller must call Shutdown, which flushes what is buffered.
func Setup(ctx context.Context, opts *Options) (*Telemetry, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	t := &Telemetry{TracerProvider: tracenoop.NewTracerProvider(), MeterProvider: metricnoop.NewMeterProvider()}
	disabled := strings.EqualFold(strings.TrimSpace(os.Getenv("OTEL_SDK_DISABLED")), "true")
	traces, err := wanted("TRACES", disabled)
	if err != nil {
		return nil, err
	}
	metrics, err := wanted("METRICS", disabled)
	if err != nil {
		return nil, err
	}
	if !traces && !metrics && !o.Prometheus {
		return t, nil
	}
	res, err := newResource(ctx, o.ServiceVersion)
	if err != nil {
		return nil, err
	}
	if traces {
		c, err := newOTLPClient("TRACES", "/v1/traces", userAgent(o.ServiceVersion))
		if err != nil {
			return nil, err
		}
		exp := &spanExporter{c}
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
		t.TracerProvider, t.Traces = tp, endpoint("TRACES", "/v1/traces")
		t.shutdown = append(t.shutdown, tp.Shutdown)
		if !o.KeepGlobals {
			otel.SetTracerProvider(tp)
		}
	}
	var readers []sdkmetric.Option
	if metrics {
		c, err := newOTLPClient("METRICS", "/v1/metrics", userAgent(o.ServiceVersion))
		if err == nil {
			var sel sdkmetric.TemporalitySelector
			if sel, err = temporalitySelector(); err == nil {
				exp := &metricExporter{c: c, temporality: sel}
				readers = append(readers, sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp)))
			}
		}
		if err != nil {
			_ = t.Shutdown(ctx)
			return nil, err
		}
		t.OTLPMetrics = endpoint("METRICS", "/v1/metrics")
	}
	if o.Prometheus {
		reader := sdkmetric.NewManualReader()
		readers = append(readers, sdkmetric.WithReader(reader))
		t.Metrics = &promHandler{reader: reader}
	}
	if len(readers) > 0 {
		mp := sdkmetric.NewMeterProvider(append(readers, sdkmetric.WithResource(res))...)
		t.MeterProvider = mp
		t.shutdown = append(t.shutdown, mp.Shutdown)
		if !o.KeepGlobals {
			otel.SetMeterProvider(mp)
		}
	}
	return t, nil
}

// Shutdown flushes and stops the exporters, bounded by ctx.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	var errs []error
	for _, f := range t.shutdown {
		errs = append(errs, f(ctx))
	}
	t.shutdown = nil
	return errors.Join(errs...)
}

// wanted reads OTEL_<SIGNAL>_EXPORTER and the endpoints: whether the signal is exported over OTLP.
func wanted(signal string, disabled bool) (bool, error) {
	exporter := strings.ToLower(strings.TrimSpace(os.Getenv("OTEL_" + signal + "_EXPORTER")))
	endpointSet := os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_"+signal+"_ENDPOINT") != ""
	var on bool
	switch exporter {
	case "none":
		return false, nil
	case "":
		on = endpointSet
	case "otlp":
		on = true
	default:
		return false, fmt.Errorf("%w: OTEL_%s_EXPORTER=%s (this build exports otlp, or none)", ErrUnsupported, signal, exporter)
	}
	if !on || disabled {
		return false, nil
	}
	protocol := os.Getenv("OTEL_EXPORTER_OTLP_" + signal + "_PROTOCOL")
	if protocol == "" {
		protocol = os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	if p := strings.ToLower(strings.TrimSpace(protocol)); p != "" && p != "http/protobuf" {
		return false, fmt.Errorf("%w: OTEL_EXPORTER_OTLP_PROTOCOL=%s (this build speaks http/protobuf, usually on port 4318)",
			ErrUnsupported, protocol)
	}
	return true, nil
}

// userAgent names the exporter to the collector.
func userAgent(version string) string {
	if version == "" {
		version = "devel"
	}
	return "toolsearch/" + version + " (OTLP/HTTP protobuf)"
}

// endpoint is where a signal goes, as the exporter will read it, for a person.
func endpoint(signal, path string) string {
	if e := os.Getenv("OTEL_EXPORTER_OTLP_" + signal + "_ENDPOINT"); e != "" {
		return e
	}
	if e := os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT"); e != "" {
		return strings.TrimRight(e, "/") + path
	}
	return "http://localhost:4318" + path
}

func newResource(ctx context.Context, version string) (*resource.Resource, error) {
	attrs := []attribute.KeyValue{attribute.String("service.name", DefaultServiceName)}
	if version != "" {
		attrs = append(attrs, attribute.String("service.version", version))
	}
	// The environment comes last, so that OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win.
	res, err := resource.New(ctx, resource.WithAttributes(attrs...), resource.WithTelemetrySDK(), resource.WithFromEnv())
	if err != nil && res == nil {
		return nil, fmt.Errorf("otelsetup: resource: %w", err)
	}
	return res, nil
}

// ContextFromEnvironment returns ctx with the trace context and baggage of the TRACEPARENT, TRACESTATE and
// BAGGAGE environment variables (OpenTelemetry's environment carriers, which a traced parent process sets), so
// that a command's spans join its caller's trace. getenv is os.Getenv outside tests. Without a valid
// TRACEPARENT, ctx is returned as it is.
func ContextFromEnvironment(ctx context.Context, getenv func(string) string) context.Context {
	carrier := propagation.MapCarrier{}
	for _, k := range []string{"traceparent", "tracestate", "baggage"} {
		if v := getenv(strings.ToUpper(k)); v != "" {
			carrier[k] = v
		}
	}
	if len(carrier) == 0 {
		return ctx
	}
	return propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}).Extract(ctx, carrier)
}
