package upstream

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/mcp/internal/seam"
)

// newChildSource starts children of the test binary through the real dial path (New, not a test dialer).
func newChildSource(t *testing.T, servers map[string]ServerConfig, opts *Options) *Source {
	t.Helper()
	src, err := New(t.Context(), &Config{Servers: servers}, opts)
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = src.Close(ctx)
	})
	return src
}

func TestChildProcessLifecycle(t *testing.T) {
	requireProc(t)
	stderr := &syncBuffer{}
	progress := &syncBuffer{}
	opts := fastOptions(progress)
	opts.ServerStderr = stderr
	src, err := New(t.Context(), &Config{Servers: map[string]ServerConfig{"child": childConfig("echo")}}, opts)
	require.NoError(t, err)

	assert.ElementsMatch(t, []string{"mcp:child:echo", "mcp:child:crash"}, names(src))
	res, err := call(t, src, "echo", `{"text":"over stdio"}`)
	require.NoError(t, err)
	assert.Equal(t, "echo: over stdio", res.text)
	assert.Regexp(t, `mcp: child: ready: 2 tool\(s\) in \d`, progress.String())

	pid := pids(stderr.String(), "pid")
	require.Len(t, pid, 1, "stderr is forwarded line by line with the server's name: %q", stderr.String())
	require.True(t, alive(t, pid[0]))

	began := time.Now()
	require.NoError(t, src.Close(context.Background()))
	assert.Less(t, time.Since(began), 3*time.Second, "a well-behaved server exits when its stdin closes")
	assert.False(t, alive(t, pid[0]))
	assert.Empty(t, src.Tools())
	assert.Equal(t, StateClosed, src.Status()[0].State)
}

func TestChildExitsAtStart(t *testing.T) {
	ok := childConfig("echo")
	src := newChildSource(t, map[string]ServerConfig{
		"github":  childConfig("exit"),
		"missing": {Command: "/nonexistent/mcp-server"},
		"ok":      ok,
	}, fastOptions(nil))
	st := src.Status()
	require.Len(t, st, 3)

	assert.Equal(t, StateFailed, st[0].State)
	msg := st[0].Err.Error()
	assert.Contains(t, msg, `mcp server "github": start:`)
	assert.Contains(t, msg, "exit status 2", "how it died")
	assert.Regexp(t, `stderr: .*fatal: GITHUB_TOKEN is not set\)$`, msg, "and what it said last")

	assert.Equal(t, StateFailed, st[1].State)
	assert.ErrorIs(t, st[1].Err, os.ErrNotExist)
	assert.Equal(t, StateReady, st[2].State, "the others start regardless")
	assert.Equal(t, 2, len(src.Tools()))
}

func TestChildCrashesMidCallAndIsRestarted(t *testing.T) {
	requireProc(t)
	stderr := &syncBuffer{}
	opts := fastOptions(nil)
	opts.ServerStderr = stderr
	src := newChildSource(t, map[string]ServerConfig{"db": childConfig("crash")}, opts)

	_, err := call(t, src, "crash", `{}`)
	require.ErrorIs(t, err, ErrUnavailable)
	assert.Contains(t, err.Error(), `mcp server "db": call crash:`)

	require.Eventually(t, func() bool {
		st := src.Status()[0]
		return st.Err != nil && strings.Contains(st.Err.Error(), "exit status 3")
	}, 10*time.Second, 10*time.Millisecond)
	assert.Regexp(t, `stderr: .*panic: the database went away\)$`, src.Status()[0].Err.Error())

	// A new process takes over.
	require.Eventually(t, func() bool { return src.Status()[0].State == StateReady }, 10*time.Second, 10*time.Millisecond)
	res, err := call(t, src, "echo", `{"text":"restarted"}`)
	require.NoError(t, err)
	assert.Equal(t, "crash: restarted", res.text)
	require.Len(t, pids(stderr.String(), "pid"), 2)
	assert.False(t, alive(t, pids(stderr.String(), "pid")[0]))
}

// A server that stops reading its stdin (it hangs) must not hold a call past its timeout, even with a request
// larger than the pipe holds: the SDK does not watch the call's context while it writes.
func TestCallToAServerThatStoppedReadingEndsAtItsTimeout(t *testing.T) {
	requireProc(t)
	stderr := &syncBuffer{}
	opts := fastOptions(nil)
	opts.CallTimeout = 500 * time.Millisecond
	opts.CloseTimeout = time.Second // a deaf server ignores its closed stdin: it gets SIGTERM after half of this
	opts.ServerStderr = stderr
	src := newChildSource(t, map[string]ServerConfig{"deaf": childConfig("deaf")}, opts)
	_, err := call(t, src, "deafen", `{}`)
	require.NoError(t, err)
	var echo catalog.Tool
	for _, tool := range src.Tools() {
		if tool.Name == "echo" {
			echo = tool
		}
	}
	require.NotNil(t, echo.Handler)

	failed := make(chan error, 1)
	go func() {
		_, err := echo.Handler.Call(context.Background(), json.RawMessage(fmt.Sprintf(`{"text":%q}`, strings.Repeat("x", 1<<20))))
		failed <- err
	}()
	select {
	case err = <-failed:
	case <-time.After(10 * opts.CallTimeout):
		t.Fatal("the call outlived its timeout tenfold: its request is stuck in the pipe")
	}
	var se *ServerError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "deaf", se.Server)

	// The session is given up: the process is stopped and another one started.
	require.Eventually(t, func() bool {
		return len(pids(stderr.String(), "pid")) == 2 && src.Status()[0].State == StateReady
	}, 10*time.Second, 10*time.Millisecond)
	assert.False(t, alive(t, pids(stderr.String(), "pid")[0]))
	require.NoError(t, src.Close(context.Background()))
}

// Which fires first when a server stops reading, the call's timer or its write's bound, is up to the scheduler
// (under load the write's often wins). Here the write's bound is far shorter than the call's timeout, so it always
// wins: the session must still be given up and the server reconnected, not left ready with a spent writer that
// fails every later call at once.
func TestAWriteTimingOutBeforeItsCallDropsTheSession(t *testing.T) {
	const writeBound = 100 * time.Millisecond
	var dials, deafened atomic.Int32
	dial := func(_ context.Context, u *server) (*dialed, error) {
		dials.Add(1)
		c1, c2 := net.Pipe() // unbuffered: a write waits for the server to read it
		deaf, gone := make(chan struct{}), make(chan struct{})
		var once, stopped sync.Once
		go rawServer(&stopsReading{Conn: c2, deaf: deaf, gone: gone}, func(method string, id, _ json.RawMessage) string {
			switch method {
			case "tools/list":
				return result(id, `{"tools":[{"name":"deafen","inputSchema":{"type":"object"}},`+
					`{"name":"echo","inputSchema":{"type":"object"}}]}`)
			case "tools/call":
				once.Do(func() { deafened.Add(1); close(deaf) })
				return result(id, `{"content":[{"type":"text","text":"deaf"}]}`)
			}
			return ""
		})
		return &dialed{
			transport: &sdk.IOTransport{Reader: c1, Writer: seam.NewBoundedWriter(c1, writeBound)},
			stop:      func(time.Time) { c1.Close(); stopped.Do(func() { close(gone) }) },
		}, nil
	}
	opts := fastOptions(nil)
	opts.CallTimeout = time.Minute // its timer never fires during this test
	src := startSource(t, inMemoryConfig("deaf"), opts, map[string]dialFunc{"deaf": dial})

	_, err := call(t, src, "deafen", `{}`)
	require.NoError(t, err)
	began := time.Now()
	_, err = call(t, src, "echo", `{}`)
	took := time.Since(began)
	var se *ServerError
	require.ErrorAs(t, err, &se)
	assert.ErrorIs(t, err, os.ErrDeadlineExceeded, "the write gave up, not the call")
	assert.Less(t, took, opts.CallTimeout/2, "the call ended at its write's bound")

	require.Eventually(t, func() bool { return dials.Load() == 2 && src.Status()[0].State == StateReady },
		10*time.Second, 10*time.Millisecond, "the server is reconnected: %+v", src.Status())
	res, err := call(t, src, "echo", `{}`)
	require.NoError(t, err, "the new session answers")
	assert.Equal(t, "deaf", res.text)
}

// stopsReading is a server's end of a pipe that stops reading once deaf is closed, as a hung server does, until
// the client has stopped the connection (gone).
type stopsReading struct {
	net.Conn
	deaf, gone chan struct{}
}

func (s *stopsReading) Read(p []byte) (int, error) {
	select {
	case <-s.deaf:
		<-s.gone
		return 0, io.EOF
	default:
	}
	return s.Conn.Read(p)
}

func TestChildWritesGarbage(t *testing.T) {
	src := newChildSource(t, map[string]ServerConfig{"noisy": childConfig("garbage"), "ok": childConfig("echo")}, fastOptions(nil))
	st := src.Status()
	assert.Equal(t, StateFailed, st[0].State)
	assert.Contains(t, st[0].Err.Error(), `mcp server "noisy"`)
	assert.Equal(t, StateReady, st[1].State)
}

func TestCloseKillsStubbornProcessGroup(t *testing.T) {
	requireProc(t)
	stderr := &syncBuffer{}
	opts := fastOptions(nil)
	opts.ServerStderr = stderr
	opts.CloseTimeout = time.Second
	src, err := New(t.Context(), &Config{Servers: map[string]ServerConfig{"stubborn": childConfig("stubborn")}}, opts)
	require.NoError(t, err)
	require.Equal(t, StateReady, src.Status()[0].State)
	require.Eventually(t, func() bool { return len(pids(stderr.String(), "grandchild")) == 1 }, 5*time.Second, 10*time.Millisecond)
	child, grandchild := pids(stderr.String(), "pid")[0], pids(stderr.String(), "grandchild")[0]
	require.True(t, alive(t, grandchild))

	began := time.Now()
	err = src.Close(context.Background())
	took := time.Since(began)
	require.NoError(t, err, "killing the group is part of a bounded close, not a failure")
	assert.Less(t, took, 1500*time.Millisecond)
	assert.Greater(t, took, 300*time.Millisecond, "it was given the chance to exit by itself first")
	assert.False(t, alive(t, child), "ignores stdin EOF and SIGTERM: killed")
	require.Eventually(t, func() bool { return !alive(t, grandchild) }, time.Second, 10*time.Millisecond,
		"what the server spawned goes with it")
}

// stallingTransport is a client transport whose connection's Close blocks until released: a peer that never
// lets go.
type stallingTransport struct {
	inner   sdk.Transport
	release chan struct{}
}

func (t *stallingTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	c, err := t.inner.Connect(ctx)
	return &stallingConn{Connection: c, release: t.release}, err
}

type stallingConn struct {
	sdk.Connection
	release chan struct{}
}

func (c *stallingConn) Close() error {
	<-c.release
	return c.Connection.Close()
}

func TestCloseIsBoundedByAStalledTransport(t *testing.T) {
	stalled, ok := newFakeServer(0), newFakeServer(0)
	stalled.AddTool("echo", "Echo.", echo(""))
	ok.AddTool("echo", "Echo.", echo(""))
	release := make(chan struct{})
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	stalledDial := func(ctx context.Context, u *server) (*dialed, error) {
		d, err := stalled.dial(ctx, u)
		if err != nil {
			return nil, err
		}
		d.transport = &stallingTransport{inner: d.transport, release: release}
		return d, nil
	}
	opts := fastOptions(nil)
	src, err := newSource(t.Context(), inMemoryConfig("stalled", "ok"), opts, dialers(map[string]dialFunc{"stalled": stalledDial, "ok": ok.dial}))
	require.NoError(t, err)
	require.Len(t, src.Tools(), 2)

	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	began := time.Now()
	err = src.Close(ctx)
	took := time.Since(began)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), "stalled")
	assert.NotContains(t, err.Error(), "ok")
	assert.Less(t, took, 900*time.Millisecond)
	assert.Equal(t, err, src.Close(context.Background()), "Close is idempotent")

	for _, st := range src.Status() {
		assert.Equal(t, StateClosed, st.State, st.Name)
	}
	_, callErr := src.servers[1].sessionFor("echo")
	require.ErrorIs(t, callErr, ErrClosed)

	// Once the peer lets go, nothing is left running (TestMain's goleak check).
	once.Do(func() { close(release) })
}

func TestStreamableHTTPServer(t *testing.T) {
	f := newFakeServer(0)
	f.AddTool("echo", "Echo.", echo("http: "))
	var mu sync.Mutex
	var auth []string
	handler := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return f.Srv }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
		handler.ServeHTTP(w, r)
	}))
	defer ts.Close()

	progress := &syncBuffer{}
	src, err := New(t.Context(), &Config{Servers: map[string]ServerConfig{
		"remote": {URL: ts.URL, Headers: map[string]string{"Authorization": "Bearer secret"}},
	}}, fastOptions(progress))
	require.NoError(t, err)
	require.Equal(t, []string{"mcp:remote:echo"}, names(src), progress.String())

	res, err := call(t, src, "echo", `{"text":"over http"}`)
	require.NoError(t, err)
	assert.Equal(t, "http: over http", res.text)
	assert.JSONEq(t, `{"echo":"over http"}`, res.details)

	// list_changed arrives over the server's stream too.
	changed := src.Changed()
	f.AddTool("added", "Added later.", echo(""))
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("no tools/list_changed over HTTP")
	}
	require.Eventually(t, func() bool { return len(src.Tools()) == 2 }, 10*time.Second, 10*time.Millisecond)

	require.NoError(t, src.Close(context.Background()))
	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, auth)
	for _, a := range auth {
		assert.Equal(t, "Bearer secret", a)
	}
}
