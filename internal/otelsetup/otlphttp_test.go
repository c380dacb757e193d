package otelsetup

import (
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	colltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

func oneSpan() []byte {
	return encodeTraces(tracetest.SpanStubs{{Name: "s"}}.Snapshots())
}

// Headers of OTEL_EXPORTER_OTLP_HEADERS (percent-decoded; the signal's own win), gzip when asked, and the
// content type and user agent reach the collector.
func TestOTLPClientSendsHeadersAndGzip(t *testing.T) {
	clearEnv(t)
	var mu sync.Mutex
	var got http.Header
	var body []byte
	url := newReceiverServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		got = r.Header.Clone()
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body, _ = io.ReadAll(zr)
	}))
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", url)
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "api-key=secret%20value, x-tenant=a")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "x-tenant=b")
	t.Setenv("OTEL_EXPORTER_OTLP_COMPRESSION", "gzip")
	c, err := newOTLPClient("TRACES", "/v1/traces", "toolsearch/test")
	require.NoError(t, err)
	require.NoError(t, c.export(context.Background(), oneSpan()))
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, "secret value", got.Get("Api-Key"))
	assert.Equal(t, "b", got.Get("X-Tenant"), "the signal's own headers win")
	assert.Equal(t, "gzip", got.Get("Content-Encoding"))
	assert.Equal(t, "application/x-protobuf", got.Get("Content-Type"))
	assert.Equal(t, "toolsearch/test", got.Get("User-Agent"))
	var req colltrace.ExportTraceServiceRequest
	require.NoError(t, proto.Unmarshal(body, &req))
	assert.Equal(t, "s", req.ResourceSpans[0].ScopeSpans[0].Spans[0].Name)
}

// 503 with Retry-After is retried after the pause the collector asked for; a 400 is not retried, and its
// google.rpc.Status message is in the error.
func TestOTLPClientRetriesOnlyWhatMayPass(t *testing.T) {
	clearEnv(t)
	var calls atomic.Int32
	var first, second time.Time
	url := newReceiverServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch calls.Add(1) {
		case 1:
			first = time.Now()
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
		case 2:
			second = time.Now()
		default:
			// google.rpc.Status{code: 3, message: "bad span"}
			w.Header().Set("Content-Type", "application/x-protobuf")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte{0x08, 0x03, 0x12, 0x08, 'b', 'a', 'd', ' ', 's', 'p', 'a', 'n'})
		}
	}))
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", url)
	c, err := newOTLPClient("TRACES", "/v1/traces", "t")
	require.NoError(t, err)
	require.NoError(t, c.export(context.Background(), oneSpan()))
	assert.Equal(t, int32(2), calls.Load())
	assert.GreaterOrEqual(t, second.Sub(first), 900*time.Millisecond, "Retry-After is honored")

	err = c.export(context.Background(), oneSpan())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "400 Bad Request: bad span")
	assert.Equal(t, int32(3), calls.Load(), "a 400 is not retried")
}

// An export ends with its context even while the collector keeps asking to retry, and each attempt ends at
// OTEL_EXPORTER_OTLP_TIMEOUT.
func TestOTLPClientIsBounded(t *testing.T) {
	clearEnv(t)
	release := make(chan struct{})
	url := newReceiverServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // so that the server notices when the client gives up
		if r.Header.Get("X-Hang") != "" {
			select {
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	t.Cleanup(func() { close(release) }) // before the server's Close, which waits for its handlers
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", url)
	c, err := newOTLPClient("TRACES", "/v1/traces", "t")
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	began := time.Now()
	err = c.export(ctx, oneSpan())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "429")
	assert.Less(t, time.Since(began), 5*time.Second)

	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-hang=1")
	t.Setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "200")
	c, err = newOTLPClient("TRACES", "/v1/traces", "t")
	require.NoError(t, err)
	ctx, cancel = context.WithTimeout(context.Background(), 700*time.Millisecond)
	defer cancel()
	began = time.Now()
	require.Error(t, c.export(ctx, oneSpan()))
	assert.Less(t, time.Since(began), 5*time.Second)
}

func TestOTLPClientRefusesBadSettings(t *testing.T) {
	for _, tc := range []struct{ key, value, want string }{
		{"OTEL_EXPORTER_OTLP_ENDPOINT", "localhost:4318", "is not an http:// or https:// URL"},
		{"OTEL_EXPORTER_OTLP_HEADERS", "novalue", `"novalue" is not key=value`},
		{"OTEL_EXPORTER_OTLP_TIMEOUT", "10s", "a positive number of milliseconds"},
		{"OTEL_EXPORTER_OTLP_COMPRESSION", "zstd", "gzip or none"},
		{"OTEL_EXPORTER_OTLP_CERTIFICATE", "/nonexistent/ca.pem", "OTEL_EXPORTER_OTLP_CERTIFICATE"},
		{"OTEL_EXPORTER_OTLP_CLIENT_KEY", "/nonexistent/key.pem", "go together"},
		{"OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE", "sometimes", "cumulative, delta or lowmemory"},
	} {
		t.Run(tc.key, func(t *testing.T) {
			clearEnv(t)
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
			t.Setenv(tc.key, tc.value)
			_, err := Setup(context.Background(), &Options{KeepGlobals: true})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}
