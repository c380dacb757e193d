package main

import (
	"context"
	"io"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolsearch/toolsearch/hostfns"
	"github.com/toolsearch/toolsearch/runtime"
)

// holdSandbox makes mcp serve's sandbox wait for the returned release (or its context); calls counts how often
// the factory was asked for a sandbox.
func holdSandbox(t *testing.T) (release func(), calls *atomic.Int32) {
	gate := make(chan struct{})
	calls = &atomic.Int32{}
	old := serveSandbox
	serveSandbox = func(cfg runtime.Config) func(context.Context) (*hostfns.Sandbox, error) {
		real := old(cfg)
		return func(ctx context.Context) (*hostfns.Sandbox, error) {
			calls.Add(1)
			select {
			case <-gate:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return real(ctx)
		}
	}
	released := false
	release = func() {
		if !released {
			released = true
			close(gate)
		}
	}
	t.Cleanup(func() { release(); serveSandbox = old })
	return release, calls
}

// No mode of mcp serve makes initialize wait for the code sandbox: initialize (and tools/list) are answered
// while the compile is held, and in code mode the first tool_search_code runs once it is released. The gate, not
// a clock, is what the assertion rests on.
func TestMCPServeInitializeDoesNotWaitForTheSandbox(t *testing.T) {
	for _, mode := range []string{"code", "tools", "directory", "off"} {
		t.Run(mode, func(t *testing.T) {
			release, calls := holdSandbox(t)
			cfg := upstreamConfig(t, mode)
			sess, took, stderr := serveInProcess(t, nil, "--config", cfg)
			t.Logf("%s mode: initialize answered %s after the command started", mode, took)
			tools, err := sess.ListTools(t.Context(), nil)
			require.NoError(t, err, stderr.String())
			if mode != "code" {
				assert.Zero(t, calls.Load(), "%s mode compiles no sandbox", mode)
				return
			}
			require.Len(t, tools.Tools, 1)
			assert.Equal(t, runtime.ToolSearchCodeName, tools.Tools[0].Name)
			require.Eventually(t, func() bool { return calls.Load() == 1 }, time.Minute, time.Millisecond,
				"the compile starts in the background")

			type result struct {
				text  string
				isErr bool
			}
			done := make(chan result, 1)
			go func() {
				text, isErr := sdkCall(t, sess, runtime.ToolSearchCodeName, map[string]any{"code": "return 6 * 7"})
				done <- result{text, isErr}
			}()
			select {
			case r := <-done:
				t.Fatalf("tool_search_code answered before the sandbox existed: %s", r.text)
			case <-time.After(50 * time.Millisecond): // a chance for a defect to show, not a bound
			}
			release()
			r := <-done
			require.False(t, r.isErr, r.text)
			assert.Contains(t, r.text, `"value":42`)
			assert.NotContains(t, stderr.String(), "code mode is unavailable")
		})
	}
}

// BenchmarkMCPServeInitialize measures how long a client waits from starting `toolsearch mcp serve` (in-process,
// over stdio pipes) to the answer of initialize, in code and tools mode, with the sandbox compiled in the
// background (as shipped) and, for comparison in the same run, waited for as before. The compilation cache is
// warm after the first iteration, as on a user's machine. Its correctness twin is
// TestMCPServeInitializeDoesNotWaitForTheSandbox.
func BenchmarkMCPServeInitialize(b *testing.B) {
	cfg := benchConfig(b)
	for _, bc := range []struct {
		name       string
		mode       string
		background bool
	}{
		{"code/background", "code", true},
		{"code/waiting", "code", false},
		{"tools", "tools", true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			old := serveInBackground
			serveInBackground = bc.background
			b.Cleanup(func() { serveInBackground = old })
			for b.Loop() {
				took := initializeOnce(b, cfg, bc.mode)
				b.ReportMetric(float64(took.Microseconds())/1000, "init-ms")
			}
		})
	}
}

func benchConfig(b *testing.B) string {
	path := b.TempDir() + "/config.json"
	require.NoError(b, os.WriteFile(path, []byte(`{}`), 0o600))
	return path
}

// initializeOnce starts mcp serve, connects a go-sdk client and returns how long initialize took from the start;
// it shuts the command down before returning.
func initializeOnce(b *testing.B, cfg, mode string) time.Duration {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	toServerR, toServerW := io.Pipe()
	toClientR, toClientW := io.Pipe()
	exited := make(chan int, 1)
	began := time.Now()
	go func() {
		exited <- run(ctx, []string{"mcp", "serve", "--config", cfg, "--mode", mode}, toServerR, toClientW, io.Discard)
		toClientW.Close()
	}()
	client := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil)
	sess, err := client.Connect(ctx, &sdk.IOTransport{Reader: toClientR, Writer: toServerW}, nil)
	require.NoError(b, err)
	took := time.Since(began)
	sess.Close()
	cancel()
	<-exited
	return took
}
