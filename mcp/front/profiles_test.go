package front

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/runtime"
)

const (
	ciToken   = "ci-0123456789abcdef"
	fullToken = "full-fedcba9876543210"
)

// twoProfiles are a read-only profile for a CI agent and a full one for a person.
func twoProfiles() []Profile {
	return []Profile{
		{Name: "ci", Token: ciToken, Policy: &catalog.Policy{Agent: catalog.Rule{Deny: []string{"delete_*"}}}},
		{Name: "person", Token: fullToken},
	}
}

// tokenTransport sends the bearer token it holds now with every request.
type tokenTransport struct{ token atomic.Pointer[string] }

func newTokenTransport(token string) *tokenTransport {
	tt := &tokenTransport{}
	tt.token.Store(&token)
	return tt
}

func (tt *tokenTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+*tt.token.Load())
	return http.DefaultTransport.RoundTrip(req)
}

// connectWithToken connects a go-sdk client over HTTP with a bearer token it may later change.
func connectWithToken(t *testing.T, url string, tt *tokenTransport) *sdk.ClientSession {
	t.Helper()
	client := sdk.NewClient(&sdk.Implementation{Name: "token-client", Version: "1"}, nil)
	sess, err := client.Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: url,
		HTTPClient: &http.Client{Transport: tt}}, &sdk.ClientSessionOptions{ProtocolVersion: legacyProtocol})
	require.NoError(t, err)
	t.Cleanup(func() { sess.Close() })
	return sess
}

// profileFront serves three tools over HTTP with the two profiles, in mode; the runtime's own policy (for
// BearerToken's clients) denies read_file.
func profileFront(t *testing.T, mode runtime.Mode, opts *ServerOptions) (*httptest.Server, *atomic.Int32, *syncBuffer) {
	t.Helper()
	deleted := &atomic.Int32{}
	f := repoServer(deleted)
	f.AddTool("delete_wiki", "Delete a wiki page.", echo("wiki deleted: "))
	src := startSource(t, inMemoryConfig("repo"), fastOptions(nil), map[string]dialFunc{"repo": f.dial})
	rt, err := runtime.New(context.Background(), &runtime.Options{Config: runtime.Config{Enabled: true, Mode: mode},
		Policy: &catalog.Policy{Agent: catalog.Rule{Deny: []string{"read_file"}}}})
	require.NoError(t, err)
	require.Equal(t, mode, rt.Mode(), rt.FallbackReason())
	t.Cleanup(func() { require.NoError(t, rt.Close(context.Background())) })
	logs := &syncBuffer{}
	o := ServerOptions{}
	if opts != nil {
		o = *opts
	}
	o.Logger = slog.New(slog.NewTextHandler(logs, nil))
	if o.Profiles == nil {
		o.Profiles = twoProfiles()
	}
	srv, err := NewServer(t.Context(), rt, src, &o)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, srv.Close()) })
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	return ts, deleted, logs
}

func TestProfilesToolsMode(t *testing.T) {
	ts, deleted, logs := profileFront(t, runtime.ModeTools, &ServerOptions{BearerToken: "default-token"})
	ci := connectWithToken(t, ts.URL, newTokenTransport(ciToken))
	person := connectWithToken(t, ts.URL, newTokenTransport(fullToken))
	def := connectWithToken(t, ts.URL, newTokenTransport("default-token"))

	text, _ := callText(t, ci, "tool_search", map[string]any{"query": "delete a repository"})
	assert.NotContains(t, text, "mcp:repo:delete_repository", "the CI profile cannot find what it may not call")
	text, isErr := callTool(t, ci, "mcp:repo:delete_repository", map[string]any{"text": "octo/site"})
	require.True(t, isErr, text)
	assert.Contains(t, text, "Unknown tool")
	text, isErr = callTool(t, ci, "mcp:repo:read_file", map[string]any{"text": "README"})
	require.False(t, isErr, "the CI profile's policy is its own, not the runtime's: %s", text)
	assert.Zero(t, deleted.Load())

	text, _ = callText(t, person, "tool_search", map[string]any{"query": "delete a repository"})
	assert.Contains(t, text, "mcp:repo:delete_repository")
	text, isErr = callTool(t, person, "mcp:repo:delete_repository", map[string]any{"text": "octo/site"})
	require.False(t, isErr, text)
	assert.EqualValues(t, 1, deleted.Load())

	text, isErr = callTool(t, def, "mcp:repo:read_file", map[string]any{"text": "README"})
	require.True(t, isErr, "BearerToken's clients have the runtime's policy: %s", text)
	text, isErr = callTool(t, def, "mcp:repo:delete_wiki", map[string]any{"text": "Home"})
	require.False(t, isErr, text)

	out := logs.String()
	assert.Contains(t, out, "profile=ci")
	assert.Contains(t, out, "profile=person")
	assert.Contains(t, out, "profile=(default)")
	for _, token := range []string{ciToken, fullToken, "default-token"} {
		assert.NotContains(t, out, token, "tokens are never logged")
	}
}

func TestProfilesOffMode(t *testing.T) {
	// One tool a page: the CI client's first page holds only a tool it may not see, which it must never get as
	// an empty page that says more follow.
	ts, deleted, _ := profileFront(t, runtime.ModeOff, &ServerOptions{PageSize: 1})
	ci := connectWithToken(t, ts.URL, newTokenTransport(ciToken))
	person := connectWithToken(t, ts.URL, newTokenTransport(fullToken))

	assert.Equal(t, []string{"read_file"}, listNames(t, ci))
	assert.Equal(t, []string{"delete_repository", "delete_wiki", "read_file"}, listNames(t, person))
	cursor := ""
	for {
		page, err := ci.ListTools(t.Context(), &sdk.ListToolsParams{Cursor: cursor})
		require.NoError(t, err)
		require.NotEmpty(t, page.Tools, "no empty page")
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}

	text, isErr := callText(t, ci, "delete_repository", map[string]any{"text": "octo/site"})
	require.True(t, isErr, "a call is checked by the client's own run: %s", text)
	assert.Zero(t, deleted.Load())
	text, isErr = callText(t, person, "delete_repository", map[string]any{"text": "octo/site"})
	require.False(t, isErr, text)
	assert.Equal(t, "deleted: octo/site", text)
	assert.EqualValues(t, 1, deleted.Load())
}

// In directory mode each profile's client is given a directory of what it may use.
func TestProfilesDirectory(t *testing.T) {
	deleted := &atomic.Int32{}
	f := repoServer(deleted)
	cfg := inMemoryConfig("repo")
	server := cfg.Servers["repo"]
	server.Trusted = true // the directory lists trusted tools
	cfg.Servers["repo"] = server
	src := startSource(t, cfg, fastOptions(nil), map[string]dialFunc{"repo": f.dial})
	rt := newTestRuntime(t, runtime.ModeDirectory)
	srv, err := NewServer(t.Context(), rt, src, &ServerOptions{Profiles: twoProfiles()})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, srv.Close()) })
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)

	ci := connectWithToken(t, ts.URL, newTokenTransport(ciToken))
	person := connectWithToken(t, ts.URL, newTokenTransport(fullToken))
	assert.Contains(t, person.InitializeResult().Instructions, "delete_repository")
	assert.Contains(t, ci.InitializeResult().Instructions, "read_file")
	assert.NotContains(t, ci.InitializeResult().Instructions, "delete_repository")
}

// A session's profile is the one of its first request: the same session with another token is refused, and
// the call it tried does not run.
func TestProfilesAreFixedPerSession(t *testing.T) {
	ts, deleted, _ := profileFront(t, runtime.ModeOff, nil)
	tt := newTokenTransport(ciToken)
	ci := connectWithToken(t, ts.URL, tt)
	assert.Equal(t, []string{"read_file"}, listNames(t, ci))

	tt.token.Store(ptr(fullToken))
	_, err := ci.CallTool(t.Context(), &sdk.CallToolParams{Name: "delete_repository", Arguments: map[string]any{"text": "x"}})
	require.Error(t, err, "a session that switches tokens is refused")
	assert.Contains(t, err.Error(), "Forbidden", "%v", err)
	assert.Zero(t, deleted.Load())

	// Without BearerToken only the profiles' tokens open a session.
	for _, header := range []string{"", "Bearer not-a-token", "Bearer " + ciToken + "x"} {
		req, err := http.NewRequest(http.MethodPost, ts.URL, strings.NewReader(
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}`))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if header != "" {
			req.Header.Set("Authorization", header)
		}
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		res.Body.Close()
		assert.Equal(t, http.StatusUnauthorized, res.StatusCode, "%q", header)
	}
}

// A client whose session began with one profile cannot continue with another, whatever the transport.
func TestProfilesClientRefusesAnotherProfile(t *testing.T) {
	s := &Server{clients: map[*sdk.ServerSession]*client{}, log: slog.New(slog.DiscardHandler)}
	profiles := twoProfiles()
	c, err := s.clientWith(nil, &profiles[0], true)
	require.NoError(t, err)
	again, err := s.clientWith(nil, &profiles[0], true)
	require.NoError(t, err)
	assert.Same(t, c, again)
	_, err = s.clientWith(nil, &profiles[1], true)
	assert.ErrorIs(t, err, ErrProfileChanged)
	_, err = s.clientWith(nil, nil, true)
	assert.ErrorIs(t, err, ErrProfileChanged, "nor fall back to the default token")
}

func TestProfilesInvalidOptions(t *testing.T) {
	rt := newTestRuntime(t, runtime.ModeTools)
	const a, b = "tok-aaaa-1111", "tok-bbbb-2222"
	for name, opts := range map[string]ServerOptions{
		"no name":           {Profiles: []Profile{{Token: a}}},
		"two names":         {Profiles: []Profile{{Name: "x", Token: a}, {Name: "x", Token: b}}},
		"no token":          {Profiles: []Profile{{Name: "x"}}},
		"shared token":      {Profiles: []Profile{{Name: "x", Token: a}, {Name: "y", Token: a}}},
		"BearerToken's":     {BearerToken: a, Profiles: []Profile{{Name: "x", Token: a}}},
		"white space":       {Profiles: []Profile{{Name: "x", Token: "tok with space"}}},
		"bearer with space": {BearerToken: "tok with space"},
		"bad policy": {Profiles: []Profile{{Name: "x", Token: a,
			Policy: &catalog.Policy{Agent: catalog.Rule{Deny: []string{"annotation:destructiv"}}}}}},
	} {
		_, err := NewServer(t.Context(), rt, nil, &opts)
		require.Error(t, err, name)
		assert.True(t, errors.Is(err, ErrInvalidOptions), "%s: %v", name, err)
		for _, p := range opts.Profiles {
			if p.Token != "" {
				assert.NotContains(t, err.Error(), p.Token, "%s: an error never shows a token", name)
			}
		}
	}
}

func ptr[T any](v T) *T { return &v }

// A client of a profile that cannot ask its user is told how to allow the tool under its own profile's rules:
// ApprovalHint hears which profile the client has.
func TestProfilesApprovalHintNamesTheProfile(t *testing.T) {
	var mu sync.Mutex
	var heard []string
	profiles := []Profile{
		{Name: "ci", Token: ciToken, Policy: &catalog.Policy{Profile: catalog.Rule{Ask: []string{"delete_*"}}}},
		{Name: "person", Token: fullToken},
	}
	ts, deleted, _ := profileFront(t, runtime.ModeTools, &ServerOptions{Profiles: profiles,
		ApprovalHint: func(tool *catalog.Tool, rule, profile string) string {
			mu.Lock()
			defer mu.Unlock()
			heard = append(heard, profile+" "+rule)
			return fmt.Sprintf("remove %q from tools.profiles.%s.ask", rule, profile)
		}})
	ci := connectWithToken(t, ts.URL, newTokenTransport(ciToken))
	text, isErr := callTool(t, ci, "mcp:repo:delete_wiki", map[string]any{"text": "Home"})
	require.True(t, isErr, text)
	assert.Contains(t, text, `did not declare elicitation`)
	assert.Contains(t, text, `remove "delete_*" from tools.profiles.ci.ask`)
	assert.Zero(t, deleted.Load())
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{"ci delete_*"}, heard)
}

// A profiled client's tools/list may come without params, as the TypeScript SDK's listTools() sends it: it is
// the first page, filtered, and never a crash of the front.
func TestProfilesListToolsWithoutParams(t *testing.T) {
	ts, _, _ := profileFront(t, runtime.ModeOff, nil)
	post := func(session, body string) (*http.Response, string) {
		req, err := http.NewRequest(http.MethodPost, ts.URL, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+ciToken)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", legacyProtocol)
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp, string(data)
	}
	resp, _ := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+legacyProtocol+
		`","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	session := resp.Header.Get("Mcp-Session-Id")
	require.NotEmpty(t, session)
	post(session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	resp, body := post(session, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	assert.Contains(t, body, `"read_file"`)
	assert.NotContains(t, body, "delete_repository", "filtered by the CI profile")
	assert.NotContains(t, body, `"error"`)
}
