package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/config"
	"github.com/toolsearch/toolsearch/mcp/front"
	"github.com/toolsearch/toolsearch/mcp/upstream"
	"github.com/toolsearch/toolsearch/runtime"
)

// upstreamEnv makes this test binary play an upstream MCP server on stdio (see init), so `toolsearch mcp serve`
// has real servers to front without node. It is an init, not a TestMain, so that it coexists with any TestMain
// of the package.
const upstreamEnv = "TOOLSEARCH_CMD_TEST_UPSTREAM"

// upstreamRevisionEnv set to "2" makes the github upstream describe create_issue differently, as a server does
// after an update: a pinned definition that changed.
const upstreamRevisionEnv = "TOOLSEARCH_CMD_TEST_UPSTREAM_REVISION"

func init() {
	if name := os.Getenv(upstreamEnv); name != "" {
		os.Exit(serveUpstream(name))
	}
}

// serveUpstream serves its tools directly (Tool Search off), as any plain MCP server would: "github" has two
// issue tools, any other name one mail tool.
func serveUpstream(name string) int {
	if name == "hung" {
		// Starts, then never answers: not even initialize.
		time.Sleep(time.Hour)
		return 0
	}
	ctx := context.Background()
	rt, err := runtime.New(ctx, &runtime.Options{Config: runtime.Config{Mode: runtime.ModeOff}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	tool := func(tname, desc, prefix string) catalog.Tool {
		return catalog.Tool{
			Source: catalog.SourceOpenClaw, SourceName: name, Name: tname, Description: desc,
			Parameters: json.RawMessage(`{"type":"object","properties":{"title":{"type":"string"}},"required":["title"]}`),
			Handler: catalog.HandlerFunc(func(_ context.Context, args json.RawMessage) (*catalog.Result, error) {
				var in struct{ Title string }
				_ = json.Unmarshal(args, &in)
				return &catalog.Result{Content: []catalog.Content{{Type: "text", Text: prefix + in.Title}}}, nil
			}),
		}
	}
	tools := []catalog.Tool{tool("send_email", "Send an email to a recipient.", "sent: ")}
	if name == "github" {
		create := "Create an issue in a GitHub repository."
		if os.Getenv(upstreamRevisionEnv) == "2" {
			create = "Create an issue in a GitHub repository, and assign it to everyone." // a changed definition
		}
		tools = []catalog.Tool{
			tool("create_issue", create, "created issue: "),
			tool("close_issue", "Close an issue of a GitHub repository.", "closed issue: "),
		}
	}
	srv, err := front.NewServer(ctx, rt, nil, &front.ServerOptions{Name: name, Tools: tools})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer srv.Close()
	if err := srv.Run(ctx, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// upstreamConfig writes a config file (with a comment, as users write them) whose servers are this test
// binary playing upstreams.
func upstreamConfig(t *testing.T, mode string) string {
	t.Helper()
	return writeFile(t, "config.json", fmt.Sprintf(`{
  // two upstream servers
  "mcpServers": {
    "github": {"command": %q, "args": ["-test.run=^$"], "env": {%q: "github"}},
    "mail": {"command": %[1]q, "args": ["-test.run=^$"], "env": {%[2]q: "mail"}},
  },
  "tools": {"toolSearch": {"mode": %q}},
}`, os.Args[0], upstreamEnv, mode))
}

func TestMCPCommandUsage(t *testing.T) {
	cfg := upstreamConfig(t, "tools")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no subcommand", []string{"mcp"}, "a subcommand is required: serve"},
		{"unknown subcommand", []string{"mcp", "run"}, `unknown subcommand "run"`},
		{"bad mode", []string{"mcp", "serve", "--config", cfg, "--mode", "tols"}, `--mode must be one of code, tools, directory, off (got "tols"; did you mean "tools"?)`},
		{"unknown flag", []string{"mcp", "serve", "--port", "1"}, "flag provided but not defined"},
		{"stray argument", []string{"mcp", "serve", "--config", cfg, "extra"}, `unexpected argument "extra"`},
		{"start wait too long", []string{"mcp", "serve", "--config", cfg, "--start-wait", (maxStartWait + time.Second).String()},
			"--start-wait must be between 0 and 15m0s, not 15m1s"},
		{"negative start wait", []string{"mcp", "serve", "--config", cfg, "--start-wait", "-1s"},
			"--start-wait must be between 0 and 15m0s, not -1s"},
		{"config file without --config", []string{"mcp", "serve", "config.json5"},
			`unexpected argument "config.json5": to serve the servers of a config file, write --config config.json5`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, "", tc.args...)
			assert.Equal(t, exitUsage, code)
			assert.Empty(t, stdout)
			assert.Equal(t, 1, strings.Count(stderr, "\n"), "one-line hint: %q", stderr)
			assert.Contains(t, stderr, tc.want)
			assert.Contains(t, stderr, "toolsearch mcp --help")
		})
	}
	for _, args := range [][]string{{"mcp", "--help"}, {"mcp", "serve", "--help"}, {"mcp", "serve", "-h"}} {
		code, stdout, _ := runCLI(t, "", args...)
		assert.Equal(t, exitOK, code, args)
		assert.Contains(t, stdout, "usage: toolsearch mcp serve")
		assert.Contains(t, stdout, `"mcpServers"`)
	}
}

func TestMCPServeConfigErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope.json")
	code, _, stderr := runCLI(t, "", "mcp", "serve", "--config", missing)
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, stderr, "nope.json")

	bad := writeFile(t, "bad.json", `{"mcpServers": {"x": {"command": "a", "url": "https://b"}}}`)
	code, _, stderr = runCLI(t, "", "mcp", "serve", "--config", bad)
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, stderr, `server "x": has both "command" and "url"`)

	badLimit := writeFile(t, "limit.json", `{"tools": {"toolSearch": {"codeTimeoutMs": -1}}}`)
	code, _, stderr = runCLI(t, "", "mcp", "serve", "--config", badLimit)
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, stderr, "codeTimeoutMs")
}

func TestLoadServeConfigMode(t *testing.T) {
	tests := []struct {
		file    string
		want    runtime.Mode
		enabled bool
	}{
		{`{}`, runtime.ModeCode, true},
		{`{"tools": {"toolSearch": true}}`, runtime.ModeCode, true},
		{`{"tools": {"toolSearch": false}}`, runtime.ModeOff, false},
		{`{"tools": {"toolSearch": {"mode": "off"}}}`, runtime.ModeOff, false},
		{`{"tools": {"toolSearch": {"mode": "directory"}}}`, runtime.ModeDirectory, true},
		{`{"tools": {"toolSearch": {"enabled": false, "mode": "tools", "codeTimeoutMs": 2000}}}`, runtime.ModeOff, false},
	}
	for _, tc := range tests {
		lc, err := config.Load(t.Context(), writeFile(t, "c.json", tc.file))
		require.NoError(t, err, tc.file)
		assert.Equal(t, tc.enabled, lc.ToolSearch.Enabled, tc.file)
		assert.Equal(t, tc.want, lc.ToolSearch.Mode, tc.file)
	}
	lc, err := config.Load(t.Context(), writeFile(t, "c.json", `{"tools": {"toolSearch": {"codeTimeoutMs": 2000}}}`))
	require.NoError(t, err)
	assert.Equal(t, 2000, lc.ToolSearch.CodeTimeoutMs, "the file's limits apply")
}

// lockedBuffer collects the stderr of a command running in another goroutine.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// client connects to a toolsearch MCP server through package mcp (the go-sdk client) and returns its tools by
// name.
func client(t *testing.T, server upstream.ServerConfig) (*upstream.Source, map[string]catalog.Tool) {
	t.Helper()
	progress := &lockedBuffer{}
	src, err := upstream.New(t.Context(), &upstream.Config{Servers: map[string]upstream.ServerConfig{"toolsearch": server}},
		&upstream.Options{Progress: progress, ServerStderr: progress, StartTimeout: time.Minute})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, src.Close(context.Background())) })
	require.Equal(t, upstream.StateReady, src.Status()[0].State, "%v\n%s", src.Status()[0].Err, progress.String())
	tools := map[string]catalog.Tool{}
	for _, tool := range src.Tools() {
		tools[tool.Name] = tool
	}
	return src, tools
}

func callTool(t *testing.T, tools map[string]catalog.Tool, name string, args any) (string, bool) {
	t.Helper()
	tool, ok := tools[name]
	require.True(t, ok, "no tool %q", name)
	raw, err := json.Marshal(args)
	require.NoError(t, err)
	res, err := tool.Handler.Call(t.Context(), raw)
	require.NoError(t, err)
	var parts []string
	for _, c := range res.Content {
		parts = append(parts, c.Text)
	}
	return strings.Join(parts, "\n"), res.IsError
}

// awaitTool waits until tool_search finds a tool: servers start in the background, after the front answers.
func awaitTool(t *testing.T, tools map[string]catalog.Tool, query, id string) {
	t.Helper()
	require.Eventually(t, func() bool {
		text, isErr := callTool(t, tools, "tool_search", map[string]any{"query": query})
		return !isErr && strings.Contains(text, id)
	}, time.Minute, 20*time.Millisecond, "tool_search never found %s", id)
}

func toolNames(tools map[string]catalog.Tool) []string {
	var out []string
	for name := range tools {
		out = append(out, name)
	}
	return out
}

// TestMCPServeOverHTTP runs the command in-process with --http and talks to it as a streamable HTTP client.
func TestMCPServeOverHTTP(t *testing.T) {
	cfg := upstreamConfig(t, "tools")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stderr := &lockedBuffer{}
	exited := make(chan int, 1)
	go func() {
		exited <- run(ctx, []string{"mcp", "serve", "--config", cfg, "--http", "127.0.0.1:0"}, strings.NewReader(""), &lockedBuffer{}, stderr)
	}()
	addr := regexp.MustCompile(`at (http://127\.0\.0\.1:\d+/mcp)`)
	require.Eventually(t, func() bool { return addr.MatchString(stderr.String()) }, time.Minute, 20*time.Millisecond,
		"no address on stderr: %s", stderr.String())
	url := addr.FindStringSubmatch(stderr.String())[1]
	assert.Contains(t, stderr.String(), "toolsearch: serving tools mode over 2 server(s) at http://127.0.0.1:")
	assert.Contains(t, stderr.String(), "(no token: loopback only)")

	_, tools := client(t, upstream.ServerConfig{URL: url})
	assert.ElementsMatch(t, []string{"tool_search", "tool_describe", "tool_call"}, toolNames(tools))
	awaitTool(t, tools, "send an email", "mcp:mail:send_email")
	require.Eventually(t, func() bool { return strings.Contains(stderr.String(), "mcp: github: ready: 2 tool(s)") },
		time.Minute, 20*time.Millisecond, "progress on stderr: %s", stderr.String())
	text, isErr := callTool(t, tools, "tool_call", map[string]any{"id": "mcp:mail:send_email", "args": map[string]any{"title": "hi"}})
	require.False(t, isErr, text)
	assert.Contains(t, text, "sent: hi")

	cancel()
	select {
	case code := <-exited:
		assert.Equal(t, exitOK, code, stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop when its context ended")
	}
}

// TestMCPServeBinaryOverStdio builds the real binary and has an MCP client start it over stdio, the way Claude
// Desktop does, in each mode.
func TestMCPServeBinaryOverStdio(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "toolsearch")
	build := exec.Command("go", "build", "-o", bin, ".")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	cfg := upstreamConfig(t, "tools")

	t.Run("tools", func(t *testing.T) {
		_, tools := client(t, upstream.ServerConfig{Command: bin, Args: []string{"mcp", "serve", "--config", cfg}})
		assert.ElementsMatch(t, []string{"tool_search", "tool_describe", "tool_call"}, toolNames(tools))
		awaitTool(t, tools, "open a github issue", "mcp:github:create_issue")
		text, isErr := callTool(t, tools, "tool_describe", map[string]any{"id": "mcp:github:create_issue"})
		require.False(t, isErr, text)
		assert.Contains(t, text, `"required"`)
		text, isErr = callTool(t, tools, "tool_call", map[string]any{"id": "mcp:github:create_issue", "args": map[string]any{"title": "it works"}})
		require.False(t, isErr, text)
		assert.Contains(t, text, "created issue: it works")
		text, isErr = callTool(t, tools, "tool_call", map[string]any{"id": "mcp:github:create_issue", "args": map[string]any{}})
		assert.True(t, isErr, "the pipeline validates arguments against the upstream schema: %s", text)
	})

	t.Run("code", func(t *testing.T) {
		_, tools := client(t, upstream.ServerConfig{Command: bin, Args: []string{"mcp", "serve", "--config", cfg, "--mode", "code"}})
		assert.Equal(t, []string{"tool_search_code"}, toolNames(tools))
		require.Eventually(t, func() bool {
			text, isErr := callTool(t, tools, "tool_search_code", map[string]any{"code": `return (await openclaw.tools.search("send an email")).length`})
			return !isErr && !strings.Contains(text, `"value":0`)
		}, time.Minute, 20*time.Millisecond, "servers start in the background")
		code := `const [hit] = await openclaw.tools.search("send an email", {limit: 1});
const r = await openclaw.tools.call(hit.id, {title: "from code"});
return {id: hit.id, text: r.result.content[0].text};`
		text, isErr := callTool(t, tools, "tool_search_code", map[string]any{"code": code})
		require.False(t, isErr, text)
		var res struct {
			OK    bool
			Value struct{ ID, Text string }
		}
		require.NoError(t, json.Unmarshal([]byte(text), &res), text)
		assert.True(t, res.OK)
		assert.Equal(t, "mcp:mail:send_email", res.Value.ID)
		assert.Equal(t, "sent: from code", res.Value.Text)
	})
}

func TestSelfReferenceIsSkipped(t *testing.T) {
	self, err := os.Executable()
	require.NoError(t, err)
	cfg := &upstream.Config{Servers: map[string]upstream.ServerConfig{
		"toolsearch": {Command: self, Args: []string{"mcp", "serve", "--config", "x.json"}},
		"other":      {Command: self, Args: []string{"-test.run=^$"}},
		"missing":    {Command: "/nonexistent/toolsearch", Args: []string{"mcp", "serve"}},
	}}
	assert.Equal(t, []string{"toolsearch"}, selfReferences(cfg))
}

// mcp serve keeps compiled sandbox code on disk like run does: without it every start recompiles (~0.6 s).
func TestMCPServeUsesCompilationCache(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	code, _, stderr := runCLI(t, "", "mcp", "serve", "--config", writeFile(t, "c.json", `{}`))
	require.Equal(t, exitOK, code, stderr)
	require.NotContains(t, stderr, "code mode is unavailable")
	entries, err := os.ReadDir(filepath.Join(cache, "toolsearch", "wazero"))
	require.NoError(t, err)
	assert.NotEmpty(t, entries, "compiled code is cached")
}

// serveInProcess runs `toolsearch mcp serve` in-process over pipes, as an MCP client would start it, and connects
// a go-sdk client to it; the time Connect took is initialize's round trip from the command's start.
func serveInProcess(t *testing.T, opts *sdk.ClientOptions, args ...string) (*sdk.ClientSession, time.Duration, *lockedBuffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	toServerR, toServerW := io.Pipe()
	toClientR, toClientW := io.Pipe()
	stderr := &lockedBuffer{}
	exited := make(chan int, 1)
	began := time.Now()
	go func() {
		exited <- run(ctx, append([]string{"mcp", "serve"}, args...), toServerR, toClientW, stderr)
		toClientW.Close()
	}()
	client := sdk.NewClient(&sdk.Implementation{Name: "test-client", Version: "1"}, opts)
	sess, err := client.Connect(t.Context(), &sdk.IOTransport{Reader: toClientR, Writer: toServerW}, nil)
	require.NoError(t, err, stderr.String())
	took := time.Since(began)
	t.Cleanup(func() {
		sess.Close()
		cancel()
		select {
		case code := <-exited:
			assert.Equal(t, exitOK, code, stderr.String())
		case <-time.After(30 * time.Second):
			t.Error("serve did not stop")
		}
	})
	return sess, took, stderr
}

func sdkCall(t *testing.T, sess *sdk.ClientSession, name string, args any) (string, bool) {
	t.Helper()
	res, err := sess.CallTool(t.Context(), &sdk.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err)
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n"), res.IsError
}

func TestMCPServeAnswersAtOnceWhileAServerHangs(t *testing.T) {
	cfg := writeFile(t, "config.json", fmt.Sprintf(`{
  "mcpServers": {
    "hung": {"command": %q, "args": ["-test.run=^$"], "env": {%q: "hung"}},
    "mail": {"command": %[1]q, "args": ["-test.run=^$"], "env": {%[2]q: "mail"}},
  },
}`, os.Args[0], upstreamEnv))
	// The twin fronts only the healthy server, in the same conditions just before: "at once" is measured against
	// it, not against a number that load breaks. A serve that waited for its servers would answer after the hung
	// server's start timeout (30 s by default), far past this bound.
	twinCfg := writeFile(t, "twin.json", fmt.Sprintf(`{"mcpServers": {
    "mail": {"command": %q, "args": ["-test.run=^$"], "env": {%q: "mail"}},
}}`, os.Args[0], upstreamEnv))
	_, twin, _ := serveInProcess(t, nil, "--config", twinCfg, "--mode", "tools", "--session-log", t.TempDir())
	logs := t.TempDir()
	sess, took, stderr := serveInProcess(t, nil, "--config", cfg, "--mode", "tools", "--session-log", logs)
	t.Logf("initialize answered %s after the command started (%s without the hung server)", took, twin)
	assert.Less(t, took, 3*twin+500*time.Millisecond, "initialize is answered at once, whatever the servers do")
	require.Eventually(t, func() bool {
		text, isErr := sdkCall(t, sess, "tool_search", map[string]any{"query": "send an email"})
		return !isErr && strings.Contains(text, "mcp:mail:send_email")
	}, time.Minute, 20*time.Millisecond, "the healthy server's tools are found: %s", stderr.String())
	text, isErr := sdkCall(t, sess, "tool_call", map[string]any{"id": "mcp:mail:send_email", "args": map[string]any{"title": "hi"}})
	require.False(t, isErr, text)
	assert.Contains(t, text, "sent: hi")
	assert.NotContains(t, stderr.String(), "mcp: hung: ready")

	// The client's session log is its own, and complete once it has gone: every run it started has ended (a
	// server that came up started a new run over the new catalog).
	sess.Close()
	require.Eventually(t, func() bool {
		records, err := runtime.ReadSessionLog(filepath.Join(logs, "mcp-serve-c1.jsonl"))
		starts, ends := 0, 0
		for _, r := range records {
			switch r.Type {
			case runtime.RecordRunStart:
				starts++
			case runtime.RecordRunEnd:
				ends++
			}
		}
		calls := runtime.Summarize(records).Calls
		return err == nil && starts == ends && len(calls) == 1 && calls[0].ToolID == "mcp:mail:send_email"
	}, 10*time.Second, 20*time.Millisecond, "runs are written in batches, and at their end")
}

func TestMCPServeOffModeAndModeFlag(t *testing.T) {
	cfg := writeFile(t, "config.json", fmt.Sprintf(`{
  "mcpServers": {
    "github": {"command": %q, "args": ["-test.run=^$"], "env": {%q: "github"}},
    "mail": {"command": %[1]q, "args": ["-test.run=^$"], "env": {%[2]q: "mail"}},
  },
  "tools": {"toolSearch": false},
}`, os.Args[0], upstreamEnv))
	var changed atomic.Int32
	sess, _, stderr := serveInProcess(t, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { changed.Add(1) },
	}, "--config", cfg)
	require.Eventually(t, func() bool { return len(listSDKNames(t, sess)) == 3 }, time.Minute, 20*time.Millisecond, stderr.String())
	assert.Equal(t, []string{"close_issue", "create_issue", "send_email"}, listSDKNames(t, sess), "toolSearch: false serves every tool directly")
	require.Eventually(t, func() bool { return changed.Load() > 0 }, 10*time.Second, 10*time.Millisecond, "tools/list_changed as servers came up")
	assert.Contains(t, stderr.String(), "serving every tool of 2 server(s) directly (off mode)")
	text, isErr := sdkCall(t, sess, "send_email", map[string]any{"title": "direct"})
	require.False(t, isErr, text)
	assert.Equal(t, "sent: direct", text)

	sess, _, stderr = serveInProcess(t, nil, "--config", cfg, "--mode", "tools")
	assert.Contains(t, stderr.String(), "--mode tools overrides the mode of "+cfg+" (off)")
	assert.Equal(t, []string{"tool_call", "tool_describe", "tool_search"}, listSDKNames(t, sess))
}

func listSDKNames(t *testing.T, sess *sdk.ClientSession) []string {
	t.Helper()
	var out []string
	for tool, err := range sess.Tools(t.Context(), nil) {
		require.NoError(t, err)
		out = append(out, tool.Name)
	}
	sort.Strings(out)
	return out
}

func TestMCPServeHTTPAccess(t *testing.T) {
	cfg := upstreamConfig(t, "tools")
	t.Setenv(tokenEnv, "")
	code, _, stderr := runCLI(t, "", "mcp", "serve", "--config", cfg, "--http", "0.0.0.0:0")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "can be reached from other machines")
	assert.Contains(t, stderr, tokenEnv+"=<a long random secret>")
	assert.Contains(t, stderr, "--token")
	code, _, stderr = runCLI(t, "", "mcp", "serve", "--config", cfg, "--http", ":0")
	assert.Equal(t, exitUsage, code, "no host is every interface")
	assert.Contains(t, stderr, tokenEnv)

	const token = "a-long-random-secret-for-the-test"
	t.Setenv(tokenEnv, token)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errb := &lockedBuffer{}
	exited := make(chan int, 1)
	go func() {
		exited <- run(ctx, []string{"mcp", "serve", "--config", cfg, "--http", "0.0.0.0:0"}, strings.NewReader(""), &lockedBuffer{}, errb)
	}()
	addr := regexp.MustCompile(`at http://\[?[0-9a-f:.]+\]?:(\d+)/mcp \(bearer token required\)`)
	require.Eventually(t, func() bool { return addr.MatchString(errb.String()) }, time.Minute, 20*time.Millisecond, errb.String())
	url := "http://127.0.0.1:" + addr.FindStringSubmatch(errb.String())[1] + "/mcp"
	assert.NotContains(t, errb.String(), token, "the token is never logged")

	status := func(header map[string]string) int {
		req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}`))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range header {
			req.Header.Set(k, v)
		}
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		assert.NotContains(t, string(body), token)
		return res.StatusCode
	}
	assert.Equal(t, http.StatusUnauthorized, status(nil), "no token")
	assert.Equal(t, http.StatusUnauthorized, status(map[string]string{"Authorization": "Bearer " + token + "x"}))
	assert.Equal(t, http.StatusOK, status(map[string]string{"Authorization": "Bearer " + token}))
	assert.Equal(t, http.StatusForbidden, status(map[string]string{"Authorization": "Bearer " + token, "Origin": "http://evil.example"}),
		"a foreign origin")

	cancel()
	select {
	case code := <-exited:
		assert.Equal(t, exitOK, code, errb.String())
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not stop when its context ended")
	}
	assert.NotContains(t, errb.String(), token, "the token is never logged")
}
