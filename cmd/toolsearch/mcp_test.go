package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/mcp"
	"github.com/toolsearch/toolsearch/runtime"
)

// upstreamEnv makes this test binary play an upstream MCP server on stdio (see init), so `toolsearch mcp serve`
// has real servers to front without node. It is an init, not a TestMain, so that it coexists with any TestMain
// of the package.
const upstreamEnv = "TOOLSEARCH_CMD_TEST_UPSTREAM"

func init() {
	if name := os.Getenv(upstreamEnv); name != "" {
		os.Exit(serveUpstream(name))
	}
}

// serveUpstream serves its tools directly (Tool Search off), as any plain MCP server would: "github" has two
// issue tools, any other name one mail tool.
func serveUpstream(name string) int {
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
		tools = []catalog.Tool{
			tool("create_issue", "Create an issue in a GitHub repository.", "created issue: "),
			tool("close_issue", "Close an issue of a GitHub repository.", "closed issue: "),
		}
	}
	srv, err := mcp.NewServer(ctx, rt, nil, &mcp.ServerOptions{Name: name, Tools: tools})
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
		file string
		flag runtime.Mode
		want runtime.Mode
	}{
		{`{}`, "", runtime.ModeCode},
		{`{"tools": {"toolSearch": false}}`, "", runtime.ModeCode},
		{`{"tools": {"toolSearch": {"mode": "directory"}}}`, "", runtime.ModeDirectory},
		{`{"tools": {"toolSearch": {"mode": "directory"}}}`, runtime.ModeTools, runtime.ModeTools},
		{`{"tools": {"toolSearch": {"enabled": false, "mode": "tools", "codeTimeoutMs": 2000}}}`, "", runtime.ModeCode},
	}
	for _, tc := range tests {
		_, cfg, err := loadServeConfig(writeFile(t, "c.json", tc.file), tc.flag)
		require.NoError(t, err, tc.file)
		assert.True(t, cfg.Enabled, tc.file)
		assert.Equal(t, tc.want, cfg.Mode, tc.file)
	}
	_, cfg, err := loadServeConfig(writeFile(t, "c.json", `{"tools": {"toolSearch": {"codeTimeoutMs": 2000}}}`), "")
	require.NoError(t, err)
	assert.Equal(t, 2000, cfg.CodeTimeoutMs, "the file's limits apply")
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
func client(t *testing.T, server mcp.ServerConfig) (*mcp.Source, map[string]catalog.Tool) {
	t.Helper()
	progress := &lockedBuffer{}
	src, err := mcp.New(t.Context(), &mcp.Config{Servers: map[string]mcp.ServerConfig{"toolsearch": server}},
		&mcp.Options{Progress: progress, ServerStderr: progress, StartTimeout: time.Minute})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, src.Close(context.Background())) })
	require.Equal(t, mcp.StateReady, src.Status()[0].State, "%v\n%s", src.Status()[0].Err, progress.String())
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
	assert.Contains(t, stderr.String(), "mcp: github: ready: 2 tool(s)", "progress on stderr")
	assert.Contains(t, stderr.String(), "toolsearch: 3 tool(s) of 2/2 server(s) behind tools mode")

	_, tools := client(t, mcp.ServerConfig{URL: url})
	assert.ElementsMatch(t, []string{"tool_search", "tool_describe", "tool_call"}, toolNames(tools))
	text, isErr := callTool(t, tools, "tool_search", map[string]any{"query": "send an email"})
	require.False(t, isErr, text)
	assert.Contains(t, text, "mcp:mail:send_email")
	text, isErr = callTool(t, tools, "tool_call", map[string]any{"id": "mcp:mail:send_email", "args": map[string]any{"title": "hi"}})
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
		_, tools := client(t, mcp.ServerConfig{Command: bin, Args: []string{"mcp", "serve", "--config", cfg}})
		assert.ElementsMatch(t, []string{"tool_search", "tool_describe", "tool_call"}, toolNames(tools))
		text, isErr := callTool(t, tools, "tool_search", map[string]any{"query": "open a github issue"})
		require.False(t, isErr, text)
		assert.Contains(t, text, "mcp:github:create_issue")
		text, isErr = callTool(t, tools, "tool_describe", map[string]any{"id": "mcp:github:create_issue"})
		require.False(t, isErr, text)
		assert.Contains(t, text, `"required"`)
		text, isErr = callTool(t, tools, "tool_call", map[string]any{"id": "mcp:github:create_issue", "args": map[string]any{"title": "it works"}})
		require.False(t, isErr, text)
		assert.Contains(t, text, "created issue: it works")
		text, isErr = callTool(t, tools, "tool_call", map[string]any{"id": "mcp:github:create_issue", "args": map[string]any{}})
		assert.True(t, isErr, "the pipeline validates arguments against the upstream schema: %s", text)
	})

	t.Run("code", func(t *testing.T) {
		_, tools := client(t, mcp.ServerConfig{Command: bin, Args: []string{"mcp", "serve", "--config", cfg, "--mode", "code"}})
		assert.Equal(t, []string{"tool_search_code"}, toolNames(tools))
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
	cfg := &mcp.Config{Servers: map[string]mcp.ServerConfig{
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
