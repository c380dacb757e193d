package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/mcp/internal/seam"
	"github.com/toolsearch/toolsearch/runtime"
)

// perClientChild is a per-client server of the test binary's echo behavior, capped at maxInstances.
func perClientChild(maxInstances int) ServerConfig {
	cfg := childConfig("echo")
	cfg.Isolation = IsolationPerClient
	cfg.MaxInstances = maxInstances
	return cfg
}

// testClient is one client of a front, as the Source sees it.
func testClient(src *Source) *clientScope {
	return src.newClientScope(seam.Events{
		Log:             func(seam.Server, *sdk.LoggingMessageParams) {},
		ResourceUpdated: func(seam.Server, string) {},
	})
}

// callAs calls a tool of the Source for client c, as the front does for one of its clients' requests.
func callAs(t *testing.T, src *Source, c *clientScope, name, args string) (*catalog.Result, error) {
	t.Helper()
	for _, tool := range src.Tools() {
		if tool.Name == name {
			return tool.Handler.Call(seam.WithCall(t.Context(), &seam.Call{Client: c}), json.RawMessage(args))
		}
	}
	t.Fatalf("no tool %q in %v", name, names(src))
	return nil, nil
}

// requireEcho calls echo for c and requires it to answer from the client's own process.
func requireEcho(t *testing.T, src *Source, c *clientScope, text string) {
	t.Helper()
	res, err := callAs(t, src, c, "echo", fmt.Sprintf(`{"text":%q}`, text))
	require.NoError(t, err)
	require.False(t, res.IsError, "%+v", res.Content)
	require.Equal(t, "echo: "+text, res.Content[0].Text)
}

// waitPids waits until n processes have said their pid on stderr (the line is forwarded by a reader of its own,
// which may lag the handshake) and returns them in the order they started.
func waitPids(t *testing.T, stderr *syncBuffer, n int) []int {
	t.Helper()
	require.Eventually(t, func() bool { return len(pids(stderr.String(), "pid")) >= n }, 10*time.Second, 5*time.Millisecond,
		"%d processes: %q", n, stderr.String())
	procs := pids(stderr.String(), "pid")
	require.Len(t, procs, n)
	return procs
}

// A per-client server capped at 2 runs the instances of two clients; the third client's call fails at once with
// a typed error that names the server and the cap and says what to do. When one of the two goes away, its
// process stops and the third client's retry starts one of its own.
func TestPerClientInstanceCap(t *testing.T) {
	requireProc(t)
	for name, tc := range map[string]struct {
		server   ServerConfig
		optionIs int
	}{
		"config entry": {server: perClientChild(2), optionIs: 50},
		"option":       {server: perClientChild(0), optionIs: 2},
	} {
		t.Run(name, func(t *testing.T) {
			stderr := &syncBuffer{}
			opts := fastOptions(nil)
			opts.ServerStderr = stderr
			opts.MaxClientInstances = tc.optionIs
			src := newChildSource(t, map[string]ServerConfig{"browser": tc.server}, opts)
			a, b, c := testClient(src), testClient(src), testClient(src)
			defer b.Close()
			defer c.Close()

			requireEcho(t, src, a, "a")
			waitPids(t, stderr, 2)
			requireEcho(t, src, b, "b")
			procs := waitPids(t, stderr, 3) // the shared process and one per client

			_, err := callAs(t, src, c, "echo", `{"text":"c"}`)
			require.ErrorIs(t, err, ErrTooManyInstances)
			var serr *ServerError
			require.ErrorAs(t, err, &serr)
			assert.Equal(t, "browser", serr.Server)
			assert.Equal(t, `mcp server "browser": call echo: too many per-client instances: the cap of 2 (its "maxInstances") `+
				`is taken: that many client sessions of it are running or starting; try again once one of those clients `+
				`has gone away, or raise "maxInstances" in the server's config entry`, err.Error())
			assert.Len(t, pids(stderr.String(), "pid"), 3, "the refused client started nothing")
			requireEcho(t, src, a, "a again") // the clients that hold a slot keep it

			a.Close()
			assert.False(t, alive(t, procs[1]), "the process of the client that went away has stopped when Close returns")
			requireEcho(t, src, c, "c")
			waitPids(t, stderr, 4) // the third client has a process of its own now
			assert.True(t, alive(t, procs[2]), "the second client's process runs on")
		})
	}
}

// liveCounter wraps a dial function and counts the connections it made that have not stopped yet, and the most
// there ever were at once.
type liveCounter struct {
	dial        dialFunc
	live, most  atomic.Int32
	dials, fail atomic.Int32
	failFirst   int32 // the first this many dials after the first (the shared session's) fail
}

func (l *liveCounter) counted(ctx context.Context, u *server) (*dialed, error) {
	n := l.dials.Add(1)
	if n > 1 && n <= 1+l.failFirst {
		l.fail.Add(1)
		return nil, errors.New("the browser could not be launched")
	}
	live := l.live.Add(1)
	for most := l.most.Load(); live > most && !l.most.CompareAndSwap(most, live); most = l.most.Load() {
	}
	conn, err := l.dial(ctx, u)
	if err != nil {
		l.live.Add(-1)
		return nil, err
	}
	var once sync.Once
	stop, terminate := conn.stop, conn.terminate
	done := func() { once.Do(func() { l.live.Add(-1) }) }
	conn.stop = func(deadline time.Time) {
		if stop != nil { // an in-memory server has nothing to stop
			stop(deadline)
		}
		done()
	}
	if terminate != nil {
		conn.terminate = func(grace time.Duration) {
			terminate(grace)
			done()
		}
	}
	return conn, nil
}

// Many clients that call a per-client server at once never have more than its cap of processes between them,
// started or starting: those refused retry until one of the others has gone away, and each gets its turn.
func TestPerClientInstanceCapHoldsInABurst(t *testing.T) {
	requireProc(t)
	const capacity, clients = 2, 8
	stderr := &syncBuffer{}
	opts := fastOptions(nil)
	opts.ServerStderr = stderr
	counter := &liveCounter{dial: dialConfigured}
	cfg := &Config{Servers: map[string]ServerConfig{"browser": perClientChild(capacity)}}
	src := startSource(t, cfg, opts, map[string]dialFunc{"browser": counter.counted})
	shared := waitPids(t, stderr, 1)[0]

	var mostAlive atomic.Int32
	sampled := make(chan struct{})
	stopSampling := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			n := int32(0)
			for _, pid := range pids(stderr.String(), "pid") {
				if pid != shared && alive(t, pid) {
					n++
				}
			}
			mostAlive.Store(max(mostAlive.Load(), n))
			select {
			case <-stopSampling:
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()

	var refused atomic.Int32
	start := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := testClient(src)
			defer c.Close()
			<-start
			text := fmt.Sprintf(`{"text":"client %d"}`, i)
			for {
				res, err := callAs(t, src, c, "echo", text)
				if errors.Is(err, ErrTooManyInstances) {
					refused.Add(1)
					time.Sleep(5 * time.Millisecond)
					continue
				}
				if err == nil && res.IsError {
					err = fmt.Errorf("client %d: %+v", i, res.Content)
				}
				errs <- err
				return // and goes away, which frees its slot
			}
		}()
	}
	close(start)
	wg.Wait()
	close(stopSampling)
	<-sampled
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}

	assert.LessOrEqual(t, counter.most.Load(), int32(1+capacity), "the shared process and at most the cap of clients' own")
	assert.LessOrEqual(t, mostAlive.Load(), int32(capacity), "processes seen alive at once besides the shared one")
	assert.Equal(t, int32(1+clients), counter.dials.Load(), "each client started one process, no refused call started one")
	assert.Positive(t, refused.Load(), "%d clients arriving together at a cap of %d: some were refused", clients, capacity)
	assert.Equal(t, int32(1), counter.live.Load(), "every client's process stopped when it went away")
}

// A start that fails gives its slot back: with a cap of 1, the same client tries again (and another client
// after it) instead of being refused for good.
func TestPerClientFailedStartFreesItsSlot(t *testing.T) {
	f := newFakeServer(0)
	f.AddTool("echo", "Echo the text.", echo("echo: "))
	counter := &liveCounter{dial: f.dial, failFirst: 2}
	cfg := &Config{Servers: map[string]ServerConfig{"browser": {Command: "in-memory", Isolation: IsolationPerClient, MaxInstances: 1}}}
	src := startSource(t, cfg, fastOptions(nil), map[string]dialFunc{"browser": counter.counted})
	a, b := testClient(src), testClient(src)
	defer a.Close()
	defer b.Close()

	for range 2 {
		_, err := callAs(t, src, a, "echo", `{"text":"a"}`)
		require.Error(t, err)
		assert.NotErrorIs(t, err, ErrTooManyInstances)
		assert.ErrorContains(t, err, "the browser could not be launched")
	}
	requireEcho(t, src, a, "a")
	_, err := callAs(t, src, b, "echo", `{"text":"b"}`)
	require.ErrorIs(t, err, ErrTooManyInstances, "a's session holds the only slot")
	a.Close()
	requireEcho(t, src, b, "b")
	assert.Equal(t, int32(2), counter.fail.Load())
}

// An instance that crashes gives its slot back as soon as it is gone, without its client going away.
func TestPerClientCrashFreesItsSlot(t *testing.T) {
	requireProc(t)
	stderr := &syncBuffer{}
	opts := fastOptions(nil)
	opts.ServerStderr = stderr
	src := newChildSource(t, map[string]ServerConfig{"browser": perClientChild(1)}, opts)
	a, b := testClient(src), testClient(src)
	defer a.Close()
	defer b.Close()

	requireEcho(t, src, a, "a")
	crashed := waitPids(t, stderr, 2)[1]
	_, err := callAs(t, src, b, "echo", `{"text":"b"}`)
	require.ErrorIs(t, err, ErrTooManyInstances)
	res, err := callAs(t, src, a, "crash", `{}`)
	require.True(t, err != nil || res.IsError, "the crash fails a's call")
	// The slot frees when the Source has seen the session end and stopped what is left of the process, which
	// takes a moment after the call failed: b retries until then.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		_, err = callAs(t, src, b, "echo", `{"text":"b"}`)
		if !errors.Is(err, ErrTooManyInstances) || time.Now().After(deadline) {
			break
		}
	}
	require.NoError(t, err)
	assert.False(t, alive(t, crashed))
	requireEcho(t, src, b, "b")
}

// What the model sees of a refused client: a failed tool_call, at once, whose text says which server is full, its
// cap and what to do, as for any other failure of a server.
func TestPerClientInstanceCapReachesTheModelAsAFailedCall(t *testing.T) {
	f := newFakeServer(0)
	f.AddTool("navigate", "Open a page.", echo("opened: "))
	cfg := &Config{Servers: map[string]ServerConfig{"browser": {Command: "in-memory", Isolation: IsolationPerClient, MaxInstances: 1}}}
	src := startSource(t, cfg, fastOptions(nil), map[string]dialFunc{"browser": f.dial})
	rt := newTestRuntime(t, runtime.ModeTools)
	callFor := func(c *clientScope) *runtime.CallResult {
		ctx := seam.WithCall(t.Context(), &seam.Call{Client: c})
		run, err := rt.StartRun(ctx, runtime.RunRequest{SessionID: fmt.Sprintf("%p", c), Tools: src.Tools()})
		require.NoError(t, err)
		defer run.Close()
		res, err := run.Execute(ctx, runtime.ToolCall{ID: "1", Name: runtime.ToolCallName,
			Arguments: json.RawMessage(`{"id": "mcp:browser:navigate", "args": {"text": "example.com"}}`)})
		require.NoError(t, err)
		return res
	}
	a, b := testClient(src), testClient(src)
	defer a.Close()
	defer b.Close()
	res := callFor(a)
	require.False(t, res.IsError, res.Content)
	assert.Contains(t, res.Content, "opened: example.com")

	res = callFor(b)
	t.Logf("the model sees: %s", res.Content)
	assert.True(t, res.IsError)
	assert.False(t, res.Blocked, "the policy allowed it; the server had no room")
	assert.Contains(t, res.Content, `mcp server "browser": call navigate: too many per-client instances: the cap of 1`)
	assert.Contains(t, res.Content, `raise "maxInstances"`)
}
