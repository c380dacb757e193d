package upstream

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/mcp/internal/mcptest"
	"github.com/toolsearch/toolsearch/mcp/internal/seam"
	"github.com/toolsearch/toolsearch/runtime"
)

// fastOptions make failure paths quick enough for tests while keeping their order of magnitude honest.
func fastOptions(progress *syncBuffer) *Options {
	o := &Options{
		// Generous: the machine is shared and -race is slow. Tests of a timeout set their own.
		StartTimeout:  15 * time.Second,
		CallTimeout:   15 * time.Second,
		CloseTimeout:  5 * time.Second,
		RetryDelay:    50 * time.Millisecond,
		MaxRetryDelay: 200 * time.Millisecond,
	}
	if progress != nil {
		o.Progress = progress
	}
	return o
}

// What the tests of both packages share (see mcptest), under the names these tests use.
type syncBuffer = mcptest.SyncBuffer

var (
	requireNPMServers = mcptest.RequireNPMServers
	pids              = mcptest.Pids
	alive             = mcptest.Alive
	requireProc       = mcptest.RequireProc
	rawServer         = mcptest.RawServer
	result            = mcptest.Result
)

// fakeServer is mcptest's in-process server with the dial function of these tests.
type fakeServer struct{ *mcptest.FakeServer }

func newFakeServer(pageSize int) *fakeServer { return &fakeServer{mcptest.NewFakeServer(pageSize)} }

var echo = mcptest.Echo

func (f *fakeServer) dial(ctx context.Context, _ *server) (*dialed, error) {
	transport, err := f.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &dialed{transport: transport}, nil
}

// dialers routes each server name to its own dial function.
func dialers(m map[string]dialFunc) dialFunc {
	return func(ctx context.Context, u *server) (*dialed, error) {
		d, ok := m[u.name]
		if !ok {
			return nil, fmt.Errorf("no test dialer for %q", u.name)
		}
		return d(ctx, u)
	}
}

// inMemoryConfig is a config naming each server; the test dialer ignores everything but the names.
func inMemoryConfig(names ...string) *Config {
	cfg := &Config{Servers: map[string]ServerConfig{}}
	for _, n := range names {
		cfg.Servers[n] = ServerConfig{Command: "in-memory"}
	}
	return cfg
}

// startSource builds a Source over test dialers and closes it when the test ends.
func startSource(t *testing.T, cfg *Config, opts *Options, m map[string]dialFunc) *Source {
	t.Helper()
	src, err := newSource(t.Context(), cfg, opts, dialers(m))
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, src.Close(ctx))
	})
	return src
}

// rawDial connects the client to a rawServer over a pipe, whose writes are bounded like those to a child's stdin.
func rawDial(handle func(method string, id, params json.RawMessage) string) dialFunc {
	return func(_ context.Context, u *server) (*dialed, error) {
		c1, c2 := net.Pipe()
		go rawServer(c2, handle)
		return &dialed{
			transport: &sdk.IOTransport{Reader: c1, Writer: seam.NewBoundedWriter(c1, u.src.opts.callTimeout)},
			stop:      func(time.Time) { c1.Close() },
		}, nil
	}
}

// call runs a tool of the Source's snapshot by safe name.
func call(t *testing.T, src *Source, name, args string) (*resultView, error) {
	t.Helper()
	for _, tool := range src.Tools() {
		if tool.Name == name {
			res, err := tool.Handler.Call(t.Context(), json.RawMessage(args))
			if err != nil {
				return nil, err
			}
			return &resultView{text: contentText(res.Content), details: string(res.Details), isError: res.IsError}, nil
		}
	}
	t.Fatalf("no tool %q in %v", name, names(src))
	return nil, nil
}

type resultView struct {
	text, details string
	isError       bool
}

func names(src *Source) []string {
	var out []string
	for _, tool := range src.Tools() {
		out = append(out, tool.ID())
	}
	return out
}

func contentText(cs []catalog.Content) string {
	var parts []string
	for _, c := range cs {
		parts = append(parts, c.Text)
	}
	return strings.Join(parts, "\n")
}

// newTestRuntime builds a runtime in mode; code mode creates (and Close closes) its own sandbox.
func newTestRuntime(t *testing.T, mode runtime.Mode) *runtime.Runtime {
	t.Helper()
	rt, err := runtime.New(context.Background(), &runtime.Options{Config: runtime.Config{Enabled: true, Mode: mode}})
	require.NoError(t, err)
	require.Equal(t, mode, rt.Mode(), "fallback: %s", rt.FallbackReason())
	t.Cleanup(func() { require.NoError(t, rt.Close(context.Background())) })
	return rt
}
