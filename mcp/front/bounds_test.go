package front

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/internal/boundsdoc"
	"github.com/toolsearch/toolsearch/mcp/upstream"
	"github.com/toolsearch/toolsearch/runtime"
)

// TestShippedBounds: the defaults of this package are the ones docs/bounds.md states (and the tests it lists
// trip them).
func TestShippedBounds(t *testing.T) {
	boundsdoc.Check(t, "mcp/front", map[string]any{
		"DefaultMaxSessions":        DefaultMaxSessions,
		"DefaultRequestBodyTimeout": DefaultRequestBodyTimeout,
		"parkedResultTTL":           parkedResultTTL,
		"MaxApprovalArgumentBytes":  MaxApprovalArgumentBytes,
		"MaxPendingRoundTrips":      MaxPendingRoundTrips,
	})
	srv, err := NewServer(t.Context(), newTestRuntime(t, runtime.ModeTools), nil, nil)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, srv.Close()) })
	assert.Equal(t, parkedResultTTL, srv.parkedTTL, "a server with no options keeps finished round-trip results this long")
}

// With no options, the front keeps exactly DefaultMaxSessions sessions: the next one is refused with 503.
func TestDefaultSessionCapIsTripped(t *testing.T) {
	srv, err := NewServer(t.Context(), newTestRuntime(t, runtime.ModeTools), nil, nil)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, srv.Close()) })
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	connect := func() error {
		client := sdk.NewClient(&sdk.Implementation{Name: "c", Version: "1"}, nil)
		sess, err := client.Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: ts.URL}, nil)
		if err == nil {
			t.Cleanup(func() { sess.Close() })
		}
		return err
	}
	for i := range DefaultMaxSessions {
		require.NoError(t, connect(), "session %d of %d", i+1, DefaultMaxSessions)
	}
	err = connect()
	require.Error(t, err, "session %d is refused", DefaultMaxSessions+1)
	assert.True(t, strings.Contains(err.Error(), "503") || strings.Contains(err.Error(), "Service Unavailable"), err.Error())
}

// Once a request's body has arrived, its read deadline is lifted: a call that outlasts RequestBodyTimeout (here
// three times over) still answers on the request that made it, and that request is never given up while it
// does (a read deadline left in place fails the server's background read of the connection, which cancels the
// request's context and drops the connection). The client is raw HTTP, so that nothing (the SDK client's
// resumption) could fetch the answer some other way.
func TestBodyDeadlineIsLifted(t *testing.T) {
	const bodyTimeout = 200 * time.Millisecond
	f := newFakeServer(0)
	f.AddTool("slow", "Answers after three body timeouts.", func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		select {
		case <-time.After(3 * bodyTimeout):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "slow answer"}}}, nil
	})
	src := startSource(t, inMemoryConfig("s"), fastOptions(nil), map[string]dialFunc{"s": f.dial})
	srv, err := NewServer(t.Context(), newTestRuntime(t, runtime.ModeOff), src, &ServerOptions{RequestBodyTimeout: bodyTimeout})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, srv.Close()) })
	h := srv.Handler()
	var givenUp atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r)
		if r.Context().Err() != nil {
			givenUp.Add(1) // the client never went away: only the server can have ended the request
		}
	}))
	t.Cleanup(ts.Close)

	session := ""
	post := func(body string) (int, string) {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, ts.URL, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("Mcp-Protocol-Version", legacyProtocol)
		}
		res, err := ts.Client().Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body) // an answer cut off ends here too, without the result
		if id := res.Header.Get("Mcp-Session-Id"); id != "" {
			session = id
		}
		return res.StatusCode, string(b)
	}
	code, body := post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + legacyProtocol +
		`","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	require.Equal(t, http.StatusOK, code, body)
	require.NotEmpty(t, session)
	code, body = post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	require.Less(t, code, 300, body)
	code, body = post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{}}}`)
	require.Equal(t, http.StatusOK, code, body)
	assert.Contains(t, body, "slow answer", "the answer came on the request that asked for it")
	assert.Zero(t, givenUp.Load(), "no request was given up while it was answered")
}

// A client that declared only URL elicitation is not shown an approval (a form): the call is blocked unasked,
// and told why.
func TestApprovalURLOnlyElicitationIsNotAsked(t *testing.T) {
	srv, _, deleted := approvalFront(t, runtime.Config{}, nil, nil)
	u := answering("accept", nil)
	opts := u.options()
	opts.Capabilities = &sdk.ClientCapabilities{Elicitation: &sdk.ElicitationCapabilities{URL: &sdk.URLElicitationCapabilities{}}}
	sess := connectStdioWith(t, srv, opts, legacyProtocol)
	text, isErr := callTool(t, sess, "mcp:repo:delete_repository", map[string]any{"text": "octo/site"})
	require.True(t, isErr, text)
	assert.Contains(t, text, "declared only URL elicitation")
	assert.Empty(t, u.shown())
	assert.Zero(t, deleted.Load())
}

// An idle lazy server (its tools from the schema cache, started on first use) leaves /readyz ready.
func TestHealthIdleLazyServerIsReady(t *testing.T) {
	f := newFakeServer(0)
	f.AddTool("echo", "Echo the text.", echo("lazy: "))
	dir := t.TempDir()
	cfg := &upstream.Config{Servers: map[string]upstream.ServerConfig{"lazy": {Command: "in-memory", Lazy: true}}}
	opts := fastOptions(nil)
	opts.SchemaCacheDir = dir
	first := startSource(t, cfg, opts, map[string]dialFunc{"lazy": f.dial}) // fills the cache
	require.Equal(t, upstream.StateReady, first.Status()[0].State)
	require.NoError(t, first.Close(t.Context()))

	src := startSource(t, cfg, opts, map[string]dialFunc{"lazy": f.dial})
	require.Equal(t, upstream.StateIdle, src.Status()[0].State)
	srv, err := NewServer(t.Context(), newTestRuntime(t, runtime.ModeTools), src, nil)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, srv.Close()) })
	h := srv.Health()
	require.Len(t, h.Servers, 1)
	assert.Equal(t, "idle", h.Servers[0].State)
	assert.True(t, h.Ready, "an idle lazy server's tools are there to be called")
}
