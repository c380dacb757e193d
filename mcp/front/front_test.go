package front

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/mcp/internal/mcptest"
	"github.com/toolsearch/toolsearch/mcp/upstream"
	"github.com/toolsearch/toolsearch/runtime"
)

// legacyProtocol is the newest protocol version with sessions, logging/setLevel and resources/subscribe: what
// the MCP clients in use today speak. The go-sdk client speaks the 2026-07-28 protocol by default; tests that
// depend on the older one ask for it.
const legacyProtocol = "2025-11-25"

// connectHTTP connects a go-sdk client to a streamable HTTP endpoint.
func connectHTTP(t *testing.T, url string, opts *sdk.ClientOptions, version string) *sdk.ClientSession {
	t.Helper()
	client := sdk.NewClient(&sdk.Implementation{Name: "http-client", Version: "1"}, opts)
	sess, err := client.Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: url},
		&sdk.ClientSessionOptions{ProtocolVersion: version})
	require.NoError(t, err)
	t.Cleanup(func() { sess.Close() })
	return sess
}

// connectStdioWith is connectStdio with client options and a protocol version.
func connectStdioWith(t *testing.T, srv *Server, opts *sdk.ClientOptions, version string) *sdk.ClientSession {
	t.Helper()
	toServerR, toServerW := io.Pipe()
	toClientR, toClientW := io.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- srv.Run(context.Background(), toServerR, toClientW)
		toClientW.Close()
	}()
	client := sdk.NewClient(&sdk.Implementation{Name: "test-client", Version: "1"}, opts)
	sess, err := client.Connect(t.Context(), &sdk.IOTransport{Reader: toClientR, Writer: toServerW},
		&sdk.ClientSessionOptions{ProtocolVersion: version})
	require.NoError(t, err)
	t.Cleanup(func() {
		sess.Close()
		select {
		case err := <-served:
			assert.NoError(t, err, "a client that hangs up ends Run cleanly")
		case <-time.After(10 * time.Second):
			t.Error("Run did not return after the client hung up")
		}
	})
	return sess
}

// codeResult runs a tool_search_code script and decodes its result.
func codeResult(t *testing.T, sess *sdk.ClientSession, code string) (value json.RawMessage, tel runtime.CodeTelemetry) {
	t.Helper()
	text, isErr := callText(t, sess, "tool_search_code", map[string]any{"code": code})
	require.False(t, isErr, text)
	var out struct {
		OK        bool
		Value     json.RawMessage
		Telemetry runtime.CodeTelemetry
	}
	require.NoError(t, json.Unmarshal([]byte(text), &out), text)
	require.True(t, out.OK, text)
	return out.Value, out.Telemetry
}

// notes collects what the front sends a client besides answers.
type notes struct {
	mu               sync.Mutex
	progress         []*sdk.ProgressNotificationParams
	logs             []*sdk.LoggingMessageParams
	updated          []string
	resourcesChanged int
}

func (n *notes) options() *sdk.ClientOptions {
	return &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			n.mu.Lock()
			n.progress = append(n.progress, req.Params)
			n.mu.Unlock()
		},
		LoggingMessageHandler: func(_ context.Context, req *sdk.LoggingMessageRequest) {
			n.mu.Lock()
			n.logs = append(n.logs, req.Params)
			n.mu.Unlock()
		},
		ResourceUpdatedHandler: func(_ context.Context, req *sdk.ResourceUpdatedNotificationRequest) {
			n.mu.Lock()
			n.updated = append(n.updated, req.Params.URI)
			n.mu.Unlock()
		},
		ResourceListChangedHandler: func(context.Context, *sdk.ResourceListChangedRequest) {
			n.mu.Lock()
			n.resourcesChanged++
			n.mu.Unlock()
		},
	}
}

func (n *notes) check(f func(n *notes) bool) func() bool {
	return func() bool {
		n.mu.Lock()
		defer n.mu.Unlock()
		return f(n)
	}
}

func TestFrontCodeMode(t *testing.T) {
	var started, cancelled atomic.Int32
	f := newFakeServer(0)
	f.AddTool("create_issue", "Create an issue in a repository's tracker.", echo("created: "))
	f.AddTool("slow_job", "A job that reports its progress.", progressTool(3))
	f.AddTool("hang", "Waits until it is cancelled.", func(ctx context.Context, _ *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		started.Add(1)
		<-ctx.Done()
		cancelled.Add(1)
		return nil, ctx.Err()
	})
	src := startSource(t, inMemoryConfig("github"), fastOptions(nil), map[string]dialFunc{"github": f.dial})
	logDir := t.TempDir()
	logs, err := runtime.NewSessionLogDir(logDir)
	require.NoError(t, err)
	rt, err := runtime.New(context.Background(), &runtime.Options{
		Config:     runtime.Config{Enabled: true, Mode: runtime.ModeCode},
		SessionLog: logs,
	})
	require.NoError(t, err)
	require.Equal(t, runtime.ModeCode, rt.Mode(), rt.FallbackReason())
	t.Cleanup(func() { require.NoError(t, rt.Close(context.Background())) })
	srv := newTestServer(t, rt, src, nil)
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)

	t.Run("each HTTP client has its own run", func(t *testing.T) {
		a := connectHTTP(t, ts.URL, nil, legacyProtocol)
		b := connectHTTP(t, ts.URL, nil, legacyProtocol)
		require.NotEqual(t, a.ID(), b.ID(), "two Mcp-Session-Ids")

		// Both clients at once: each one's counters count only its own searches and calls.
		const rounds = 4
		var wg sync.WaitGroup
		for i, sess := range []*sdk.ClientSession{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for r := 1; r <= rounds; r++ {
					code := `const [h] = await openclaw.tools.search("create an issue", {limit: 1});
await openclaw.tools.call(h.id, {text: "x"});`
					if i == 1 {
						code += `await openclaw.tools.search("another search");`
					}
					_, tel := codeResult(t, sess, code+"return 1;")
					assert.EqualValues(t, r*(1+i), tel.SearchCount, "client %d, round %d", i, r)
					assert.EqualValues(t, r, tel.CallCount, "client %d, round %d", i, r)
				}
			}()
		}
		wg.Wait()

		// A client that goes away has its run closed at once: its session log ends with its own totals.
		b.Close()
		var records []runtime.Record
		require.Eventually(t, func() bool {
			records, _ = runtime.ReadSessionLog(logs.Path("mcp-serve-c2"))
			return len(records) > 0 && records[len(records)-1].Type == runtime.RecordRunEnd
		}, 10*time.Second, 20*time.Millisecond)
		sum := runtime.Summarize(records)
		assert.Equal(t, 2*rounds, sum.Searches)
		assert.Equal(t, 1, sum.Runs)
		require.Len(t, sum.Calls, rounds)
		assert.Equal(t, "tool_search_code:mcp-1:create_issue:1", sum.Calls[0].CallID, "call ids are the client's own, from 1")

		aRecords, err := runtime.ReadSessionLog(logs.Path("mcp-serve-c1"))
		if !errors.Is(err, fs.ErrNotExist) { // records are written in batches, and at the end of the run
			require.NoError(t, err)
		}
		for _, r := range aRecords {
			assert.NotEqual(t, runtime.RecordRunEnd, r.Type, "the client still there keeps its run")
		}
	})

	t.Run("progress of the script's upstream calls", func(t *testing.T) {
		n := &notes{}
		sess := connectHTTP(t, ts.URL, n.options(), "")
		code := `const [h] = await openclaw.tools.search("slow job progress", {limit: 1});
await Promise.all([openclaw.tools.call(h.id, {}), openclaw.tools.call(h.id, {})]);
return h.id;`
		params := &sdk.CallToolParams{Name: "tool_search_code", Arguments: map[string]any{"code": code}}
		params.SetProgressToken("script-1")
		res, err := sess.CallTool(t.Context(), params)
		require.NoError(t, err)
		require.False(t, res.IsError)
		// Notifications travel apart from the result: wait for the last one.
		require.Eventually(t, n.check(func(n *notes) bool { return len(n.progress) > 0 && n.progress[len(n.progress)-1].Progress == 6 }),
			5*time.Second, 10*time.Millisecond)
		n.mu.Lock()
		defer n.mu.Unlock()
		last := 0.0
		for _, p := range n.progress {
			assert.Equal(t, "script-1", p.ProgressToken, "reported on the tool_search_code call")
			assert.Greater(t, p.Progress, last, "progress only ever increases")
			last = p.Progress
		}
		assert.Equal(t, 6.0, n.progress[len(n.progress)-1].Total, "two calls of three steps")
	})

	// cancelsItsUpstreamCall cancels a script blocked on an upstream call that waits for its cancellation, and
	// checks that the cancellation reached the upstream and that the client carries on.
	cancelsItsUpstreamCall := func(t *testing.T, sess *sdk.ClientSession) {
		before := started.Load()
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		done := make(chan error, 1)
		go func() {
			_, err := sess.CallTool(ctx, &sdk.CallToolParams{Name: "tool_search_code", Arguments: map[string]any{
				"code": `await openclaw.tools.call("mcp:github:hang", {}); return "not cancelled";`}})
			done <- err
		}()
		require.Eventually(t, func() bool { return started.Load() == before+1 }, 10*time.Second, 10*time.Millisecond)
		cancel()
		select {
		case err := <-done:
			require.ErrorIs(t, err, context.Canceled)
		case <-time.After(10 * time.Second):
			t.Fatal("the cancelled call did not return")
		}
		require.Eventually(t, func() bool { return cancelled.Load() == before+1 }, 10*time.Second, 10*time.Millisecond,
			"the cancellation reached the upstream call")
		value, _ := codeResult(t, sess, `return 7;`)
		assert.JSONEq(t, `7`, string(value))
	}

	t.Run("cancelling the script cancels its upstream calls", func(t *testing.T) {
		cancelsItsUpstreamCall(t, connectHTTP(t, ts.URL, nil, ""))
	})

	t.Run("cancelling a parked call cancels its upstream calls", func(t *testing.T) {
		// A client of the round-trip protocol that declared elicitation: its calls run parked (roundtrip.go).
		sess := connectStdioWith(t, srv, &sdk.ClientOptions{
			ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
				return &sdk.ElicitResult{Action: "decline"}, nil
			}}, "")
		require.GreaterOrEqual(t, sess.InitializeResult().ProtocolVersion, firstMRTRProtocol)
		cancelsItsUpstreamCall(t, sess)
	})
}

// progressTool reports steps progress notifications to the caller's token, then answers.
func progressTool(steps int) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		token := req.Params.GetProgressToken()
		for i := 1; i <= steps && token != nil; i++ {
			_ = req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{
				ProgressToken: token, Progress: float64(i), Total: float64(steps), Message: fmt.Sprintf("step %d", i)})
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "done"}}}, nil
	}
}

// sessionCounter counts calls per upstream session: a stateful tool, like a browser's page history.
func sessionCounter() sdk.ToolHandler {
	var mu sync.Mutex
	counts := map[*sdk.ServerSession]int{}
	return func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		mu.Lock()
		counts[req.Session]++
		n := counts[req.Session]
		mu.Unlock()
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprint(n)}}}, nil
	}
}

func liveSessions(f *fakeServer) int {
	n := 0
	for range f.Srv.Sessions() {
		n++
	}
	return n
}

func TestFrontPerClientIsolation(t *testing.T) {
	browser, notes := newFakeServer(0), newFakeServer(0)
	browser.AddTool("visit", "Visit a page in the browser.", sessionCounter())
	notes.AddTool("note", "Add a note.", sessionCounter())
	cfg := inMemoryConfig("browser", "notes")
	b := cfg.Servers["browser"]
	b.Isolation = upstream.IsolationPerClient
	cfg.Servers["browser"] = b
	src := startSource(t, cfg, fastOptions(nil), map[string]dialFunc{"browser": browser.dial, "notes": notes.dial})
	rt := newTestRuntime(t, runtime.ModeTools)
	srv := newTestServer(t, rt, src, nil)
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)

	one := connectHTTP(t, ts.URL, nil, legacyProtocol)
	two := connectHTTP(t, ts.URL, nil, "")
	call := func(sess *sdk.ClientSession, id string) string {
		text, isErr := callText(t, sess, "tool_call", map[string]any{"id": id, "args": map[string]any{}})
		require.False(t, isErr, text)
		var env struct {
			Result struct{ Content []struct{ Text string } }
		}
		require.NoError(t, json.Unmarshal([]byte(text), &env), text)
		return env.Result.Content[0].Text
	}
	assert.Equal(t, "1", call(one, "mcp:browser:visit"))
	assert.Equal(t, "2", call(one, "mcp:browser:visit"))
	assert.Equal(t, "1", call(two, "mcp:browser:visit"), "the second client has a browser of its own")
	assert.Equal(t, "3", call(one, "mcp:browser:visit"))
	assert.Equal(t, "1", call(one, "mcp:notes:note"))
	assert.Equal(t, "2", call(two, "mcp:notes:note"), "a shared server is shared")
	assert.Equal(t, 3, browser.DialCount(), "the shared session and one per client")
	assert.Equal(t, 1, notes.DialCount())
	assert.Equal(t, 3, liveSessions(browser))

	two.Close()
	require.Eventually(t, func() bool { return liveSessions(browser) == 2 }, 10*time.Second, 10*time.Millisecond,
		"the session of a client that went away is closed")
	assert.Equal(t, "4", call(one, "mcp:browser:visit"), "the other client's session is untouched")
}

// A client that vanishes without ending its session (it crashed) is gone once it has been idle too long.
func TestFrontIdleHTTPClientIsClosed(t *testing.T) {
	browser := newFakeServer(0)
	browser.AddTool("visit", "Visit a page in the browser.", sessionCounter())
	cfg := inMemoryConfig("browser")
	b := cfg.Servers["browser"]
	b.Isolation = upstream.IsolationPerClient
	cfg.Servers["browser"] = b
	src := startSource(t, cfg, fastOptions(nil), map[string]dialFunc{"browser": browser.dial})
	rt := newTestRuntime(t, runtime.ModeOff)
	srv, err := NewServer(t.Context(), rt, src, &ServerOptions{SessionIdleTimeout: 300 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, srv.Close()) })
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)

	sess := connectHTTP(t, ts.URL, nil, legacyProtocol)
	text, isErr := callText(t, sess, "visit", map[string]any{})
	require.False(t, isErr, text)
	assert.Equal(t, 2, liveSessions(browser))
	// No more requests: the front ends the session and the client's own browser with it.
	require.Eventually(t, func() bool { return liveSessions(browser) == 1 }, 10*time.Second, 20*time.Millisecond)
	srv.mu.Lock()
	assert.Empty(t, srv.clients)
	srv.mu.Unlock()
}

// richServer is an upstream with a tool that has everything MCP lets a tool carry.
func richServer() (*fakeServer, *sdk.Tool) {
	f := newFakeServer(0)
	readOnly := true
	tool := &sdk.Tool{
		Name:         "forecast",
		Title:        "Weather Forecast",
		Description:  "Weather forecast for a city.",
		InputSchema:  json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"temp":{"type":"number"}},"required":["temp"]}`),
		Annotations:  &sdk.ToolAnnotations{ReadOnlyHint: readOnly, OpenWorldHint: &readOnly},
		Meta:         sdk.Meta{"example.com/vendor": "x"},
	}
	f.Srv.AddTool(tool, func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{
			Content: []sdk.Content{
				&sdk.TextContent{Text: `{"temp":21}`},
				&sdk.ImageContent{Data: []byte{0x89, 'P', 'N', 'G'}, MIMEType: "image/png"},
			},
			StructuredContent: map[string]any{"temp": 21},
			Meta:              sdk.Meta{"example.com/trace": "t-1"},
		}, nil
	})
	f.Srv.AddTool(&sdk.Tool{
		Name: "broken", Description: "Breaks its own output contract.",
		InputSchema:  json.RawMessage(`{"type":"object"}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"temp":{"type":"number"}},"required":["temp"]}`),
	}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "hot"}}, StructuredContent: map[string]any{"temp": "hot"}}, nil
	})
	f.Srv.AddTool(&sdk.Tool{Name: "failing", Description: "Fails as a tool.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "no such city"}}, IsError: true}, nil
		})
	return f, tool
}

func TestFrontOffModeIsAProxy(t *testing.T) {
	weather, forecast := richServer()
	src := startSource(t, inMemoryConfig("weather"), fastOptions(nil), map[string]dialFunc{"weather": weather.dial})
	rt := newTestRuntime(t, runtime.ModeOff)
	srv := newTestServer(t, rt, src, nil)
	var listChanged atomic.Int32
	sess := connectStdioWith(t, srv, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { listChanged.Add(1) },
	}, "")

	tools := map[string]*sdk.Tool{}
	for tool, err := range sess.Tools(t.Context(), nil) {
		require.NoError(t, err)
		tools[tool.Name] = tool
	}
	require.Contains(t, tools, "forecast", "every upstream tool, directly")
	assert.Len(t, tools, 3)
	got := tools["forecast"]
	assert.Equal(t, forecast.Title, got.Title)
	assert.Equal(t, forecast.Description, got.Description)
	assert.JSONEq(t, string(forecast.InputSchema.(json.RawMessage)), string(mustJSON(got.InputSchema)))
	assert.JSONEq(t, string(forecast.OutputSchema.(json.RawMessage)), string(mustJSON(got.OutputSchema)))
	assert.Equal(t, forecast.Annotations, got.Annotations)
	assert.Equal(t, "x", got.Meta["example.com/vendor"])

	res, err := sess.CallTool(t.Context(), &sdk.CallToolParams{Name: "forecast", Arguments: map[string]any{"city": "Oslo"}})
	require.NoError(t, err)
	assert.False(t, res.IsError)
	require.Len(t, res.Content, 2, "content blocks as they came")
	assert.Equal(t, `{"temp":21}`, res.Content[0].(*sdk.TextContent).Text)
	img := res.Content[1].(*sdk.ImageContent)
	assert.Equal(t, "image/png", img.MIMEType)
	assert.Equal(t, []byte{0x89, 'P', 'N', 'G'}, img.Data)
	assert.Equal(t, map[string]any{"temp": 21.0}, res.StructuredContent)
	assert.Equal(t, "t-1", res.Meta["example.com/trace"])

	res, err = sess.CallTool(t.Context(), &sdk.CallToolParams{Name: "forecast", Arguments: map[string]any{}})
	require.NoError(t, err)
	assert.True(t, res.IsError, "the pipeline still validates arguments")

	res, err = sess.CallTool(t.Context(), &sdk.CallToolParams{Name: "broken", Arguments: map[string]any{}})
	require.NoError(t, err)
	assert.True(t, res.IsError, "structuredContent is checked against the declared outputSchema")
	assert.Contains(t, res.Content[0].(*sdk.TextContent).Text, "do not match its declared outputSchema")
	assert.Nil(t, res.StructuredContent, "the rejected result is not passed on")

	res, err = sess.CallTool(t.Context(), &sdk.CallToolParams{Name: "failing", Arguments: map[string]any{}})
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Equal(t, "no such city", res.Content[0].(*sdk.TextContent).Text, "a tool's own failure passes as it came")

	// A new upstream tool reaches the client with tools/list_changed.
	weather.AddTool("air_quality", "Air quality index.", echo("aqi "))
	require.Eventually(t, func() bool { return listChanged.Load() > 0 }, 10*time.Second, 10*time.Millisecond)
	assert.Contains(t, listNames(t, sess), "air_quality")
}

func TestFrontToolsModeKeepsItsToolsWhenUpstreamsChange(t *testing.T) {
	weather := newFakeServer(0)
	weather.AddTool("forecast", "Weather forecast for a city.", echo("sunny in "))
	src := startSource(t, inMemoryConfig("weather"), fastOptions(nil), map[string]dialFunc{"weather": weather.dial})
	rt := newTestRuntime(t, runtime.ModeTools)
	srv := newTestServer(t, rt, src, nil)
	var listChanged atomic.Int32
	sess := connectStdioWith(t, srv, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { listChanged.Add(1) },
	}, "")
	before := listNames(t, sess)
	// The control twin: an off-mode front on the same servers, whose list does change. Once its client has heard
	// tools/list_changed for the new tool, a tools-mode front that were to send one for the same change has sent
	// it too (the same upstream change, the same SDK debounce), and a request answered after it comes behind it.
	var controlChanged atomic.Int32
	control := connectStdioWith(t, newTestServer(t, newTestRuntime(t, runtime.ModeOff), src, nil), &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { controlChanged.Add(1) },
	}, "")
	listNames(t, control)

	weather.AddTool("air_quality", "Air quality index and pollen levels for a city.", echo("aqi "))
	require.Eventually(t, func() bool {
		text, _ := callText(t, sess, "tool_search", map[string]any{"query": "pollen"})
		return strings.Contains(text, "mcp:weather:air_quality")
	}, 10*time.Second, 20*time.Millisecond)
	require.Eventually(t, func() bool { return controlChanged.Load() > 0 }, 10*time.Second, 10*time.Millisecond,
		"the control twin hears the change")
	listNames(t, sess) // a round trip behind any notification already sent to this client
	assert.Zero(t, listChanged.Load(), "the tools the model sees did not change")
	assert.Equal(t, before, listNames(t, sess))
}

func TestFrontProgressAndMeta(t *testing.T) {
	var seenMeta atomic.Pointer[sdk.Meta]
	f := newFakeServer(0)
	f.AddTool("slow_job", "A job that reports its progress.", func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		m := req.Params.Meta
		seenMeta.Store(&m)
		return progressTool(3)(ctx, req)
	})
	// The same tool behind streamable HTTP, where notifications and the answer share one event stream.
	remote := newFakeServer(0)
	remote.AddTool("remote_job", "A remote job that reports its progress.", func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		m := req.Params.Meta
		seenMeta.Store(&m)
		return progressTool(3)(ctx, req)
	})
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return remote.Srv }, nil))
	t.Cleanup(ts.Close)
	cfg := inMemoryConfig("jobs")
	cfg.Servers["remote"] = upstream.ServerConfig{URL: ts.URL}
	src := startSource(t, cfg, fastOptions(nil), map[string]dialFunc{"jobs": f.dial, "remote": dialConfigured})
	for _, tc := range []struct {
		mode         runtime.Mode
		server, tool string
		// elicit: the client declares elicitation, so its calls are parked for round-trip approvals
		elicit bool
	}{
		{runtime.ModeTools, "jobs", "slow_job", false}, {runtime.ModeOff, "jobs", "slow_job", false},
		{runtime.ModeTools, "remote", "remote_job", false}, {runtime.ModeOff, "remote", "remote_job", false},
		{runtime.ModeTools, "jobs", "slow_job", true}, {runtime.ModeOff, "remote", "remote_job", true},
	} {
		mode := tc.mode
		name := string(mode) + "/" + tc.server
		if tc.elicit {
			name += "/parked"
		}
		t.Run(name, func(t *testing.T) {
			rt := newTestRuntime(t, mode)
			srv := newTestServer(t, rt, src, nil)
			n := &notes{}
			opts := n.options()
			if tc.elicit {
				opts.ElicitationHandler = func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
					return &sdk.ElicitResult{Action: "decline"}, nil
				}
			}
			sess := connectStdioWith(t, srv, opts, "")
			params := &sdk.CallToolParams{Name: "tool_call", Arguments: map[string]any{"id": "mcp:" + tc.server + ":" + tc.tool, "args": map[string]any{}}}
			if mode == runtime.ModeOff {
				params = &sdk.CallToolParams{Name: tc.tool, Arguments: map[string]any{}}
			}
			params.Meta = sdk.Meta{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}
			params.SetProgressToken(42)
			res, err := sess.CallTool(t.Context(), params)
			require.NoError(t, err)
			require.False(t, res.IsError)
			require.Eventually(t, n.check(func(n *notes) bool { return len(n.progress) == 3 }), 5*time.Second, 10*time.Millisecond)
			n.mu.Lock()
			for i, p := range n.progress {
				assert.EqualValues(t, 42, p.ProgressToken)
				assert.Equal(t, float64(i+1), p.Progress)
				assert.Equal(t, 3.0, p.Total)
				assert.Equal(t, fmt.Sprintf("step %d", i+1), p.Message, "one call: its messages as they came")
			}
			n.mu.Unlock()

			m := *seenMeta.Load()
			assert.Equal(t, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", m["traceparent"], "trace context passes through")
			assert.NotEqual(t, 42, m["progressToken"], "the upstream gets a token of ours")
			assert.NotNil(t, m["progressToken"])
		})
	}
}

func TestFrontForwardsLogsAtTheClientsLevel(t *testing.T) {
	f := newFakeServer(0)
	f.AddTool("chatty", "Logs at three levels.", func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		for _, level := range []sdk.LoggingLevel{"debug", "info", "warning"} {
			_ = req.Session.Log(ctx, &sdk.LoggingMessageParams{Level: level, Logger: "db", Data: string(level) + " message"})
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "ok"}}}, nil
	})
	src := startSource(t, inMemoryConfig("chatty"), fastOptions(nil), map[string]dialFunc{"chatty": f.dial})
	rt := newTestRuntime(t, runtime.ModeTools)
	srv := newTestServer(t, rt, src, nil)
	n := &notes{}
	sess := connectStdioWith(t, srv, n.options(), legacyProtocol)
	require.NoError(t, sess.SetLoggingLevel(t.Context(), &sdk.SetLoggingLevelParams{Level: "info"}))
	text, isErr := callText(t, sess, "tool_call", map[string]any{"id": "mcp:chatty:chatty", "args": map[string]any{}})
	require.False(t, isErr, text)
	// The tool logs debug, info and warning in that order, on one ordered stream: once the warning is here, a
	// debug message that was wrongly forwarded is here too.
	require.Eventually(t, n.check(func(n *notes) bool {
		return len(n.logs) > 0 && n.logs[len(n.logs)-1].Level == "warning"
	}), time.Minute, 10*time.Millisecond)
	n.mu.Lock()
	defer n.mu.Unlock()
	var levels []string
	for _, p := range n.logs {
		levels = append(levels, string(p.Level))
		assert.Equal(t, "chatty/db", p.Logger, "the logger names the server")
	}
	assert.Equal(t, []string{"info", "warning"}, levels, "debug is below the client's level")
}

func TestFrontHTTPAccessControl(t *testing.T) {
	f := newFakeServer(0)
	f.AddTool("forecast", "Weather forecast for a city.", echo("rain in "))
	src := startSource(t, inMemoryConfig("weather"), fastOptions(nil), map[string]dialFunc{"weather": f.dial})
	rt := newTestRuntime(t, runtime.ModeTools)
	srv, err := NewServer(t.Context(), rt, src, &ServerOptions{
		BearerToken: "s3cret-token", AllowedOrigins: []string{"https://app.example.com"}})
	require.NoError(t, err)
	t.Cleanup(func() { srv.Close() })
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)

	post := func(header map[string]string) *http.Response {
		req, err := http.NewRequest(http.MethodPost, ts.URL, strings.NewReader(
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}`))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range header {
			req.Header.Set(k, v)
		}
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		res.Body.Close()
		return res
	}
	res := post(nil)
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode, "no token")
	assert.Equal(t, `Bearer realm="toolsearch"`, res.Header.Get("WWW-Authenticate"))
	assert.Equal(t, http.StatusUnauthorized, post(map[string]string{"Authorization": "Bearer wrong"}).StatusCode)
	assert.Equal(t, http.StatusUnauthorized, post(map[string]string{"Authorization": "Basic s3cret-token"}).StatusCode)
	assert.Equal(t, http.StatusOK, post(map[string]string{"Authorization": "Bearer s3cret-token"}).StatusCode)
	assert.Equal(t, http.StatusOK, post(map[string]string{"Authorization": "bearer s3cret-token"}).StatusCode)

	withToken := func(origin string) int {
		return post(map[string]string{"Authorization": "Bearer s3cret-token", "Origin": origin}).StatusCode
	}
	assert.Equal(t, http.StatusForbidden, withToken("http://evil.example"), "a foreign origin")
	assert.Equal(t, http.StatusForbidden, withToken("null"))
	assert.Equal(t, http.StatusForbidden, post(map[string]string{"Origin": "http://evil.example"}).StatusCode)
	assert.Equal(t, http.StatusOK, withToken("http://localhost:3000"), "a page served from this machine")
	assert.Equal(t, http.StatusOK, withToken("http://127.0.0.1:8080"))
	assert.Equal(t, http.StatusOK, withToken("https://app.example.com"), "an allowed origin")

	// A real client with the token works end to end.
	client := sdk.NewClient(&sdk.Implementation{Name: "c", Version: "1"}, nil)
	sess, err := client.Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: ts.URL,
		HTTPClient: &http.Client{Transport: bearerTransport("s3cret-token")}}, nil)
	require.NoError(t, err)
	defer sess.Close()
	text, isErr := callText(t, sess, "tool_call", map[string]any{"id": "forecast", "args": map[string]any{"text": "Oslo"}})
	require.False(t, isErr, text)
	assert.Contains(t, text, "rain in Oslo")
}

func TestIsLoopbackAddr(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:8931": true, "127.1.2.3:1": true, "[::1]:0": true, "localhost:8931": true, "LOCALHOST:1": true,
		":8931": false, "0.0.0.0:8931": false, "[::]:1": false, "192.168.1.5:8931": false, "example.com:80": false,
		"127.0.0.1": false,
	} {
		assert.Equal(t, want, IsLoopbackAddr(addr), addr)
	}
}

// A server that hangs at start-up holds nobody: initialize is answered at once, the healthy server's tools are
// found, and the answer says which server it could not wait for (never "no tool has these words").
func TestFrontAnswersAtOnceWhileAServerHangs(t *testing.T) {
	ok, mute := newFakeServer(0), newFakeServer(0)
	ok.AddTool("forecast", "Weather forecast for a city.", echo("sunny in "))
	mute.Freeze(true)
	opts := fastOptions(nil)
	opts.StartTimeout = time.Minute // it will hang the whole test long
	started, cancel := context.WithCancel(context.Background())
	cancel() // do not wait for any server
	src, err := newSource(started, inMemoryConfig("mute", "ok"), opts, dialers(map[string]dialFunc{"mute": mute.dial, "ok": ok.dial}))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, src.Close(context.Background())) })
	for _, mode := range []runtime.Mode{runtime.ModeTools, runtime.ModeOff} {
		t.Run(string(mode), func(t *testing.T) {
			rt := newTestRuntime(t, mode)
			srv, err := NewServer(t.Context(), rt, src, &ServerOptions{StartWait: 300 * time.Millisecond})
			require.NoError(t, err)
			t.Cleanup(func() { require.NoError(t, srv.Close()) })
			began := time.Now()
			sess := connectStdioWith(t, srv, nil, legacyProtocol)
			assert.Less(t, time.Since(began), time.Second, "initialize is answered at once")
			if mode == runtime.ModeOff {
				require.Eventually(t, func() bool { return contains(listNames(t, sess), "forecast") },
					10*time.Second, 20*time.Millisecond, "the healthy server's tools are listed")
				text, isErr := callText(t, sess, "mute_tool", map[string]any{})
				assert.True(t, isErr)
				assert.Contains(t, text, `Unknown tool: mute_tool. Server "mute" is still starting`)
			} else {
				require.Eventually(t, func() bool {
					text, _ := callText(t, sess, "tool_search", map[string]any{"query": "weather forecast"})
					return strings.Contains(text, "mcp:ok:forecast") && strings.Contains(text, `Server "mute" is still starting`)
				}, 10*time.Second, 20*time.Millisecond, "the healthy server's tools are found, and the answer names the other")
				text, isErr := callText(t, sess, "tool_call", map[string]any{"id": "mcp:mute:anything"})
				assert.True(t, isErr)
				assert.True(t, strings.HasPrefix(text, `server "mute" is still starting`), text)
			}
			assert.Equal(t, upstream.StateStarting, src.Status()[0].State, "the other one still hangs")
		})
	}
}

// A client that calls the moment it has connected, while its server takes a while to start: every call waits
// for the server and succeeds, in every mode; none is told the tool is missing.
func TestFrontCallsWaitForAStartingServer(t *testing.T) {
	for _, mode := range []runtime.Mode{runtime.ModeTools, runtime.ModeCode, runtime.ModeDirectory, runtime.ModeOff} {
		t.Run(string(mode), func(t *testing.T) {
			slow := newFakeServer(0)
			slow.AddTool("forecast", "Weather forecast for a city.", echo("sunny in "))
			gate := make(chan struct{}) // the server starts when it is closed
			release := sync.OnceFunc(func() { close(gate) })
			gated := func(ctx context.Context, u *target) (*dialed, error) {
				select {
				case <-gate:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
				return slow.dial(ctx, u)
			}
			opts := fastOptions(nil)
			opts.StartTimeout = time.Minute
			started, cancel := context.WithCancel(context.Background())
			cancel()
			src, err := newSource(started, inMemoryConfig("slow"), opts, dialers(map[string]dialFunc{"slow": gated}))
			require.NoError(t, err)
			t.Cleanup(func() { require.NoError(t, src.Close(context.Background())) })
			rt := newTestRuntime(t, mode)
			srv := newTestServer(t, rt, src, nil)
			sess := connectStdioWith(t, srv, nil, legacyProtocol)
			require.Equal(t, upstream.StateStarting, src.Status()[0].State)
			// The server comes up once the call has arrived: a run asks the feed for changes when it starts or
			// waits, and only then is the server released.
			srv.feed.mu.Lock()
			srv.feed.onChanged = release
			srv.feed.mu.Unlock()
			var text string
			var isErr bool
			switch mode {
			case runtime.ModeCode:
				text, isErr = callText(t, sess, "tool_search_code", map[string]any{"code": `
					const h = await openclaw.tools.search("weather forecast");
					return (await openclaw.tools.call(h[0].id, {text: "Oslo"})).result.content[0].text`})
			case runtime.ModeOff:
				release() // off mode waits in the front itself, which follows the Source, not the feed
				text, isErr = callText(t, sess, "forecast", map[string]any{"text": "Oslo"})
			default:
				text, isErr = callText(t, sess, "tool_call", map[string]any{"id": "mcp:slow:forecast", "args": map[string]any{"text": "Oslo"}})
			}
			require.False(t, isErr, text)
			assert.Contains(t, text, "sunny in Oslo")
			assert.NotContains(t, text, "still starting")
		})
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// featureServer is an upstream with resources, a resource template and prompts, whose subscriptions are recorded.
type featureServer struct {
	*fakeServer
	mu     sync.Mutex
	subs   []string // "+uri" and "-uri", in order
	closer func()
}

func newFeatureServer(name string, pageSize int) *featureServer {
	fs := &featureServer{}
	fs.fakeServer = &fakeServer{mcptest.FakeServerOf(sdk.NewServer(&sdk.Implementation{Name: name, Version: "1"}, &sdk.ServerOptions{
		PageSize: pageSize,
		SubscribeHandler: func(_ context.Context, req *sdk.SubscribeRequest) error {
			fs.mu.Lock()
			fs.subs = append(fs.subs, "+"+req.Params.URI)
			fs.mu.Unlock()
			return nil
		},
		UnsubscribeHandler: func(_ context.Context, req *sdk.UnsubscribeRequest) error {
			fs.mu.Lock()
			fs.subs = append(fs.subs, "-"+req.Params.URI)
			fs.mu.Unlock()
			return nil
		},
	}))}
	return fs
}

func (fs *featureServer) subscriptions() []string {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return append([]string(nil), fs.subs...)
}

// addText adds a text resource whose contents name the server.
func (fs *featureServer) addText(uri, text string) {
	fs.Srv.AddResource(&sdk.Resource{URI: uri, Name: uri, MIMEType: "text/plain"},
		func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: text}}}, nil
		})
}

func (fs *featureServer) addPrompt(name, says string) {
	fs.Srv.AddPrompt(&sdk.Prompt{Name: name, Arguments: []*sdk.PromptArgument{{Name: "who", Required: true}}},
		func(_ context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{{Role: "user",
				Content: &sdk.TextContent{Text: says + " " + req.Params.Arguments["who"]}}}}, nil
		})
}

func TestFrontResourcesAndPrompts(t *testing.T) {
	a, b := newFeatureServer("a", 0), newFeatureServer("b", 2) // b lists in pages of two
	a.addText("file:///shared.txt", "from a")
	a.addText("a://only", "only a")
	a.Srv.AddResourceTemplate(&sdk.ResourceTemplate{URITemplate: "a://item/{id}", Name: "item"},
		func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, Text: "item of a: " + req.Params.URI}}}, nil
		})
	b.addText("file:///shared.txt", "from b")
	for i := 1; i <= 5; i++ {
		b.addText(fmt.Sprintf("b://r/%d", i), fmt.Sprintf("b %d", i))
	}
	a.addPrompt("greet", "hello from a to")
	b.addPrompt("greet", "hello from b to")
	a.addPrompt("farewell", "bye")
	src := startSource(t, inMemoryConfig("a", "b"), fastOptions(nil), map[string]dialFunc{"a": a.dial, "b": b.dial})
	rt := newTestRuntime(t, runtime.ModeTools)
	srv, err := NewServer(t.Context(), rt, src, &ServerOptions{PageSize: 3})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, srv.Close()) })

	var resourcesChanged, promptsChanged atomic.Int32
	var updatedMu sync.Mutex
	var updated []string
	sess := connectStdioWith(t, srv, &sdk.ClientOptions{
		ResourceListChangedHandler: func(context.Context, *sdk.ResourceListChangedRequest) { resourcesChanged.Add(1) },
		PromptListChangedHandler:   func(context.Context, *sdk.PromptListChangedRequest) { promptsChanged.Add(1) },
		ResourceUpdatedHandler: func(_ context.Context, req *sdk.ResourceUpdatedNotificationRequest) {
			updatedMu.Lock()
			updated = append(updated, req.Params.URI)
			updatedMu.Unlock()
		},
	}, legacyProtocol)

	resources := func() []string {
		var uris []string
		for r, err := range sess.Resources(t.Context(), nil) {
			require.NoError(t, err)
			uris = append(uris, r.URI)
		}
		sort.Strings(uris)
		return uris
	}
	// Listing is asynchronous to a server's start; wait for both.
	require.Eventually(t, func() bool { return len(resources()) == 8 }, 10*time.Second, 20*time.Millisecond, "%v", resources())
	assert.Equal(t, []string{
		"a://only", "b://r/1", "b://r/2", "b://r/3", "b://r/4", "b://r/5",
		"toolsearch://a/file:///shared.txt", "toolsearch://b/file:///shared.txt",
	}, resources(), "a URI two servers use is namespaced, the others are kept")
	page, err := sess.ListResources(t.Context(), nil)
	require.NoError(t, err)
	assert.Len(t, page.Resources, 3, "the front paginates")
	assert.NotEmpty(t, page.NextCursor)

	read := func(uri string) (string, string) {
		res, err := sess.ReadResource(t.Context(), &sdk.ReadResourceParams{URI: uri})
		require.NoError(t, err, uri)
		require.Len(t, res.Contents, 1)
		return res.Contents[0].Text, res.Contents[0].URI
	}
	text, uri := read("toolsearch://b/file:///shared.txt")
	assert.Equal(t, "from b", text)
	assert.Equal(t, "toolsearch://b/file:///shared.txt", uri, "the contents carry the URI the client asked by")
	text, _ = read("toolsearch://a/file:///shared.txt")
	assert.Equal(t, "from a", text)
	text, _ = read("b://r/4")
	assert.Equal(t, "b 4", text)
	text, _ = read("a://item/7")
	assert.Equal(t, "item of a: a://item/7", text, "through a template")
	text, _ = read("toolsearch://a/a://item/9")
	assert.Equal(t, "item of a: a://item/9", text, "a namespaced URI reaches its server even when nothing lists it")
	_, err = sess.ReadResource(t.Context(), &sdk.ReadResourceParams{URI: "nowhere://x"})
	require.Error(t, err)

	var templates []string
	for tmpl, err := range sess.ResourceTemplates(t.Context(), nil) {
		require.NoError(t, err)
		templates = append(templates, tmpl.URITemplate)
	}
	assert.Equal(t, []string{"a://item/{id}"}, templates)

	var prompts []string
	for p, err := range sess.Prompts(t.Context(), nil) {
		require.NoError(t, err)
		prompts = append(prompts, p.Name)
	}
	sort.Strings(prompts)
	assert.Equal(t, []string{"a__greet", "b__greet", "farewell"}, prompts)
	got, err := sess.GetPrompt(t.Context(), &sdk.GetPromptParams{Name: "b__greet", Arguments: map[string]string{"who": "you"}})
	require.NoError(t, err)
	assert.Equal(t, "hello from b to you", got.Messages[0].Content.(*sdk.TextContent).Text)
	got, err = sess.GetPrompt(t.Context(), &sdk.GetPromptParams{Name: "farewell", Arguments: map[string]string{"who": "all"}})
	require.NoError(t, err)
	assert.Equal(t, "bye all", got.Messages[0].Content.(*sdk.TextContent).Text)

	// Changes upstream reach the client as list_changed.
	a.addText("a://new", "new in a")
	require.Eventually(t, func() bool { return resourcesChanged.Load() > 0 && contains(resources(), "a://new") },
		10*time.Second, 20*time.Millisecond)
	b.addPrompt("late", "late")
	require.Eventually(t, func() bool { return promptsChanged.Load() > 0 }, 10*time.Second, 20*time.Millisecond)

	// Subscriptions go to the server of the resource, by its own URI; updates come back by the client's.
	require.NoError(t, sess.Subscribe(t.Context(), &sdk.SubscribeParams{URI: "a://only"}))
	require.NoError(t, sess.Subscribe(t.Context(), &sdk.SubscribeParams{URI: "toolsearch://b/file:///shared.txt"}))
	// The servers speak the 2026-07-28 protocol, where a subscription is a stream that starts on its own time.
	require.Eventually(t, func() bool { return len(a.subscriptions()) == 1 && len(b.subscriptions()) == 1 },
		10*time.Second, 20*time.Millisecond)
	assert.Equal(t, []string{"+a://only"}, a.subscriptions())
	assert.Equal(t, []string{"+file:///shared.txt"}, b.subscriptions())
	require.NoError(t, a.Srv.ResourceUpdated(t.Context(), &sdk.ResourceUpdatedNotificationParams{URI: "a://only"}))
	require.NoError(t, b.Srv.ResourceUpdated(t.Context(), &sdk.ResourceUpdatedNotificationParams{URI: "file:///shared.txt"}))
	require.Eventually(t, func() bool {
		updatedMu.Lock()
		defer updatedMu.Unlock()
		sort.Strings(updated)
		return assert.ObjectsAreEqual([]string{"a://only", "toolsearch://b/file:///shared.txt"}, updated)
	}, 10*time.Second, 20*time.Millisecond)
	require.NoError(t, sess.Unsubscribe(t.Context(), &sdk.UnsubscribeParams{URI: "a://only"}))
	require.Eventually(t, func() bool { return len(a.subscriptions()) == 2 }, 10*time.Second, 20*time.Millisecond)
	assert.Equal(t, []string{"+a://only", "-a://only"}, a.subscriptions())

	// A client that goes away takes its subscriptions with it.
	sess.Close()
	require.Eventually(t, func() bool { return len(b.subscriptions()) == 2 }, 10*time.Second, 20*time.Millisecond)
	assert.Equal(t, []string{"+file:///shared.txt", "-file:///shared.txt"}, b.subscriptions())
}

func TestFrontSlowServerHoldsNoOneElse(t *testing.T) {
	slow, fast := newFakeServer(0), newFakeServer(0)
	release := make(chan struct{})
	var crawling atomic.Int32
	slow.AddTool("crawl", "Crawl a whole website.", func(ctx context.Context, _ *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		crawling.Add(1)
		select {
		case <-release:
		case <-ctx.Done():
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "crawled"}}}, nil
	})
	fast.AddTool("forecast", "Weather forecast for a city.", echo("sunny in "))
	// The slow server is also slow to start: its first dial takes a while.
	var dials atomic.Int32
	slowDial := func(ctx context.Context, u *target) (*dialed, error) {
		if dials.Add(1) == 1 {
			select {
			case <-time.After(time.Second):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return slow.dial(ctx, u)
	}
	started, cancel := context.WithCancel(context.Background())
	cancel() // answer clients at once
	src, err := newSource(started, inMemoryConfig("slow", "fast"), fastOptions(nil), dialers(map[string]dialFunc{"slow": slowDial, "fast": fast.dial}))
	require.NoError(t, err)
	t.Cleanup(func() {
		close(release)
		require.NoError(t, src.Close(context.Background()))
	})
	rt := newTestRuntime(t, runtime.ModeOff)
	srv := newTestServer(t, rt, src, nil)
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)

	var changed atomic.Int32
	a := connectHTTP(t, ts.URL, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { changed.Add(1) },
	}, legacyProtocol)
	require.Eventually(t, func() bool { return contains(listNames(t, a), "crawl") }, 10*time.Second, 20*time.Millisecond,
		"the slow server's tools arrive when it is ready")
	require.Eventually(t, func() bool { return changed.Load() > 0 }, 10*time.Second, 10*time.Millisecond, "with tools/list_changed")

	crawled := make(chan error, 1)
	go func() {
		_, err := a.CallTool(t.Context(), &sdk.CallToolParams{Name: "crawl", Arguments: map[string]any{}})
		crawled <- err
	}()
	require.Eventually(t, func() bool { return crawling.Load() == 1 }, 10*time.Second, 10*time.Millisecond)
	// While the crawl runs, the same client, a new client, and the other server all answer.
	b := connectHTTP(t, ts.URL, nil, "")
	for _, sess := range []*sdk.ClientSession{a, b} {
		began := time.Now()
		res, err := sess.CallTool(t.Context(), &sdk.CallToolParams{Name: "forecast", Arguments: map[string]any{"text": "Rome"}})
		require.NoError(t, err)
		assert.Equal(t, "sunny in Rome", res.Content[0].(*sdk.TextContent).Text)
		assert.Less(t, time.Since(began), 2*time.Second)
	}
	select {
	case <-crawled:
		t.Fatal("the crawl ended before it was released")
	default:
	}
	release <- struct{}{}
	require.NoError(t, <-crawled)
}

// A per-client server runs one process per client; the process of a client that goes away is stopped, and Close
// stops the rest.
func TestFrontPerClientProcesses(t *testing.T) {
	requireProc(t)
	stderr := &syncBuffer{}
	opts := fastOptions(nil)
	opts.ServerStderr = stderr
	cfg := childConfig("echo")
	cfg.Isolation = upstream.IsolationPerClient
	src, err := upstream.New(t.Context(), &upstream.Config{Servers: map[string]upstream.ServerConfig{"shell": cfg}}, opts)
	require.NoError(t, err)
	rt := newTestRuntime(t, runtime.ModeTools)
	srv := newTestServer(t, rt, src, nil)
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)

	a, b := connectHTTP(t, ts.URL, nil, legacyProtocol), connectHTTP(t, ts.URL, nil, legacyProtocol)
	for _, sess := range []*sdk.ClientSession{a, b} {
		text, isErr := callText(t, sess, "tool_call", map[string]any{"id": "mcp:shell:echo", "args": map[string]any{"text": "hi"}})
		require.False(t, isErr, text)
		assert.Contains(t, text, "echo: hi")
	}
	require.Eventually(t, func() bool { return len(pids(stderr.String(), "pid")) == 3 }, 10*time.Second, 10*time.Millisecond,
		"the shared process and one per client")
	procs := pids(stderr.String(), "pid")
	for _, pid := range procs {
		require.True(t, alive(t, pid))
	}

	b.Close()
	require.Eventually(t, func() bool { return !alive(t, procs[2]) }, 10*time.Second, 10*time.Millisecond,
		"the process of the client that went away is stopped")
	assert.True(t, alive(t, procs[1]), "the other client's process runs on")

	require.NoError(t, srv.Close())
	require.NoError(t, src.Close(context.Background()))
	for _, pid := range procs {
		assert.False(t, alive(t, pid), "pid %d outlived Close", pid)
	}
}

func TestFrontOffModeNamesCollidingTools(t *testing.T) {
	a, b := newFakeServer(0), newFakeServer(0)
	a.AddTool("search", "Search the wiki.", echo("wiki: "))
	a.AddTool("edit", "Edit a wiki page.", echo("edited: "))
	b.AddTool("search", "Search the issue tracker.", echo("issues: "))
	src := startSource(t, inMemoryConfig("wiki", "tracker"), fastOptions(nil), map[string]dialFunc{"wiki": a.dial, "tracker": b.dial})
	rt := newTestRuntime(t, runtime.ModeOff)
	srv := newTestServer(t, rt, src, nil)
	sess := connectStdio(t, srv)
	assert.Equal(t, []string{"edit", "tracker__search", "wiki__search"}, listNames(t, sess),
		"a name two servers share gets its server in front; the others keep theirs")
	for name, want := range map[string]string{"wiki__search": "wiki: go", "tracker__search": "issues: go", "edit": "edited: go"} {
		text, isErr := callText(t, sess, name, map[string]any{"text": "go"})
		require.False(t, isErr, text)
		assert.Equal(t, want, text, name)
	}
}

// bearerTransport sends a bearer token with every request.
type bearerTransport string

func (b bearerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(req)
}
