package front

import (
	"context"
	"net/http/httptest"
	"strings"
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
// three times over) still answers.
func TestBodyDeadlineIsLifted(t *testing.T) {
	const bodyTimeout = 200 * time.Millisecond
	f := newFakeServer(0)
	f.AddTool("slow", "Answers after three body timeouts.", func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		select {
		case <-time.After(3 * bodyTimeout):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "done"}}}, nil
	})
	src := startSource(t, inMemoryConfig("s"), fastOptions(nil), map[string]dialFunc{"s": f.dial})
	srv, err := NewServer(t.Context(), newTestRuntime(t, runtime.ModeOff), src, &ServerOptions{RequestBodyTimeout: bodyTimeout})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, srv.Close()) })
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	sess := connectHTTP(t, ts.URL, nil, legacyProtocol)
	text, isErr := callText(t, sess, "slow", map[string]any{})
	require.False(t, isErr, text)
	assert.Equal(t, "done", text)
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
