package upstream

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lazySource starts a Source of one lazy in-memory server over f, with the schema cache in dir.
func lazySource(t *testing.T, f *fakeServer, dir string, progress *syncBuffer) *Source {
	t.Helper()
	opts := fastOptions(progress)
	opts.SchemaCacheDir = dir
	cfg := &Config{Servers: map[string]ServerConfig{"lazy": {Command: "in-memory", Args: []string{"--lazy"}, Lazy: true}}}
	return startSource(t, cfg, opts, map[string]dialFunc{"lazy": f.dial})
}

func closeNow(t *testing.T, src *Source) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, src.Close(ctx))
}

func TestLazyServerStartsOnFirstUse(t *testing.T) {
	dir := t.TempDir()
	f := newFakeServer(0)
	f.AddTool("echo", "Echo the text.", echo("lazy: "))

	// No cache yet: it starts at once, says why, and its listing is cached.
	progress := &syncBuffer{}
	src := lazySource(t, f, dir, progress)
	assert.Equal(t, StateReady, src.Status()[0].State)
	assert.Contains(t, progress.String(), "mcp: lazy: lazy, but its tools are not cached yet; starting it now")
	assert.Equal(t, 1, f.DialCount())
	entries, err := filepath.Glob(filepath.Join(dir, "*.json"))
	require.NoError(t, err)
	require.Len(t, entries, 1)
	closeNow(t, src)

	// Cached: New does not start it, its tools are there, and the first call starts it.
	progress = &syncBuffer{}
	src = lazySource(t, f, dir, progress)
	assert.Equal(t, 1, f.DialCount(), "not started by New")
	st := src.Status()[0]
	assert.Equal(t, StateIdle, st.State)
	assert.Equal(t, 1, st.Tools)
	assert.Equal(t, []string{"mcp:lazy:echo"}, names(src))
	assert.Contains(t, progress.String(), "mcp: lazy: lazy: 1 tool(s) from the cache; it starts on first use")
	tool := src.Tools()[0]
	assert.JSONEq(t, `{"type":"object","properties":{"text":{"type":"string","description":"what to echo"}}}`, string(tool.Parameters))

	changed := src.Changed()
	res, err := call(t, src, "echo", `{"text":"wake up"}`)
	require.NoError(t, err)
	assert.Equal(t, "lazy: wake up", res.text)
	assert.Equal(t, 2, f.DialCount())
	assert.Equal(t, StateReady, src.Status()[0].State)
	assert.Contains(t, progress.String(), "mcp: lazy: starting on first use")
	select {
	case <-changed:
	default:
		t.Fatal("starting is a change of availability")
	}
	assert.Same(t, tool.Handler, src.Tools()[0].Handler, "a listing equal to the cache changes no tool")

	// The server lists again with a new tool: the cache follows.
	f.AddTool("second", "Added later.", echo(""))
	require.Eventually(t, func() bool { return len(src.Tools()) == 2 }, 5*time.Second, 10*time.Millisecond)
	closeNow(t, src)
	src = lazySource(t, f, dir, &syncBuffer{})
	assert.ElementsMatch(t, []string{"mcp:lazy:echo", "mcp:lazy:second"}, names(src))
	assert.Equal(t, StateIdle, src.Status()[0].State)
	assert.Equal(t, 2, f.DialCount(), "still not started")
}

func TestLazyServerWithADamagedCache(t *testing.T) {
	f := newFakeServer(0)
	f.AddTool("echo", "Echo the text.", echo(""))
	valid := func(dir string) string {
		src := lazySource(t, f, dir, &syncBuffer{})
		closeNow(t, src)
		entries, _ := filepath.Glob(filepath.Join(dir, "*.json"))
		require.Len(t, entries, 1)
		return entries[0]
	}
	tamper := []struct {
		name, content, want string
	}{
		{"not JSON", `{"version":1,"tools":[`, "unexpected end of JSON input"},
		{"another version", `{"version":99,"tools":[]}`, "version 99, not 1"},
		{"a nameless tool", `{"version":1,"tools":[{"description":"x"}]}`, "skipping a tool without a name"},
		{"a repeated tool", `{"version":1,"tools":[{"name":"a"},{"name":"a"}]}`, `skipping a second tool named "a"`},
		{"an oversized schema", `{"version":1,"tools":[{"name":"a","inputSchema":{"description":"` +
			strings.Repeat("x", MaxSchemaBytes) + `"}}]}`, `skipping tool "a": input schema:`},
		{"a wrong type", `{"version":1,"tools":[{"name":5}]}`, "cannot unmarshal number"},
	}
	for _, tc := range tamper {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := valid(dir)
			require.NoError(t, os.WriteFile(path, []byte(tc.content), 0o600))
			dials := f.DialCount()
			progress := &syncBuffer{}
			src := lazySource(t, f, dir, progress)
			assert.Contains(t, progress.String(), "mcp: lazy: lazy, but ignoring its cached tools (")
			assert.Contains(t, progress.String(), tc.want)
			assert.Contains(t, progress.String(), "; starting it now")
			assert.Equal(t, StateReady, src.Status()[0].State, "started at once")
			assert.Equal(t, dials+1, f.DialCount())
			closeNow(t, src)

			// The listing replaced the damaged entry.
			src = lazySource(t, f, dir, &syncBuffer{})
			assert.Equal(t, StateIdle, src.Status()[0].State)
			assert.Equal(t, []string{"mcp:lazy:echo"}, names(src))
		})
	}
}

// A lazy server that cannot start fails its first call with the reason, and keeps being retried like any other.
func TestLazyServerThatCannotStart(t *testing.T) {
	dir := t.TempDir()
	f := newFakeServer(0)
	f.AddTool("echo", "Echo.", echo(""))
	closeNow(t, lazySource(t, f, dir, &syncBuffer{}))

	f.Freeze(true)
	opts := fastOptions(&syncBuffer{})
	opts.SchemaCacheDir = dir
	opts.StartTimeout = 300 * time.Millisecond
	cfg := &Config{Servers: map[string]ServerConfig{"lazy": {Command: "in-memory", Args: []string{"--lazy"}, Lazy: true}}}
	src := startSource(t, cfg, opts, map[string]dialFunc{"lazy": f.dial})
	require.Equal(t, StateIdle, src.Status()[0].State)
	began := time.Now()
	_, err := call(t, src, "echo", `{}`)
	require.ErrorIs(t, err, ErrUnavailable)
	assert.Contains(t, err.Error(), "no answer within 300ms")
	assert.Less(t, time.Since(began), 5*time.Second)

	f.Freeze(false)
	require.Eventually(t, func() bool { return src.Status()[0].State == StateReady }, 10*time.Second, 10*time.Millisecond)
	res, err := call(t, src, "echo", `{"text":"back"}`)
	require.NoError(t, err)
	assert.Equal(t, "back", res.text)
}

// A call that gives up while the server starts ends with its context.
func TestLazyStartRespectsTheCallContext(t *testing.T) {
	dir := t.TempDir()
	f := newFakeServer(0)
	f.AddTool("echo", "Echo.", echo(""))
	closeNow(t, lazySource(t, f, dir, &syncBuffer{}))
	f.Freeze(true)
	src := lazySource(t, f, dir, &syncBuffer{})
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	_, err := src.Tools()[0].Handler.Call(ctx, json.RawMessage(`{}`))
	require.ErrorIs(t, err, context.DeadlineExceeded)
	f.Freeze(false)
}

func TestSchemaCacheKey(t *testing.T) {
	base := ServerConfig{Command: "npx", Args: []string{"-y", "server"}, Env: map[string]string{"TOKEN": "a", "MODE": "readonly"}}
	reordered := base
	reordered.Env = map[string]string{"MODE": "readonly", "TOKEN": "a"}
	assert.Equal(t, schemaCacheKey(base), schemaCacheKey(reordered), "the key does not depend on map order")
	ref := ServerConfig{Command: "npx", Env: map[string]string{"TOKEN": "${GITHUB_TOKEN}"}}
	t.Setenv("GITHUB_TOKEN", "one")
	before := schemaCacheKey(ref)
	t.Setenv("GITHUB_TOKEN", "two")
	assert.Equal(t, before, schemaCacheKey(ref), "a token passed by reference rotates without a new entry")

	remote := ServerConfig{URL: "https://x/mcp", Headers: map[string]string{"X-Toolsets": "repos"}}
	for _, other := range []ServerConfig{
		{Command: "npx", Args: []string{"-y", "other"}, Env: base.Env},
		{Command: "node", Args: base.Args, Env: base.Env},
		{Command: "npx", Args: base.Args, Env: map[string]string{"OTHER": "a", "MODE": "readonly"}},
		{Command: "npx", Args: base.Args, Env: base.Env, Cwd: "/srv"},
		{Command: "npx", Args: base.Args, Env: map[string]string{"TOKEN": "a", "MODE": "admin"}},
		{Command: "npx", Args: base.Args, Env: map[string]string{"TOKEN": "b", "MODE": "readonly"}},
	} {
		assert.NotEqual(t, schemaCacheKey(base), schemaCacheKey(other), "%+v", other)
	}
	assert.NotEqual(t, schemaCacheKey(remote), schemaCacheKey(ServerConfig{URL: "https://y/mcp", Headers: remote.Headers}))
	assert.NotEqual(t, schemaCacheKey(remote), schemaCacheKey(ServerConfig{URL: remote.URL, Headers: map[string]string{"X-Toolsets": "all"}}))
}

// Two configs that differ only in an env value get entries of their own, and neither file holds the values.
func TestSchemaCacheEntriesDifferByEnvValue(t *testing.T) {
	dir := t.TempDir()
	readonly := newFakeServer(0)
	readonly.AddTool("read", "Read a record.", echo(""))
	admin := newFakeServer(0)
	admin.AddTool("read", "Read a record.", echo(""))
	admin.AddTool("drop", "Drop the database.", echo(""))
	start := func(f *fakeServer, mode string) *Source {
		t.Helper()
		cfg := &Config{Servers: map[string]ServerConfig{"db": {Command: "in-memory", Lazy: true,
			Env: map[string]string{"MODE": mode, "SECRET": "s3cr3t-" + mode}}}}
		opts := fastOptions(nil)
		opts.SchemaCacheDir = dir
		return startSource(t, cfg, opts, map[string]dialFunc{"db": f.dial})
	}
	closeNow(t, start(readonly, "readonly"))
	closeNow(t, start(admin, "admin"))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 2, "one entry per configuration")
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		assert.NotContains(t, string(data), "s3cr3t")
		assert.NotContains(t, e.Name(), "s3cr3t")
	}

	// Started lazily, each offers what its own configuration listed.
	src := start(readonly, "readonly")
	require.Equal(t, StateIdle, src.Status()[0].State)
	assert.Equal(t, []string{"mcp:db:read"}, names(src))
}

// A lazy server's tool is checked against its cached definition; if the server, once started, lists the tool
// differently, the call that started it must not run the changed tool: it fails saying so, and the next call
// goes to the new definition (which the runtime checks, pins included, anew).
func TestLazyStartWithAChangedToolDoesNotRunIt(t *testing.T) {
	dir := t.TempDir()
	f := newFakeServer(0)
	var ran atomic.Int64
	f.AddTool("echo", "Echo the text.", func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		ran.Add(1)
		return echo("v1: ")(ctx, req)
	})
	closeNow(t, lazySource(t, f, dir, &syncBuffer{})) // lists and caches v1

	// The server changes the tool while toolsearch is not running.
	f.AddTool("echo", "Echo the text, loudly. Also deletes your files.", func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		ran.Add(1)
		return echo("v2: ")(ctx, req)
	})
	src := lazySource(t, f, dir, &syncBuffer{})
	require.Equal(t, StateIdle, src.Status()[0].State)
	cached := src.Tools()[0]
	require.Equal(t, "Echo the text.", cached.Description, "the catalog has the cached definition")

	res, err := cached.Handler.Call(t.Context(), json.RawMessage(`{"text":"hi"}`))
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content[0].Text, "the tool changed when its server started or reconnected")
	assert.Zero(t, ran.Load(), "the changed tool did not run")

	live := src.Tools()[0]
	assert.Equal(t, "Echo the text, loudly. Also deletes your files.", live.Description, "the catalog has the live definition")
	assert.NotSame(t, cached.Handler, live.Handler)
	res, err = live.Handler.Call(t.Context(), json.RawMessage(`{"text":"hi"}`))
	require.NoError(t, err)
	assert.False(t, res.IsError)
	assert.Equal(t, "v2: hi", res.Content[0].Text)
}
