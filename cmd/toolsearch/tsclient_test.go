package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// slowUpstreamEnv makes this test binary play an upstream that takes a while to start: "<ms>:<name>" waits that
// long before it reads its first message, then serves as serveUpstream(name) does. It is how a server fetched
// by npx on first use looks to its client.
const slowUpstreamEnv = "TOOLSEARCH_CMD_TEST_SLOW_UPSTREAM"

func init() {
	if v := os.Getenv(slowUpstreamEnv); v != "" {
		ms, name, _ := strings.Cut(v, ":")
		n, _ := strconv.Atoi(ms)
		time.Sleep(time.Duration(n) * time.Millisecond)
		os.Exit(serveUpstream(name))
	}
}

// tsClientDir holds the official MCP TypeScript SDK (package.json, installed by .ci/run with npm ci) and the
// client script that drives toolsearch with it.
const tsClientDir = "testdata/tsclient"

// requireTSClient returns node and the client script, or skips (fails under CI=true) saying what is missing.
func requireTSClient(t *testing.T) (node, script string) {
	t.Helper()
	missing := func(what string) {
		msg := what + "; run `npm ci` in cmd/toolsearch/" + tsClientDir + " (CI does)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node is not installed")
	}
	if _, err := os.Stat(filepath.Join(tsClientDir, "node_modules/@modelcontextprotocol/sdk/package.json")); err != nil {
		missing("the MCP TypeScript SDK is not installed")
	}
	script, err = filepath.Abs(filepath.Join(tsClientDir, "client.mjs"))
	require.NoError(t, err)
	return node, script
}

// tsResult is what client.mjs prints.
type tsResult struct {
	InitializeMs int `json:"initializeMs"`
	Results      []struct {
		Name                  string `json:"name"`
		SentAfterInitializeMs int    `json:"sentAfterInitializeMs"`
		TookMs                int    `json:"tookMs"`
		IsError               bool   `json:"isError"`
		Text                  string `json:"text"`
		Error                 string `json:"error"`
	} `json:"results"`
	// Elicitations are the approvals (elicitation/create) the server asked of the client's user.
	Elicitations []struct {
		Message         string          `json:"message"`
		RequestedSchema json.RawMessage `json:"requestedSchema"`
		Mode            string          `json:"mode"`
	} `json:"elicitations"`
}

// tsCall runs the TypeScript SDK client once against the server spec describes (see client.mjs).
func tsCall(t *testing.T, node, script string, spec map[string]any) tsResult {
	t.Helper()
	raw, err := json.Marshal(spec)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script, string(raw))
	cmd.Dir = tsClientDir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) } // the client and the server it started
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "client.mjs: %s", stderr.String())
	var res tsResult
	require.NoError(t, json.Unmarshal(out, &res), "client.mjs printed %s; stderr: %s", out, stderr.String())
	return res
}

// slowServersConfig writes a config whose two servers take startMs to start, plus extra entries (JSON members).
func slowServersConfig(t *testing.T, mode string, startMs int, extra string) string {
	t.Helper()
	return writeFile(t, "config.json", fmt.Sprintf(`{
  mcpServers: {
    github: {command: %q, args: ["-test.run=^$"], env: {%q: "%d:github"}},
    mail: {command: %[1]q, args: ["-test.run=^$"], env: {%[2]q: "%[3]d:mail"}},%s
  },
  tools: {toolSearch: {mode: %q}},
}`, os.Args[0], slowUpstreamEnv, startMs, extra, mode))
}

// callsFor are the calls a client makes the moment it has connected, in each mode: a search and the call of
// what it found, or the call of a tool by its id or name.
func callsFor(mode string) (calls []map[string]any, want []string) {
	switch mode {
	case "code":
		return []map[string]any{{"name": "tool_search_code", "arguments": map[string]any{"code": `
			const [hit] = await openclaw.tools.search("create a github issue", {limit: 1});
			const r = await openclaw.tools.call(hit.id, {title: "from code"});
			return hit.id + " " + r.result.content[0].text`}}}, []string{`mcp:github:create_issue created issue: from code`}
	case "off":
		return []map[string]any{{"name": "send_email", "arguments": map[string]any{"title": "hi"}}}, []string{"sent: hi"}
	}
	return []map[string]any{
		{"name": "tool_search", "arguments": map[string]any{"query": "open a github issue"}},
		{"name": "tool_call", "arguments": map[string]any{"id": "mcp:mail:send_email", "args": map[string]any{"title": "hi"}}},
	}, []string{"mcp:github:create_issue", "sent: hi"}
}

// serveHTTP starts the binary as `mcp serve --http` and returns its URL; the process (and its servers, in its
// process group) is ended when the test ends.
func serveHTTP(t *testing.T, bin, cfg string) string {
	t.Helper()
	cmd := exec.Command(bin, "mcp", "serve", "--config", cfg, "--http", "127.0.0.1:0")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	})
	addr := regexp.MustCompile(`at (http://127\.0\.0\.1:\d+/mcp)`)
	lines := bufio.NewScanner(stderr)
	for lines.Scan() {
		if m := addr.FindStringSubmatch(lines.Text()); m != nil {
			go func() { _, _ = io.Copy(io.Discard, stderr) }()
			return m[1]
		}
	}
	t.Fatal("mcp serve printed no address")
	return ""
}

// TestTSClientCallsAtOnceWhileServersStart is the first contact of most users: an MCP client of the official
// TypeScript SDK starts `toolsearch mcp serve` and calls the moment initialize is answered, while the servers
// behind it still take 2 s to start. Every call waits for them and succeeds; none is told a tool is missing.
func TestTSClientCallsAtOnceWhileServersStart(t *testing.T) {
	node, script := requireTSClient(t)
	bin := filepath.Join(t.TempDir(), "toolsearch")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "go build: %s", out)

	const startMs = 2000
	for _, transport := range []string{"stdio", "http"} {
		for _, mode := range []string{"code", "tools", "directory", "off"} {
			t.Run(transport+"/"+mode, func(t *testing.T) {
				cfg := slowServersConfig(t, mode, startMs, "")
				calls, want := callsFor(mode)
				spec := map[string]any{"calls": calls}
				if transport == "http" {
					spec["url"] = serveHTTP(t, bin, cfg)
				} else {
					spec["command"], spec["args"] = bin, []string{"mcp", "serve", "--config", cfg}
				}
				res := tsCall(t, node, script, spec)
				require.Len(t, res.Results, len(calls))
				var texts []string
				for _, r := range res.Results {
					require.Empty(t, r.Error, "%s failed as a request", r.Name)
					assert.False(t, r.IsError, "%s: %s", r.Name, r.Text)
					assert.Less(t, r.SentAfterInitializeMs, startMs/2, "%s was sent while the servers were starting", r.Name)
					for _, lie := range []string{"No tool", "Unknown tool", "not available", "still starting"} {
						assert.NotContains(t, r.Text, lie, r.Name)
					}
					texts = append(texts, r.Text)
				}
				for _, w := range want {
					assert.Contains(t, strings.Join(texts, "\n"), w)
				}
			})
		}
	}
}

// TestTSClientNamesAServerThatNeverStarts: one server never answers. The calls to the other one succeed, and an
// answer the silent one could have changed names it, instead of saying that no tool matched.
func TestTSClientNamesAServerThatNeverStarts(t *testing.T) {
	node, script := requireTSClient(t)
	bin := filepath.Join(t.TempDir(), "toolsearch")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	hung := fmt.Sprintf("\n    silent: {command: %q, args: [\"-test.run=^$\"], env: {%q: \"hung\"}, startTimeoutMs: 3000},",
		os.Args[0], upstreamEnv)

	for _, mode := range []string{"code", "tools", "off"} {
		t.Run(mode, func(t *testing.T) {
			cfg := slowServersConfig(t, mode, 500, hung)
			var calls []map[string]any
			switch mode {
			case "code":
				calls = []map[string]any{{"name": "tool_search_code", "arguments": map[string]any{"code": `
					const hits = await openclaw.tools.search("forecast the weather");
					const r = await openclaw.tools.call("mcp:mail:send_email", {title: "hi"});
					return [hits.length, r.result.content[0].text]`}}}
			case "tools":
				calls = []map[string]any{
					{"name": "tool_search", "arguments": map[string]any{"query": "forecast the weather"}},
					{"name": "tool_call", "arguments": map[string]any{"id": "mcp:silent:forecast"}},
					{"name": "tool_call", "arguments": map[string]any{"id": "mcp:mail:send_email", "args": map[string]any{"title": "hi"}}},
				}
			case "off":
				calls = []map[string]any{
					{"name": "forecast"},
					{"name": "send_email", "arguments": map[string]any{"title": "hi"}},
				}
			}
			res := tsCall(t, node, script, map[string]any{"command": bin, "args": []string{"mcp", "serve", "--config", cfg}, "calls": calls})
			require.Len(t, res.Results, len(calls))
			var all []string
			for _, r := range res.Results {
				require.Empty(t, r.Error, "%s failed as a request", r.Name)
				all = append(all, r.Text)
				assert.NotContains(t, r.Text, "No tool has", r.Name)
			}
			text := strings.Join(all, "\n")
			assert.Contains(t, text, "sent: hi", "the server that started answers")
			assert.Regexp(t, `[Ss]erver \\?"silent\\?" is (still starting|not available)`, text, "the silent server is named")
		})
	}
}

// TestTSClientThroughBannerServers: four real servers from npm that print a line on stdout before they speak
// JSON-RPC (as many do: "Knowledge Graph MCP Server running on stdio"). Other clients skip such lines; behind mcp
// serve each must start, be searchable and answer a call, and the skipped lines are reported.
func TestTSClientThroughBannerServers(t *testing.T) {
	node, script := requireTSClient(t)
	bin := filepath.Join(t.TempDir(), "toolsearch")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "go build: %s", out)
	binDir, err := filepath.Abs(filepath.Join(tsClientDir, "node_modules", ".bin"))
	require.NoError(t, err)
	for _, s := range []string{"time-mcp", "mcp-server-commands", "mcp-server-filesystem", "mcp-server-code-runner"} {
		if _, err := os.Stat(filepath.Join(binDir, s)); err != nil {
			requireTSClient(t) // same message
			t.Fatalf("%s is not installed under %s", s, binDir)
		}
	}
	files := t.TempDir()
	cfg := writeFile(t, "config.json", fmt.Sprintf(`{
  mcpServers: {
    time: {command: %q},
    commands: {command: %q},
    filesystem: {command: %q, args: ["--allowed-directories", %q]},
    coderunner: {command: %q},
  },
  tools: {toolSearch: {mode: "tools"}},
}`, filepath.Join(binDir, "time-mcp"), filepath.Join(binDir, "mcp-server-commands"), filepath.Join(binDir, "mcp-server-filesystem"),
		files, filepath.Join(binDir, "mcp-server-code-runner")))

	calls := []map[string]any{
		{"name": "tool_call", "arguments": map[string]any{"id": "mcp:time:current_time", "args": map[string]any{"timezone": "UTC"}}},
		{"name": "tool_call", "arguments": map[string]any{"id": "mcp:commands:run_command", "args": map[string]any{"command": "echo banner-ok"}}},
		{"name": "tool_call", "arguments": map[string]any{"id": "mcp:filesystem:list_allowed_directories"}},
		{"name": "tool_call", "arguments": map[string]any{"id": "mcp:coderunner:run-code", "args": map[string]any{"code": "console.log(6*7)", "languageId": "javascript"}}},
		{"name": "tool_search", "arguments": map[string]any{"queries": []string{"current time", "run a shell command", "list allowed directories", "run code"}}},
	}
	stderr := filepath.Join(t.TempDir(), "stderr")
	res := tsCall(t, node, script, map[string]any{"command": "sh", "args": []string{"-c", `exec "$0" mcp serve --config "$1" 2>"$2"`, bin, cfg, stderr}, "calls": calls})
	require.Len(t, res.Results, len(calls))
	for _, r := range res.Results {
		require.Empty(t, r.Error, "%s failed as a request", r.Name)
		assert.False(t, r.IsError, "%s: %s", r.Name, r.Text)
	}
	assert.Contains(t, res.Results[1].Text, "banner-ok")
	assert.Contains(t, res.Results[2].Text, filepath.Base(files))
	assert.Contains(t, res.Results[3].Text, "42")
	for _, id := range []string{"mcp:time:current_time", "mcp:commands:run_command", "mcp:filesystem:list_allowed_directories", "mcp:coderunner:run-code"} {
		assert.Contains(t, res.Results[4].Text, id)
	}
	log, err := os.ReadFile(stderr)
	require.NoError(t, err)
	assert.Contains(t, string(log), `mcp: time: skipped a line on stdout that is not JSON-RPC: "Starting Time MCP server..."`)
	assert.Contains(t, string(log), `mcp: coderunner: skipped a line on stdout that is not JSON-RPC: "Code Runner MCP Server running on stdio"`)
}
