package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/toolsearch/toolsearch/internal/otelsetup"
	"github.com/toolsearch/toolsearch/mcp/front"
)

// captureContentEnv is the GenAI conventions' opt-in for recording content: with it set to true, spans carry
// tool arguments, results and search queries, which can hold secrets.
const captureContentEnv = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"

// startTelemetry builds the OpenTelemetry providers from the OTEL_* environment and says on stderr where spans
// and metrics go. With nothing set it starts nothing.
func startTelemetry(ctx context.Context, stderr io.Writer, prometheus bool) (*otelsetup.Telemetry, error) {
	tel, err := otelsetup.Setup(ctx, &otelsetup.Options{ServiceVersion: version, Prometheus: prometheus})
	if err != nil {
		return nil, err
	}
	if tel.Traces != "" {
		fmt.Fprintf(stderr, "toolsearch: exporting traces to %s\n", tel.Traces)
	}
	if tel.OTLPMetrics != "" {
		fmt.Fprintf(stderr, "toolsearch: exporting metrics to %s\n", tel.OTLPMetrics)
	}
	return tel, nil
}

// oneShotShutdownTimeout bounds the flush of a one-shot command's spans and metrics at exit: a collector that is
// down costs the command at most this long, never a hang. A variable, for the test of a collector that never
// answers.
var oneShotShutdownTimeout = 5 * time.Second

// telemetryKey is the context key of a one-shot command's providers.
type telemetryKey struct{}

// providers are the tracer and meter providers a command hands to the runtime and the Source.
type providers struct {
	tp trace.TracerProvider
	mp metric.MeterProvider
}

// providersFrom returns the providers traced put into ctx: no-ops when the command was not wrapped (a test
// driving one function), so that nothing reaches the process-wide providers.
func providersFrom(ctx context.Context) providers {
	if p, ok := ctx.Value(telemetryKey{}).(providers); ok {
		return p
	}
	return providers{tracenoop.NewTracerProvider(), metricnoop.NewMeterProvider()}
}

// traced wraps a one-shot command (run, search, describe, call) so that it exports spans and metrics as mcp serve
// does, from the same OTEL_* environment: the providers go to the command through its context, its work joins
// the trace of TRACEPARENT (and TRACESTATE, BAGGAGE) when the caller set one, as OpenTelemetry's environment
// carriers propose, and what is buffered is flushed before the command returns, within oneShotShutdownTimeout.
// The process-wide providers are left alone, since tests run many commands in one process.
func traced(name string, fn func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int) func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
		tel, err := otelsetup.Setup(ctx, &otelsetup.Options{ServiceVersion: version, KeepGlobals: true})
		if err != nil {
			fmt.Fprintf(stderr, "toolsearch %s: %v\n", name, err)
			return exitFailure
		}
		defer func() {
			ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), oneShotShutdownTimeout)
			defer cancel()
			if err := tel.Shutdown(ctx); err != nil {
				fmt.Fprintf(stderr, "toolsearch %s: exporting telemetry: %v\n", name, err)
			}
		}()
		ctx = context.WithValue(ctx, telemetryKey{}, providers{tel.TracerProvider, tel.MeterProvider})
		ctx = otelsetup.ContextFromEnvironment(ctx, os.Getenv)
		ctx, span := tel.TracerProvider.Tracer(cliInstrumentation).Start(ctx, "toolsearch "+name,
			trace.WithAttributes(attribute.String("toolsearch.command", name)))
		code := fn(ctx, args, stdin, stdout, stderr)
		if span.IsRecording() {
			span.SetAttributes(attribute.Int("process.exit.code", code))
			if code != exitOK {
				span.SetStatus(codes.Error, fmt.Sprintf("exit status %d", code))
			}
		}
		span.End()
		return code
	}
}

// cliInstrumentation is the tracer name of the command's own spans: one per one-shot command, the parent of
// the runtime's run and the MCP servers' requests.
const cliInstrumentation = "github.com/toolsearch/toolsearch/cmd/toolsearch"

func captureContent() bool {
	return strings.EqualFold(strings.TrimSpace(os.Getenv(captureContentEnv)), "true")
}

const statusUsage = `usage: toolsearch mcp status [--url URL] [--token TOKEN] [--json]

Asks a running "toolsearch mcp serve --http" where its upstream servers are (its /readyz) and prints one line
per server: ready, idle (lazy, tools from its cache), starting, retrying or failed, with its tool count and why
it is not ready. Exits 0 when every server is ready, 1 when one is not or the front cannot be reached.

flags:
  --url URL      the front's address: http://HOST:PORT, or its /mcp endpoint (default http://127.0.0.1:8931)
  --token TOKEN  the front's bearer token (default $TOOLSEARCH_MCP_TOKEN)
  --json         print the front's answer as it came
`

// statusTimeout bounds the whole request to the front.
const statusTimeout = 10 * time.Second

// askFront sends one request to a running `mcp serve --http` front: addr is its URL or HOST:PORT (a trailing /mcp
// is dropped), path the endpoint, token its bearer token (else $TOOLSEARCH_MCP_TOKEN). It reads at most limit
// bytes of the answer. On failure it has said why on stderr, as command, and failed is the exit code to return.
func askFront(ctx context.Context, command, method, addr, path, token string, limit int64,
	stderr io.Writer) (resp *http.Response, body []byte, base string, failed int) {
	if token == "" {
		token = os.Getenv(tokenEnv)
	}
	base = strings.TrimSuffix(strings.TrimRight(addr, "/"), "/mcp")
	if !strings.HasPrefix(base, "http://") && !strings.HasPrefix(base, "https://") {
		base = "http://" + base
	}
	ctx, cancel := context.WithTimeout(ctx, statusTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, base+path, nil)
	if err != nil {
		return nil, nil, base, mcpUsageError(stderr, fmt.Sprintf("--url %s: %v", addr, err))
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		fmt.Fprintf(stderr, "toolsearch %s: %s cannot be reached: %v\n", command, base, err)
		return nil, nil, base, exitFailure
	}
	defer resp.Body.Close()
	if body, err = io.ReadAll(io.LimitReader(resp.Body, limit)); err != nil {
		fmt.Fprintf(stderr, "toolsearch %s: reading %s%s: %v\n", command, base, path, err)
		return nil, nil, base, exitFailure
	}
	return resp, body, base, exitOK
}

func runStatus(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mcp status", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	url := fs.String("url", "http://127.0.0.1:"+defaultHTTPPort, "")
	token := fs.String("token", "", "")
	asJSON := fs.Bool("json", false, "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			io.WriteString(stdout, statusUsage)
			return exitOK
		}
		return mcpUsageError(stderr, err.Error())
	}
	if fs.NArg() > 0 {
		return mcpUsageError(stderr, fmt.Sprintf("unexpected argument %q", fs.Arg(0)))
	}
	resp, body, base, failed := askFront(ctx, "mcp status", http.MethodGet, *url, "/readyz", *token, 1<<20, stderr)
	if failed != exitOK {
		return failed
	}
	switch resp.StatusCode {
	case http.StatusOK, http.StatusServiceUnavailable:
	case http.StatusUnauthorized:
		fmt.Fprintf(stderr, "toolsearch mcp status: %s wants its bearer token (--token, or $%s)\n", base, tokenEnv)
		return exitFailure
	default:
		fmt.Fprintf(stderr, "toolsearch mcp status: %s/readyz answered %s (is it a toolsearch mcp serve?)\n", base, resp.Status)
		return exitFailure
	}
	var h front.Health
	if err := json.Unmarshal(body, &h); err != nil {
		fmt.Fprintf(stderr, "toolsearch mcp status: %s/readyz answered something that is not its status: %v\n", base, err)
		return exitFailure
	}
	if *asJSON {
		stdout.Write(body)
	} else {
		printHealth(stdout, base, &h)
	}
	if !h.Ready {
		return exitFailure
	}
	return exitOK
}

func printHealth(w io.Writer, base string, h *front.Health) {
	state := "ready"
	if !h.Ready {
		state = "not ready"
	}
	fmt.Fprintf(w, "%s: %s (%s mode, %d server(s))\n", base, state, h.Mode, len(h.Servers))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, s := range h.Servers {
		line := fmt.Sprintf("  %s\t%s\t%d tool(s)\tsince %s", s.Name, s.State, s.Tools, s.Since.Local().Format(time.DateTime))
		if s.Reason != "" {
			line += "\t" + s.Reason
		}
		if s.NextRetry != nil {
			line += fmt.Sprintf(" (next try %s)", s.NextRetry.Local().Format(time.TimeOnly))
		}
		fmt.Fprintln(tw, line)
	}
	tw.Flush()
}
