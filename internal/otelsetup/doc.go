// Package otelsetup is the one place that holds the OpenTelemetry SDK and its exporters: the toolsearch command
// builds its tracer and meter providers here, from the standard OTEL_* environment variables, and hands them to
// the library packages as the API interfaces they take (runtime.Options, upstream.Options, front.ServerOptions).
// Nothing is exported, and nothing costs anything, unless the environment asks for it; /metrics (Prometheus
// text) is served when the command asks for it.
package otelsetup
