package seam

import (
	"context"

	"go.opentelemetry.io/otel/propagation"
)

// Propagator reads and writes W3C trace context and baggage: the front reads a client's from its request's
// _meta, and the upstream side writes its own into the _meta (and the HTTP headers) of its requests. It is fixed
// rather than the global propagator, which is a no-op unless a program installs one: trace context in _meta is
// what the MCP conventions ask for, and it must pass whether or not this process records spans.
var Propagator propagation.TextMapPropagator = propagation.NewCompositeTextMapPropagator(
	propagation.TraceContext{}, propagation.Baggage{})

// MetaCarrier is a request's _meta as a propagation carrier: string values by key.
type MetaCarrier map[string]any

// Get returns the string value of key, or "".
func (m MetaCarrier) Get(key string) string {
	s, _ := m[key].(string)
	return s
}

// Set sets key to value.
func (m MetaCarrier) Set(key, value string) { m[key] = value }

// Keys lists the keys.
func (m MetaCarrier) Keys() []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}

// InjectMeta writes ctx's trace context and baggage into meta (creating it when nil and there is something to
// write) and returns it. Keys it writes replace those of the same name: the client's traceparent, passed
// through, gives way to the span of our own request.
func InjectMeta(ctx context.Context, meta map[string]any) map[string]any {
	out := map[string]any{}
	Propagator.Inject(ctx, MetaCarrier(out))
	if len(out) == 0 {
		return meta
	}
	if meta == nil {
		return out
	}
	for k, v := range out {
		meta[k] = v
	}
	return meta
}
