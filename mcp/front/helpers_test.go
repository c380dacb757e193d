package front

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
	"github.com/toolsearch/toolsearch/mcp/upstream"
)

// fastOptions make failure paths quick enough for tests while keeping their order of magnitude honest.
func fastOptions(progress *syncBuffer) *upstream.Options {
	o := &upstream.Options{
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

func (f *fakeServer) dial(ctx context.Context, _ *target) (*dialed, error) {
	transport, err := f.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &dialed{transport: transport}, nil
}

// target is the server a test dialer is asked to connect, and the call timeout of its Source.
type target struct {
	name        string
	callTimeout time.Duration
}

// dialFunc opens a transport to a test's server; stop, when set, ends what the dial started.
type dialFunc func(ctx context.Context, u *target) (*dialed, error)

type dialed struct {
	transport sdk.Transport
	stop      func(deadline time.Time)
}

// newSource is upstream.New with every server dialed through dial instead of what the config says.
func newSource(ctx context.Context, cfg *upstream.Config, opts *upstream.Options, dial dialFunc) (*upstream.Source, error) {
	callTimeout := upstream.DefaultCallTimeout
	if opts != nil && opts.CallTimeout > 0 {
		callTimeout = opts.CallTimeout
	}
	ctx = seam.WithDialer(ctx, func(ctx context.Context, name string) (*seam.Dialed, error) {
		d, err := dial(ctx, &target{name: name, callTimeout: callTimeout})
		if err != nil || d == nil {
			return nil, err
		}
		return &seam.Dialed{Transport: d.transport, Stop: d.stop}, nil
	})
	return upstream.New(ctx, cfg, opts)
}

// dialConfigured leaves a server to what its config says (a URL, a command).
func dialConfigured(context.Context, *target) (*dialed, error) { return nil, nil }

// dialers routes each server name to its own dial function.
func dialers(m map[string]dialFunc) dialFunc {
	return func(ctx context.Context, u *target) (*dialed, error) {
		d, ok := m[u.name]
		if !ok {
			return nil, fmt.Errorf("no test dialer for %q", u.name)
		}
		return d(ctx, u)
	}
}

// inMemoryConfig is a config naming each server; the test dialer ignores everything but the names.
func inMemoryConfig(names ...string) *upstream.Config {
	cfg := &upstream.Config{Servers: map[string]upstream.ServerConfig{}}
	for _, n := range names {
		cfg.Servers[n] = upstream.ServerConfig{Command: "in-memory"}
	}
	return cfg
}

// startSource builds a Source over test dialers and closes it when the test ends.
func startSource(t *testing.T, cfg *upstream.Config, opts *upstream.Options, m map[string]dialFunc) *upstream.Source {
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
	return func(_ context.Context, u *target) (*dialed, error) {
		c1, c2 := net.Pipe()
		go rawServer(c2, handle)
		return &dialed{
			transport: &sdk.IOTransport{Reader: c1, Writer: seam.NewBoundedWriter(c1, u.callTimeout)},
			stop:      func(time.Time) { c1.Close() },
		}, nil
	}
}

// call runs a tool of the Source's snapshot by safe name.
func call(t *testing.T, src *upstream.Source, name, args string) (*resultView, error) {
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

func names(src *upstream.Source) []string {
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
