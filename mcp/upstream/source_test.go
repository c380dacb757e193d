package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/runtime"
)

func TestToolsListsEveryPage(t *testing.T) {
	f := newFakeServer(2) // 7 tools in pages of 2: four tools/list requests
	for i := range 7 {
		f.AddTool(fmt.Sprintf("tool_%d", i), fmt.Sprintf("Tool number %d.", i), echo(""))
	}
	f.Srv.AddTool(&sdk.Tool{
		Name: "titled.tool", Title: "A Titled Tool", Description: "Has a title and an output schema.",
		InputSchema:  json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"number"}}}`),
	}, echo(""))
	src := startSource(t, inMemoryConfig("fake"), fastOptions(nil), map[string]dialFunc{"fake": f.dial})

	tools := src.Tools()
	require.Len(t, tools, 8)
	byName := map[string]catalog.Tool{}
	for _, tool := range tools {
		assert.Equal(t, catalog.SourceMCP, tool.Source)
		assert.Equal(t, "fake", tool.SourceName)
		assert.False(t, tool.Trusted(), "MCP tools are untrusted")
		byName[tool.Name] = tool
	}
	for i := range 7 {
		assert.Contains(t, byName, fmt.Sprintf("tool_%d", i))
	}
	titled, ok := byName["titled_tool"]
	require.True(t, ok, "the dot is not a safe character: %v", names(src))
	assert.Equal(t, "mcp:fake:titled_tool", titled.ID())
	assert.Equal(t, "A Titled Tool", titled.Label)
	assert.JSONEq(t, `{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`, string(titled.Parameters))
	assert.JSONEq(t, `{"type":"object","properties":{"n":{"type":"number"}}}`, string(titled.OutputSchema))

	// The safe name is ours; the server is called by its own name.
	res, err := call(t, src, "titled_tool", `{"text":"x"}`)
	require.NoError(t, err)
	assert.False(t, res.isError)

	st := src.Status()
	require.Len(t, st, 1)
	assert.Equal(t, StateReady, st[0].State)
	assert.Equal(t, 8, st[0].Tools)
	assert.Equal(t, 1, st[0].Attempts)
}

func TestCallResults(t *testing.T) {
	f := newFakeServer(0)
	f.AddTool("echo", "Echo the text.", echo("echo: "))
	f.AddTool("fail", "Always fails as a tool.", func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "the repository does not exist"}}}, nil
	})
	f.AddTool("protocol_error", "Answers with a JSON-RPC error.", func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return nil, errors.New("invalid cursor")
	})
	f.AddTool("media", "Returns every content kind.", func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{
			&sdk.ImageContent{Data: []byte{1, 2, 3}, MIMEType: "image/png"},
			&sdk.AudioContent{Data: []byte{4}, MIMEType: "audio/wav"},
			&sdk.ResourceLink{URI: "file:///a.txt", Name: "a.txt"},
			&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "mem://x", MIMEType: "text/plain", Text: "inline"}},
			&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "mem://b", Blob: []byte{9}}},
		}}, nil
	})
	src := startSource(t, inMemoryConfig("fake"), fastOptions(nil), map[string]dialFunc{"fake": f.dial})

	res, err := call(t, src, "echo", `{"text":"hi"}`)
	require.NoError(t, err)
	assert.Equal(t, "echo: hi", res.text)
	assert.JSONEq(t, `{"echo":"hi"}`, res.details, "structuredContent becomes Details")
	assert.False(t, res.isError)

	res, err = call(t, src, "fail", `{}`)
	require.NoError(t, err, "a tool failure is a result, not a Go error")
	assert.True(t, res.isError)
	assert.Equal(t, "the repository does not exist", res.text)

	res, err = call(t, src, "protocol_error", `{}`)
	require.NoError(t, err, "a JSON-RPC error from a live server is a failed call the model can correct")
	assert.True(t, res.isError)
	assert.Contains(t, res.text, `"fake"`)
	assert.Contains(t, res.text, "invalid cursor")

	var media *catalog.Result
	for _, tool := range src.Tools() {
		if tool.Name == "media" {
			media, err = tool.Handler.Call(t.Context(), nil)
			require.NoError(t, err)
		}
	}
	require.NotNil(t, media)
	assert.Equal(t, []catalog.Content{
		{Type: "image", Data: "AQID", MIMEType: "image/png"},
		{Type: "audio", Data: "BA==", MIMEType: "audio/wav"},
		{Type: "resource_link", Text: "a.txt file:///a.txt"},
		{Type: "resource", Text: "inline", MIMEType: "text/plain"},
		{Type: "resource", Data: "CQ=="},
	}, media.Content)
}

func TestListChangedRelists(t *testing.T) {
	f := newFakeServer(0)
	f.AddTool("first", "The first tool.", echo(""))
	f.AddTool("doomed", "Removed later.", echo(""))
	progress := &syncBuffer{}
	src := startSource(t, inMemoryConfig("fake"), fastOptions(progress), map[string]dialFunc{"fake": f.dial})
	require.ElementsMatch(t, []string{"mcp:fake:first", "mcp:fake:doomed"}, names(src))
	var doomed catalog.Tool
	for _, tool := range src.Tools() {
		if tool.Name == "doomed" {
			doomed = tool
		}
	}
	require.NotNil(t, doomed.Handler)

	changed := src.Changed()
	f.AddTool("second", "Added while connected.", echo(""))
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("no change notified after tools/list_changed")
	}
	require.Eventually(t, func() bool { return len(src.Tools()) == 3 }, 5*time.Second, 10*time.Millisecond)
	assert.Contains(t, progress.String(), "mcp: fake: tools changed: 3 tool(s)")

	f.Srv.RemoveTools("doomed")
	require.Eventually(t, func() bool { return len(src.Tools()) == 2 }, 5*time.Second, 10*time.Millisecond)
	// A run built before the change still holds the old tool: it fails closed, naming the server.
	err := doomed.Handler.(runtime.Availability).Available()
	require.ErrorIs(t, err, ErrToolGone)
	assert.Contains(t, err.Error(), `mcp server "fake"`)
	_, err = doomed.Handler.Call(t.Context(), nil)
	require.ErrorIs(t, err, ErrToolGone)
}

// A tools/list_changed that changes nothing must not make consumers rebuild: the tools (handlers included) stay
// identical, so catalog fingerprints do too, and no change is signalled. Tools that survive a real change keep
// their handler.
func TestListChangedWithoutAChangeIsQuiet(t *testing.T) {
	f := newFakeServer(0)
	f.AddTool("first", "The first tool.", echo(""))
	progress := &syncBuffer{}
	src := startSource(t, inMemoryConfig("fake"), fastOptions(progress), map[string]dialFunc{"fake": f.dial})
	before := src.Tools()
	catBefore, err := catalog.New(before, nil)
	require.NoError(t, err)

	changed := src.Changed()
	f.AddTool("first", "The first tool.", echo("")) // the same tool again: the server notifies, nothing changed
	f.AddTool("second", "Added later.", echo(""))   // then a real change, relisted after the first
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("no change notified for the real change")
	}
	require.Eventually(t, func() bool { return len(src.Tools()) == 2 }, 5*time.Second, 10*time.Millisecond)
	assert.Equal(t, 1, strings.Count(progress.String(), "mcp: fake: tools changed"), progress.String())

	var first catalog.Tool
	for _, tool := range src.Tools() {
		if tool.Name == "first" {
			first = tool
		}
	}
	assert.Same(t, before[0].Handler, first.Handler, "a tool that did not change keeps its handler")
	catAfter, err := catalog.New([]catalog.Tool{first}, nil)
	require.NoError(t, err)
	assert.Equal(t, catBefore.Fingerprint(), catAfter.Fingerprint())
}

func TestHangingToolTimesOutButServerStays(t *testing.T) {
	f := newFakeServer(0)
	f.AddTool("echo", "Echo.", echo(""))
	f.AddTool("slow", "Never finishes.", func(ctx context.Context, _ *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	var pings atomic.Int32
	f.Srv.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			res, err := next(ctx, method, req)
			if method == "ping" && err == nil {
				pings.Add(1) // answered
			}
			return res, err
		}
	})
	opts := fastOptions(nil)
	opts.CallTimeout = 200 * time.Millisecond
	src := startSource(t, inMemoryConfig("fake"), opts, map[string]dialFunc{"fake": f.dial})

	began := time.Now()
	_, err := call(t, src, "slow", `{}`)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(began), 2*time.Second)
	var se *ServerError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "fake", se.Server)
	assert.Equal(t, "call slow", se.Op)

	// The server still answers pings, so it stays up and its other tools work: wait for the ping the timeout
	// sets off to be answered (the event), not for a time.
	require.Eventually(t, func() bool { return pings.Load() > 0 }, 30*time.Second, 5*time.Millisecond,
		"a call that timed out has the server pinged")
	assert.Equal(t, StateReady, src.Status()[0].State)
	res, err := call(t, src, "echo", `{"text":"still here"}`)
	require.NoError(t, err)
	assert.Equal(t, "still here", res.text)
}

func TestHungServerIsMarkedUnavailableAndRecovers(t *testing.T) {
	hung := newFakeServer(0)
	hung.AddTool("echo", "Echo.", echo("hung: "))
	ok := newFakeServer(0)
	ok.AddTool("echo", "Echo.", echo("ok: "))
	opts := fastOptions(&syncBuffer{})
	opts.CallTimeout = 200 * time.Millisecond
	src := startSource(t, inMemoryConfig("hung", "ok"), opts, map[string]dialFunc{"hung": hung.dial, "ok": ok.dial})
	var hungTool catalog.Tool
	for _, tool := range src.Tools() {
		if tool.SourceName == "hung" {
			hungTool = tool
		}
	}

	hung.Freeze(true)
	_, err := hungTool.Handler.Call(t.Context(), json.RawMessage(`{"text":"x"}`))
	require.ErrorIs(t, err, context.DeadlineExceeded)

	// The timeout makes the Source ping; no answer: the server is down, its tools fail fast and say why.
	// Bounds a correct Source meets however busy the machine: the test waits for the events, not for a time.
	require.Eventually(t, func() bool { return src.Status()[0].State == StateFailed }, time.Minute, 10*time.Millisecond)
	err = hungTool.Handler.(runtime.Availability).Available()
	require.ErrorIs(t, err, ErrUnavailable)
	assert.Contains(t, err.Error(), `mcp server "hung"`)
	assert.Contains(t, err.Error(), "ping")

	// The other server never noticed.
	assert.Equal(t, StateReady, src.Status()[1].State)
	for _, tool := range src.Tools() {
		if tool.SourceName == "ok" {
			res, err := tool.Handler.Call(t.Context(), json.RawMessage(`{"text":"fine"}`))
			require.NoError(t, err)
			assert.Equal(t, "ok: fine", contentText(res.Content))
		}
	}

	// Retries go on (with backoff) until the server answers again.
	hung.Freeze(false)
	require.Eventually(t, func() bool { return src.Status()[0].State == StateReady }, time.Minute, 10*time.Millisecond)
	res, err := hungTool.Handler.Call(t.Context(), json.RawMessage(`{"text":"back"}`))
	require.NoError(t, err, "a tool of an earlier snapshot works again once its server is back")
	assert.Equal(t, "hung: back", contentText(res.Content))
}

// A session that closes — the Source gave up on its server, or is closing — must not wait for the calls in
// flight on it: the SDK's Close does, and a server that stopped answering would hold it until each call's timeout,
// then be reported abandoned by every later Close.
func TestDroppedSessionFailsItsCallsInFlight(t *testing.T) {
	var lists atomic.Int32
	raw := rawDial(func(method string, id, _ json.RawMessage) string {
		switch method {
		case "tools/list":
			if lists.Add(1) == 1 {
				return result(id, `{"tools":[{"name":"slow","inputSchema":{"type":"object"}}]}`)
			}
			return result(id, `{"tools":"nope"}`) // the relisting fails: the Source drops the session
		case "tools/call":
			return `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}` // and the call is never answered
		}
		return ""
	})
	opts := fastOptions(nil)
	opts.CloseTimeout = 2 * time.Second
	src := startSource(t, inMemoryConfig("raw"), opts, map[string]dialFunc{"raw": raw}) // its cleanup checks Close

	began := time.Now()
	_, err := call(t, src, "slow", `{}`)
	require.ErrorIs(t, err, ErrUnavailable)
	assert.Contains(t, err.Error(), `mcp server "raw": call slow:`)
	assert.Less(t, time.Since(began), opts.CloseTimeout, "the call ends with its session, not at its timeout")
}

func TestCloseFailsCallsInFlight(t *testing.T) {
	f := newFakeServer(0)
	entered := make(chan struct{})
	f.AddTool("slow", "Never finishes.", func(ctx context.Context, _ *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		close(entered)
		<-ctx.Done()
		return nil, ctx.Err()
	})
	opts := fastOptions(nil)
	opts.CloseTimeout = 2 * time.Second
	src, err := newSource(t.Context(), inMemoryConfig("fake"), opts, dialers(map[string]dialFunc{"fake": f.dial}))
	require.NoError(t, err)
	slow := src.Tools()[0]
	failed := make(chan error, 1)
	go func() {
		_, err := slow.Handler.Call(context.Background(), nil)
		failed <- err
	}()
	<-entered

	began := time.Now()
	require.NoError(t, src.Close(context.Background()), "a call in flight does not hold its session open")
	err = <-failed
	assert.Less(t, time.Since(began), opts.CloseTimeout)
	require.ErrorIs(t, err, ErrClosed)
	assert.Contains(t, err.Error(), `mcp server "fake": call slow:`)
}

func TestServerHangingAtStartDoesNotBlockOthers(t *testing.T) {
	ok := newFakeServer(0)
	ok.AddTool("echo", "Echo.", echo(""))
	mute := newFakeServer(0)
	mute.Freeze(true)
	opts := fastOptions(&syncBuffer{})
	opts.StartTimeout = 300 * time.Millisecond
	began := time.Now()
	src := startSource(t, inMemoryConfig("mute", "ok"), opts, map[string]dialFunc{"mute": mute.dial, "ok": ok.dial})
	assert.Less(t, time.Since(began), 2*time.Second, "New waits for one bounded attempt, not for success")

	st := src.Status()
	assert.Equal(t, StateFailed, st[0].State)
	require.ErrorIs(t, st[0].Err, context.DeadlineExceeded)
	assert.Contains(t, st[0].Err.Error(), "no answer within 300ms")
	assert.Equal(t, StateReady, st[1].State)
	assert.Equal(t, []string{"mcp:ok:echo"}, names(src))

	// It keeps being retried with backoff.
	require.Eventually(t, func() bool { return mute.DialCount() >= 3 }, 10*time.Second, 10*time.Millisecond)
	mute.Freeze(false)
	require.Eventually(t, func() bool { return len(src.Tools()) == 1 && src.Status()[0].State == StateReady },
		10*time.Second, 10*time.Millisecond)
}

func TestCrashMidCall(t *testing.T) {
	f := newFakeServer(0)
	f.AddTool("echo", "Echo.", echo(""))
	f.AddTool("crash", "Takes the server down.", func(ctx context.Context, _ *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		f.Sever()
		<-ctx.Done()
		return nil, ctx.Err()
	})
	progress := &syncBuffer{}
	src := startSource(t, inMemoryConfig("fake"), fastOptions(progress), map[string]dialFunc{"fake": f.dial})
	changed := src.Changed()

	_, err := call(t, src, "crash", `{}`)
	require.Error(t, err)
	require.ErrorIs(t, err, ErrUnavailable)
	assert.Contains(t, err.Error(), `mcp server "fake"`)

	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("the crash was not notified")
	}
	// Reconnected by a retry; the same tools work again.
	require.Eventually(t, func() bool { return src.Status()[0].State == StateReady && f.DialCount() >= 2 },
		10*time.Second, 10*time.Millisecond)
	res, err := call(t, src, "echo", `{"text":"again"}`)
	require.NoError(t, err)
	assert.Equal(t, "again", res.text)
	assert.Contains(t, progress.String(), "mcp: fake: failed: connection:")
	assert.GreaterOrEqual(t, src.Status()[0].Attempts, 2)
}

// A server that exited is sometimes noticed first by the write of the next request to its stdin (EPIPE), before
// its exit is: that call must fail as unavailable like any other call to a crashed server.
func TestWriteToADeadServerIsUnavailable(t *testing.T) {
	f := newFakeServer(0)
	f.AddTool("echo", "Echo.", echo(""))
	dial := func(ctx context.Context, u *server) (*dialed, error) {
		d, err := f.dial(ctx, u)
		if err != nil {
			return nil, err
		}
		d.transport = &brokenPipeTransport{inner: d.transport}
		return d, nil
	}
	src := startSource(t, inMemoryConfig("dead"), fastOptions(nil), map[string]dialFunc{"dead": dial})

	_, err := call(t, src, "echo", `{}`)
	require.ErrorIs(t, err, ErrUnavailable)
	assert.Contains(t, err.Error(), `mcp server "dead": call echo:`)
}

// brokenPipeTransport fails the write of every tools/call the way a write to the stdin of an exited process does.
type brokenPipeTransport struct{ inner sdk.Transport }

func (t *brokenPipeTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	c, err := t.inner.Connect(ctx)
	return &brokenPipeConn{Connection: c}, err
}

type brokenPipeConn struct{ sdk.Connection }

func (c *brokenPipeConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "tools/call" {
		return &os.PathError{Op: "write", Path: "|1", Err: syscall.EPIPE}
	}
	return c.Connection.Write(ctx, msg)
}

func TestGarbage(t *testing.T) {
	tools := func(body string) func(string, json.RawMessage, json.RawMessage) string {
		return func(method string, id, _ json.RawMessage) string {
			if method == "tools/list" {
				return result(id, body)
			}
			return ""
		}
	}
	ok := newFakeServer(0)
	ok.AddTool("echo", "Echo.", echo(""))
	dials := map[string]dialFunc{
		"ok": ok.dial,
		// Not JSON at all in answer to the handshake.
		"noise": rawDial(func(string, json.RawMessage, json.RawMessage) string { return "Welcome to my server!" }),
		// A listing whose cursor never ends.
		"endless": rawDial(func(method string, id, _ json.RawMessage) string {
			if method == "tools/list" {
				return result(id, `{"tools":[{"name":"t","inputSchema":{"type":"object"}}],"nextCursor":"again"}`)
			}
			return ""
		}),
		// Broken tools next to good ones, and a call answer of the wrong shape.
		"odd": rawDial(func(method string, id, params json.RawMessage) string {
			switch method {
			case "tools/list":
				huge := `{"type":"object","description":"` + strings.Repeat("x", MaxSchemaBytes) + `"}`
				return result(id, `{"tools":[{"name":"","inputSchema":{"type":"object"}},`+
					`{"name":"good","inputSchema":{"type":"object"}},`+
					`{"name":"good","inputSchema":{"type":"object"}},`+
					`{"name":"huge","inputSchema":`+huge+`}]}`)
			case "tools/call":
				return result(id, `{"content":"not a list"}`)
			}
			return ""
		}),
		"wrongtype": rawDial(tools(`{"tools":"nope"}`)),
	}
	progress := &syncBuffer{}
	src := startSource(t, inMemoryConfig("ok", "noise", "endless", "odd", "wrongtype"), fastOptions(progress), dials)

	byName := map[string]Status{}
	for _, st := range src.Status() {
		byName[st.Name] = st
	}
	assert.Equal(t, StateReady, byName["ok"].State)
	assert.Equal(t, StateFailed, byName["noise"].State)
	assert.Equal(t, StateFailed, byName["wrongtype"].State)
	assert.Equal(t, StateFailed, byName["endless"].State)
	assert.Contains(t, byName["endless"].Err.Error(), "pagination does not end")
	assert.Equal(t, StateReady, byName["odd"].State)
	assert.Contains(t, progress.String(), "skipping a tool without a name")
	assert.Contains(t, progress.String(), `skipping a second tool named "good"`)
	assert.Contains(t, progress.String(), `skipping tool "huge"`)

	assert.ElementsMatch(t, []string{"mcp:ok:echo", "mcp:odd:good"}, names(src))
	_, err := call(t, src, "good", `{}`)
	var se *ServerError
	require.ErrorAs(t, err, &se, "an unreadable answer is an infrastructure error naming the server")
	assert.Equal(t, "odd", se.Server)
	res, err := call(t, src, "echo", `{"text":"unaffected"}`)
	require.NoError(t, err)
	assert.Equal(t, "unaffected", res.text)
}

func TestSafeSourceNames(t *testing.T) {
	a, b := newFakeServer(0), newFakeServer(0)
	a.AddTool("x", "A's tool.", echo("a"))
	b.AddTool("x", "B's tool.", echo("b"))
	long := strings.Repeat("very-long-server-name-", 3)
	c := newFakeServer(0)
	c.AddTool(strings.Repeat("t", 80), "A tool with a very long name.", echo("c"))
	src := startSource(t, inMemoryConfig("my server", "my_server", long), fastOptions(nil),
		map[string]dialFunc{"my server": a.dial, "my_server": b.dial, long: c.dial})

	assert.ElementsMatch(t, []string{
		"mcp:my_server:x",
		"mcp:my_server-2:x",
		"mcp:" + long[:catalog.MaxMCPServerName] + ":" + strings.Repeat("t", catalog.MaxMCPToolName-catalog.MaxMCPServerName-2),
	}, names(src))
	// Two servers with one safe name would share ids; the catalog must accept the whole set.
	_, err := catalog.New(src.Tools(), nil)
	require.NoError(t, err)
}

// progressLines is a progress writer that runs see on every line before it is taken, as a reader of the log would
// meet it.
type progressLines func(line string)

func (w progressLines) Write(p []byte) (int, error) {
	for line := range strings.Lines(string(p)) {
		w(line)
	}
	return len(p), nil
}

// A failure is in the log before anything can see it in Status: what reacts to a failed server (mcp serve's
// warning that a selector names no tool) is never written above the line saying that the server failed.
func TestFailedLineComesBeforeTheFailedState(t *testing.T) {
	// Each attempt fails with an error of its own, so the Status read at an attempt's line tells whether that
	// attempt's failure was already published.
	var attempts atomic.Int32
	var failures [64]error
	for i := range failures {
		failures[i] = fmt.Errorf("attempt %d: the program cannot be run", i+1)
	}
	broken := func(context.Context, *server) (*dialed, error) {
		return nil, failures[min(int(attempts.Add(1)), len(failures))-1]
	}
	var src atomic.Pointer[Source]
	type sighting struct {
		attempt int
		status  Status
	}
	seen := make(chan sighting, 1)
	opts := fastOptions(nil)
	opts.Progress = progressLines(func(line string) {
		// The first attempt fails while the Source is being made; a retry's line finds it set.
		if s := src.Load(); s != nil && strings.Contains(line, "mcp: broken: failed:") {
			select {
			case seen <- sighting{int(attempts.Load()), s.Status()[0]}:
			default:
			}
		}
	})
	src.Store(startSource(t, inMemoryConfig("broken"), opts, map[string]dialFunc{"broken": broken}))

	select {
	case at := <-seen:
		require.Less(t, at.attempt, len(failures))
		assert.NotErrorIs(t, at.status.Err, failures[at.attempt-1], "attempt %d's failure was published before its line", at.attempt)
		require.Eventually(t, func() bool {
			return errors.Is(src.Load().Status()[0].Err, failures[at.attempt-1]) ||
				int(attempts.Load()) > at.attempt
		}, time.Minute, 10*time.Millisecond)
	case <-time.After(time.Minute):
		t.Fatal("no failed line")
	}
}
