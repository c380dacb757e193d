package otelsetup

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// ErrExporterShutdown is returned by an export after Shutdown.
var ErrExporterShutdown = errors.New("otelsetup: the exporter is shut down")

// Bounds of the OTLP/HTTP client.
const (
	defaultExportTimeout = 10 * time.Second // OTEL_EXPORTER_OTLP_TIMEOUT's default
	maxResponseBytes     = 64 << 10         // what is read of a collector's answer
	retryInitial         = 500 * time.Millisecond
	retryMax             = 5 * time.Second
	retryElapsed         = time.Minute // no export is retried for longer, whatever its context allows
)

// otlpClient posts OTLP protobuf messages to one signal's endpoint, configured from the OTEL_EXPORTER_OTLP_*
// variables as the OpenTelemetry exporter specification reads them.
type otlpClient struct {
	url     string
	headers http.Header
	timeout time.Duration
	gzip    bool
	http    *http.Client

	mu       sync.Mutex
	shutdown bool
}

// newOTLPClient reads the configuration of signal ("TRACES" or "METRICS", whose default path is path): the
// signal's own variable wins over the general one.
func newOTLPClient(signal, path, userAgent string) (*otlpClient, error) {
	get := func(name string) string {
		if v := strings.TrimSpace(os.Getenv("OTEL_EXPORTER_OTLP_" + signal + "_" + name)); v != "" {
			return v
		}
		return strings.TrimSpace(os.Getenv("OTEL_EXPORTER_OTLP_" + name))
	}
	c := &otlpClient{url: endpoint(signal, path), headers: http.Header{}, timeout: defaultExportTimeout}
	u, err := url.Parse(c.url)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("otelsetup: the OTLP %s endpoint %q is not an http:// or https:// URL", strings.ToLower(signal), c.url)
	}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_" + signal + "_HEADERS"} {
		if err := parseHeaders(os.Getenv(name), c.headers); err != nil {
			return nil, fmt.Errorf("otelsetup: %s: %w", name, err)
		}
	}
	c.headers.Set("Content-Type", "application/x-protobuf")
	c.headers.Set("User-Agent", userAgent)
	if t := get("TIMEOUT"); t != "" {
		ms, err := strconv.ParseUint(t, 10, 32)
		if err != nil || ms == 0 {
			return nil, fmt.Errorf("otelsetup: OTEL_EXPORTER_OTLP_TIMEOUT=%s: a positive number of milliseconds", t)
		}
		c.timeout = time.Duration(ms) * time.Millisecond
	}
	switch comp := strings.ToLower(get("COMPRESSION")); comp {
	case "", "none":
	case "gzip":
		c.gzip = true
	default:
		return nil, fmt.Errorf("%w: OTEL_EXPORTER_OTLP_COMPRESSION=%s (this build sends gzip or none)", ErrUnsupported, comp)
	}
	tlsConfig, err := clientTLS(get("CERTIFICATE"), get("CLIENT_CERTIFICATE"), get("CLIENT_KEY"))
	if err != nil {
		return nil, err
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	if tlsConfig != nil {
		transport.TLSClientConfig = tlsConfig
	}
	c.http = &http.Client{Transport: transport}
	return c, nil
}

// parseHeaders reads "key1=value1,key2=value2" (values percent-encoded, as the specification says) into h.
func parseHeaders(s string, h http.Header) error {
	for _, entry := range strings.Split(s, ",") {
		if strings.TrimSpace(entry) == "" {
			continue
		}
		k, v, ok := strings.Cut(entry, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return fmt.Errorf("%q is not key=value", entry)
		}
		value, err := url.PathUnescape(strings.TrimSpace(v))
		if err != nil {
			return fmt.Errorf("the value of %q: %w", k, err)
		}
		h.Set(k, value)
	}
	return nil
}

// clientTLS builds the TLS configuration of OTEL_EXPORTER_OTLP_CERTIFICATE (the collector's CA, PEM) and
// OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE/_CLIENT_KEY (mutual TLS); nil when none is set.
func clientTLS(caFile, certFile, keyFile string) (*tls.Config, error) {
	if caFile == "" && certFile == "" && keyFile == "" {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("otelsetup: OTEL_EXPORTER_OTLP_CERTIFICATE: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("otelsetup: OTEL_EXPORTER_OTLP_CERTIFICATE: %s holds no PEM certificate", caFile)
		}
		cfg.RootCAs = pool
	}
	if (certFile == "") != (keyFile == "") {
		return nil, errors.New("otelsetup: OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE and OTEL_EXPORTER_OTLP_CLIENT_KEY go together")
	}
	if certFile != "" {
		pair, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("otelsetup: the OTLP client certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

// export posts one message, retrying what the specification calls retryable (429, 502, 503, 504, and failures
// to connect) with backoff and the collector's Retry-After, within ctx, the timeout of each attempt and
// retryElapsed in all.
func (c *otlpClient) export(ctx context.Context, msg []byte) error {
	c.mu.Lock()
	shut := c.shutdown
	c.mu.Unlock()
	if shut {
		return ErrExporterShutdown
	}
	body := msg
	if c.gzip {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		_, _ = zw.Write(msg)
		_ = zw.Close()
		body = buf.Bytes()
	}
	deadline := time.Now().Add(retryElapsed)
	wait := retryInitial
	for {
		retryAfter, err := c.post(ctx, body)
		if err == nil {
			return nil
		}
		var perm *permanentError
		if errors.As(err, &perm) {
			return err
		}
		pause := wait
		if retryAfter > 0 {
			pause = retryAfter
		}
		if time.Now().Add(pause).After(deadline) {
			return err
		}
		if d, ok := ctx.Deadline(); ok && time.Now().Add(pause).After(d) {
			return err
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w (last attempt: %w)", ctx.Err(), err)
		case <-t.C:
		}
		wait = min(2*wait, retryMax)
	}
}

// permanentError is an answer that retrying cannot change.
type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// post makes one attempt. It returns the collector's Retry-After for a retryable answer.
func (c *otlpClient) post(ctx context.Context, body []byte) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return 0, &permanentError{err}
	}
	req.Header = c.headers.Clone()
	if c.gzip {
		req.Header.Set("Content-Encoding", "gzip")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, fmt.Errorf("otelsetup: OTLP export to %s: %w", c.url, err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		// A partial success (spans or points the collector rejected) is in the body; the SDK has no way to
		// act on it, so it goes unread, as in the upstream exporters.
		return 0, nil
	}
	err = fmt.Errorf("otelsetup: OTLP export to %s: %s%s", c.url, resp.Status, statusMessage(answer))
	switch resp.StatusCode {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		var after time.Duration
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
			after = time.Duration(s) * time.Second
		}
		return after, err
	}
	return 0, &permanentError{err}
}

// statusMessage is ": <message>" of a google.rpc.Status answer (message is field 2), or of a short text one.
func statusMessage(b []byte) string {
	for i := 0; i < len(b); {
		key, n := uvarint(b[i:])
		if n <= 0 {
			break
		}
		i += n
		field, wire := key>>3, key&7
		switch wire {
		case wireVarint:
			_, n = uvarint(b[i:])
			if n <= 0 {
				return textMessage(b)
			}
			i += n
		case wireBytes:
			l, n := uvarint(b[i:])
			if n <= 0 || l > uint64(len(b)-i-n) {
				return textMessage(b)
			}
			i += n
			if field == 2 {
				return ": " + string(b[i:i+int(l)])
			}
			i += int(l)
		default:
			return textMessage(b)
		}
	}
	return textMessage(b)
}

func textMessage(b []byte) string {
	s := strings.TrimSpace(string(b))
	if s == "" || len(s) > 200 || strings.ContainsFunc(s, func(r rune) bool { return r < ' ' || r == 0xFFFD }) {
		return ""
	}
	return ": " + s
}

func uvarint(b []byte) (uint64, int) {
	var v uint64
	for i := 0; i < len(b) && i < 10; i++ {
		v |= uint64(b[i]&0x7f) << (7 * i)
		if b[i] < 0x80 {
			return v, i + 1
		}
	}
	return 0, 0
}

func (c *otlpClient) close() {
	c.mu.Lock()
	c.shutdown = true
	c.mu.Unlock()
	c.http.CloseIdleConnections()
}

// spanExporter is the SDK's SpanExporter over OTLP/HTTP with protobuf encoding.
type spanExporter struct{ c *otlpClient }

func (e *spanExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if len(spans) == 0 {
		return nil
	}
	return e.c.export(ctx, encodeTraces(spans))
}

func (e *spanExporter) Shutdown(ctx context.Context) error {
	e.c.close()
	return ctx.Err()
}

// metricExporter is the SDK's metric Exporter over OTLP/HTTP with protobuf encoding.
type metricExporter struct {
	c           *otlpClient
	temporality sdkmetric.TemporalitySelector
}

// temporalitySelector reads OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE: cumulative (the default), delta
// or lowmemory, as the specification defines them.
func temporalitySelector() (sdkmetric.TemporalitySelector, error) {
	pref := strings.ToLower(strings.TrimSpace(os.Getenv("OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE")))
	switch pref {
	case "", "cumulative":
		return sdkmetric.DefaultTemporalitySelector, nil
	case "delta":
		return func(k sdkmetric.InstrumentKind) metricdata.Temporality {
			switch k {
			case sdkmetric.InstrumentKindUpDownCounter, sdkmetric.InstrumentKindObservableUpDownCounter:
				return metricdata.CumulativeTemporality
			}
			return metricdata.DeltaTemporality
		}, nil
	case "lowmemory":
		return func(k sdkmetric.InstrumentKind) metricdata.Temporality {
			switch k {
			case sdkmetric.InstrumentKindCounter, sdkmetric.InstrumentKindHistogram:
				return metricdata.DeltaTemporality
			}
			return metricdata.CumulativeTemporality
		}, nil
	}
	return nil, fmt.Errorf("%w: OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE=%s (cumulative, delta or lowmemory)", ErrUnsupported, pref)
}

func (e *metricExporter) Temporality(k sdkmetric.InstrumentKind) metricdata.Temporality {
	return e.temporality(k)
}

func (e *metricExporter) Aggregation(k sdkmetric.InstrumentKind) sdkmetric.Aggregation {
	return sdkmetric.DefaultAggregationSelector(k)
}

func (e *metricExporter) Export(ctx context.Context, rm *metricdata.ResourceMetrics) error {
	if rm == nil || len(rm.ScopeMetrics) == 0 {
		return nil
	}
	return e.c.export(ctx, encodeMetrics(rm))
}

// ForceFlush has nothing to do: every Export is sent before it returns.
func (e *metricExporter) ForceFlush(ctx context.Context) error { return ctx.Err() }

func (e *metricExporter) Shutdown(ctx context.Context) error {
	e.c.close()
	return ctx.Err()
}
