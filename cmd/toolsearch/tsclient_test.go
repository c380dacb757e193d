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
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/internal/testskip"
	"github.com/toolsearch/toolsearch/runtime"
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
		testskip.Missing(t, what+"; run `npm ci` in cmd/toolsearch/"+tsClientDir+" (CI does)")
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
		// Progress counts the progress notifications the call heard (spec "resetTimeoutOnProgress").
		Progress int `json:"progress"`
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
	res, err := tsCallErr(t.Context(), node, script, spec)
	require.NoError(t, err)
	return res
}

// tsCallErr is tsCall for a goroutine of a test, which may not stop the test itself.
func tsCallErr(ctx context.Context, node, script string, spec map[string]any) (tsResult, error) {
	return tsCallWithin(ctx, 2*time.Minute, node, script, spec)
}

// tsCallWithin is tsCallErr with the client process given up to limit.
func tsCallWithin(ctx context.Context, limit time.Duration, node, script string, spec map[string]any) (tsResult, error) {
	raw, err := json.Marshal(spec)
	if err != nil {
		return tsResult{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script, string(raw))
	cmd.Dir = tsClientDir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) } // the client and the server it started
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return tsResult{}, fmt.Errorf("client.mjs: %w: %s", err, stderr.String())
	}
	var res tsResult
	if err := json.Unmarshal(out, &res); err != nil {
		return tsResult{}, fmt.Errorf("client.mjs printed %s (%w); stderr: %s", out, err, stderr.String())
	}
	return res, nil
}

// The TypeScript-client tests share one build of the binary: a build per test costs seconds of a shared
// machine's two cores.
var (
	binOnce sync.Once
	binPath string
	binErr  error
	binDir  string
)

// toolsearchBinary builds the toolsearch binary once for the package's tests (removed by TestMain).
func toolsearchBinary(t testing.TB) string {
	t.Helper()
	binOnce.Do(func() {
		if binDir, binErr = os.MkdirTemp("", "toolsearch-bin-"); binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "toolsearch")
		if out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput(); err != nil {
			binErr = fmt.Errorf("go build: %w: %s", err, out)
		}
	})
	require.NoError(t, binErr)
	return binPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	testskip.Report()
	os.Exit(code)
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
	url, _ := serveHTTPEnv(t, bin, cfg, nil)
	return url
}

// serveHTTPEnv is serveHTTP with variables added to the process's environment (KEY=value), also returning what
// the process writes on stderr.
func serveHTTPEnv(t *testing.T, bin, cfg string, env []string) (string, *lockedBuffer) {
	t.Helper()
	cmd := exec.Command(bin, "mcp", "serve", "--config", cfg, "--http", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), env...)
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
	printed := &lockedBuffer{}
	for lines.Scan() {
		printed.Write([]byte(lines.Text() + "\n"))
		if m := addr.FindStringSubmatch(lines.Text()); m != nil {
			go func() { _, _ = io.Copy(printed, stderr) }()
			return m[1], printed
		}
	}
	t.Fatalf("mcp serve printed no address: %s", printed)
	return "", nil
}

// TestTSClientCallsAtOnceWhileServersStart is the first contact of most users: an MCP client of the official
// TypeScript SDK starts `toolsearch mcp serve` and calls the moment initialize is answered, while the servers
// behind it still take 2 s to start. Every call waits for the server it needs and succeeds; none is told a tool
// is missing.
func TestTSClientCallsAtOnceWhileServersStart(t *testing.T) {
	node, script := requireTSClient(t)
	bin := toolsearchBinary(t)

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
					// A call answered from the server that came up first may name the other as still starting:
					// that is the truth, not a missing tool.
					for _, lie := range []string{"No tool", "Unknown tool", "not available"} {
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
	bin := toolsearchBinary(t)
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
	bin := toolsearchBinary(t)
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
	}
	// The search goes once every server has answered a call: sent beside the calls, it may rightly be answered
	// from the servers ready by then when they have every word of it ("run a shell command" in the filesystem
	// server's descriptions while the server "commands" starts), naming the others as still starting.
	search := map[string]any{"name": "tool_search", "arguments": map[string]any{"queries": []string{"current time", "run a shell command", "list allowed directories", "run code"}}}
	stderr := filepath.Join(t.TempDir(), "stderr")
	res := tsCall(t, node, script, map[string]any{"command": "sh", "args": []string{"-c", `exec "$0" mcp serve --config "$1" 2>"$2"`, bin, cfg, stderr},
		"calls": calls, "then": []map[string]any{search}})
	require.Len(t, res.Results, len(calls)+1)
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

// approvalConfig is a config file as a user writes one to be asked before anything destructive: every tool of
// these untrusted servers counts as destructive, so tools.ask holds each call, except github's create_issue,
// which the server's autoApprove lets through; close_issue is denied. tools is more of the "tools" object
// (profiles), servers more servers, githubEnv more of github's environment.
type approvalConfig struct {
	mode                      string
	approvalMs                int
	pinFile                   string
	tools, servers, githubEnv string
}

func (c approvalConfig) write(t *testing.T) string {
	t.Helper()
	if c.approvalMs == 0 {
		// An approval ends when the client answers; only a test of the timeout itself sets a short one. A bound of
		// a second was missed on a busy machine by a client that answered at once.
		c.approvalMs = 60_000
	}
	pin := ""
	if c.pinFile != "" {
		pin = fmt.Sprintf("pinFile: %q, ", c.pinFile)
	}
	return writeFile(t, "config.json5", fmt.Sprintf(`{
  mcpServers: {
    github: {command: %q, args: ["-test.run=^$"], env: {%q: "github"%s}, autoApprove: ["create_issue"]},
    mail: {command: %[1]q, args: ["-test.run=^$"], env: {%[2]q: "mail"}},%[4]s
  },
  tools: {
    deny: ["mcp:github:close_issue"],
    // ask me before anything that can change or destroy something
    ask: ["annotation:destructive"],%[5]s
    toolSearch: {mode: %[6]q, %[7]sapprovalTimeoutMs: %[8]d, codeTimeoutMs: 1000},
  },
}`, os.Args[0], upstreamEnv, c.githubEnv, c.servers, c.tools, c.mode, pin, c.approvalMs))
}

// stdioSpec is the client spec that starts `mcp serve` on cfg over stdio, with a session log in logs.
func stdioSpec(bin, cfg, logs string, calls []map[string]any) map[string]any {
	return map[string]any{"command": bin, "args": []string{"mcp", "serve", "--config", cfg, "--session-log", logs}, "calls": calls}
}

// loggedDecisions reads the call records of every session log in dir, by tool id, once want calls are there
// (the log is written as calls end, and the server may still be writing when its client is done).
func loggedDecisions(t *testing.T, dir string, want int) map[string][]runtime.CallDecision {
	t.Helper()
	var out map[string][]runtime.CallDecision
	require.Eventually(t, func() bool {
		out = map[string][]runtime.CallDecision{}
		n := 0
		files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
		for _, f := range files {
			data, _ := os.ReadFile(f)
			for _, line := range strings.Split(string(data), "\n") {
				var rec runtime.Record
				if json.Unmarshal([]byte(line), &rec) == nil && rec.Type == runtime.RecordCall && rec.Call != nil {
					d := rec.Call.Decision
					d.Waited = 0
					out[rec.Call.ToolID] = append(out[rec.Call.ToolID], d)
					n++
				}
			}
		}
		return n >= want
	}, 30*time.Second, 50*time.Millisecond, "session logs in %s", dir)
	return out
}

// toolCall is a tool_call of tools mode.
func toolCall(id string, args map[string]any) map[string]any {
	return map[string]any{"name": runtime.ToolCallName, "arguments": map[string]any{"id": id, "args": args}}
}

// TestTSClientApprovals: a client of the official TypeScript SDK that declares elicitation is asked about each
// call tools.ask holds, and its user's answer decides: accept runs the call, decline and cancel block it with a
// reason the model can read, no answer blocks it at approvalTimeoutMs; a client without elicitation is told the
// rule and the key to edit. A call autoApprove lifts, or that needs no approval, asks nobody; a denied tool is
// unknown. One case goes through a real npm server (time-mcp). The session log records each decision.
func TestTSClientApprovals(t *testing.T) {
	node, script := requireTSClient(t)
	bin := toolsearchBinary(t)
	timeMCP, err := filepath.Abs(filepath.Join(tsClientDir, "node_modules", ".bin", "time-mcp"))
	require.NoError(t, err)
	if _, err := os.Stat(timeMCP); err != nil {
		t.Fatalf("time-mcp is not installed: %v", err)
	}
	held := toolCall("mcp:mail:send_email", map[string]any{"title": "quarterly report"})
	decision := func(approval, by string) runtime.CallDecision {
		return runtime.CallDecision{Policy: runtime.PolicyAllowed, Rule: `ask by agent ask "annotation:destructive"`,
			ApprovalRequired: true, Approval: approval, By: by}
	}

	t.Run("accept", func(t *testing.T) {
		t.Parallel()
		cfg := approvalConfig{mode: "tools", servers: fmt.Sprintf("\n    time: {command: %q},", timeMCP)}.write(t)
		logs := t.TempDir()
		spec := stdioSpec(bin, cfg, logs, []map[string]any{
			held,
			toolCall("mcp:time:current_time", map[string]any{"timezone": "UTC"}),
			toolCall("mcp:github:create_issue", map[string]any{"title": "no question"}),
			toolCall("mcp:github:close_issue", map[string]any{"title": "denied"}),
		})
		spec["elicit"] = map[string]any{"action": "accept"}
		res := tsCall(t, node, script, spec)
		require.Len(t, res.Results, 4)
		for _, r := range res.Results[:3] {
			require.Empty(t, r.Error)
			assert.False(t, r.IsError, r.Text)
		}
		assert.Contains(t, res.Results[0].Text, "sent: quarterly report")
		assert.Contains(t, res.Results[1].Text, "UTC", "the npm server's tool ran once approved")
		assert.Contains(t, res.Results[2].Text, "created issue: no question")
		assert.True(t, res.Results[3].IsError)
		assert.Contains(t, res.Results[3].Text, "Unknown tool id: mcp:github:close_issue")

		require.Len(t, res.Elicitations, 2, "the two held calls, and nothing else, were put to the user")
		var mail, clock string
		for _, e := range res.Elicitations {
			assert.Equal(t, "form", e.Mode)
			assert.Contains(t, string(e.RequestedSchema), "approve_for_session")
			if strings.Contains(e.Message, "mcp:mail:send_email") {
				mail = e.Message
			} else {
				clock = e.Message
			}
		}
		for _, want := range []string{"Tool: mcp:mail:send_email", "Server: mail", `"annotation:destructive"`,
			`{"title":"quarterly report"}`, "treated as destructive"} {
			assert.Contains(t, mail, want)
		}
		assert.Contains(t, clock, "Tool: mcp:time:current_time")
		assert.Contains(t, clock, `{"timezone":"UTC"}`)

		got := loggedDecisions(t, logs, 3)
		assert.Equal(t, []runtime.CallDecision{decision(runtime.ApprovalApproved, "elicitation:c1")}, got["mcp:mail:send_email"])
		assert.Equal(t, []runtime.CallDecision{decision(runtime.ApprovalApproved, "elicitation:c1")}, got["mcp:time:current_time"])
		assert.Equal(t, []runtime.CallDecision{{Policy: runtime.PolicyAllowed,
			Rule: `allowed (agent autoApprove "listed:github:create_issue" lifts ask "annotation:destructive")`, Approval: runtime.ApprovalApproved,
			By: "policy"}}, got["mcp:github:create_issue"])
	})

	for _, tc := range []struct {
		action, want, approval string
		blockedAfterMs         int // also the approval timeout when set (the default is long: answers end it)
	}{
		{"decline", "Tool call blocked: the user declined to run mcp:mail:send_email.", runtime.ApprovalDeclined, 0},
		{"cancel", "the user dismissed the approval of mcp:mail:send_email without approving it", runtime.ApprovalDeclined, 0},
		{"never", "Tool call blocked: approval of mcp:mail:send_email timed out after 1000 ms.", runtime.ApprovalTimedOut, 1000},
	} {
		t.Run(tc.action, func(t *testing.T) {
			t.Parallel()
			logs := t.TempDir()
			spec := stdioSpec(bin, approvalConfig{mode: "tools", approvalMs: tc.blockedAfterMs}.write(t), logs, []map[string]any{held})
			spec["elicit"] = map[string]any{"action": tc.action}
			res := tsCall(t, node, script, spec)
			require.Len(t, res.Results, 1)
			r := res.Results[0]
			require.Empty(t, r.Error)
			assert.True(t, r.IsError)
			assert.Contains(t, r.Text, tc.want)
			assert.NotContains(t, r.Text, "sent:")
			assert.Len(t, res.Elicitations, 1)
			assert.GreaterOrEqual(t, r.TookMs, tc.blockedAfterMs)
			by := "elicitation:c1"
			if tc.action == "never" {
				by = ""
			}
			assert.Equal(t, []runtime.CallDecision{decision(tc.approval, by)}, loggedDecisions(t, logs, 1)["mcp:mail:send_email"])
		})
	}

	t.Run("no elicitation", func(t *testing.T) {
		t.Parallel()
		logs := t.TempDir()
		res := tsCall(t, node, script, stdioSpec(bin, approvalConfig{mode: "tools"}.write(t), logs, []map[string]any{held}))
		require.Len(t, res.Results, 1)
		r := res.Results[0]
		require.Empty(t, r.Error)
		assert.True(t, r.IsError)
		assert.Contains(t, r.Text, `mcp:mail:send_email needs approval (policy: annotation:destructive), but this MCP `+
			`client did not declare elicitation, so it cannot ask its user; add "send_email" to mcpServers.mail.autoApprove, `+
			`or remove "annotation:destructive" from tools.ask`)
		assert.Empty(t, res.Elicitations)
		assert.Equal(t, []runtime.CallDecision{decision(runtime.ApprovalNotAsked, "front")},
			loggedDecisions(t, logs, 1)["mcp:mail:send_email"], "nobody was asked, so nobody declined")
	})

	// A script's call waits for its user longer than the script may run (codeTimeoutMs 1000): the script is
	// suspended meanwhile, and finishes once the call is approved.
	t.Run("code mode outlasting codeTimeoutMs", func(t *testing.T) {
		t.Parallel()
		logs := t.TempDir()
		spec := stdioSpec(bin, approvalConfig{mode: "code", approvalMs: 30000}.write(t), logs, []map[string]any{{
			"name": runtime.ToolSearchCodeName, "arguments": map[string]any{"code": `
				const r = await openclaw.tools.call("mcp:mail:send_email", {title: "after a long think"});
				return r.result.content[0].text`}}})
		spec["elicit"] = map[string]any{"action": "accept", "delayMs": 2500}
		res := tsCall(t, node, script, spec)
		require.Len(t, res.Results, 1)
		r := res.Results[0]
		require.Empty(t, r.Error)
		assert.False(t, r.IsError, r.Text)
		assert.Contains(t, r.Text, "sent: after a long think")
		assert.GreaterOrEqual(t, r.TookMs, 2500, "the answer took longer than codeTimeoutMs")
		assert.Len(t, res.Elicitations, 1)
		assert.Equal(t, runtime.ApprovalApproved, loggedDecisions(t, logs, 1)["mcp:mail:send_email"][0].Approval)
	})
}

// TestTSClientTwoClientsAnswerTheirOwn: two TypeScript clients over one `mcp serve --http` call the same held
// tool at once; each user is asked about their own client's call only, one accepts and one declines, and each
// answer decides its own call.
func TestTSClientTwoClientsAnswerTheirOwn(t *testing.T) {
	t.Parallel()
	node, script := requireTSClient(t)
	bin := toolsearchBinary(t)
	url, _ := serveHTTPEnv(t, bin, approvalConfig{mode: "tools", approvalMs: 30000}.write(t), nil)

	type outcome struct {
		res tsResult
		err error
	}
	answers := map[string]string{"alice": "accept", "bob": "decline"}
	outcomes := map[string]chan outcome{}
	for who, action := range answers {
		ch := make(chan outcome, 1)
		outcomes[who] = ch
		spec := map[string]any{"url": url, "calls": []map[string]any{toolCall("mcp:mail:send_email", map[string]any{"title": "from " + who})},
			// Both users take a while, so that both questions are open at once.
			"elicit": map[string]any{"action": action, "delayMs": 1500}}
		go func() {
			res, err := tsCallErr(t.Context(), node, script, spec)
			ch <- outcome{res, err}
		}()
	}
	for who, ch := range outcomes {
		o := <-ch
		require.NoError(t, o.err, who)
		require.Len(t, o.res.Results, 1, who)
		require.Len(t, o.res.Elicitations, 1, "%s was asked once, about their own call", who)
		assert.Contains(t, o.res.Elicitations[0].Message, `{"title":"from `+who+`"}`, who)
		r := o.res.Results[0]
		require.Empty(t, r.Error, who)
		if answers[who] == "accept" {
			assert.False(t, r.IsError, r.Text)
			assert.Contains(t, r.Text, "sent: from "+who)
		} else {
			assert.True(t, r.IsError)
			assert.Contains(t, r.Text, "the user declined to run mcp:mail:send_email")
		}
	}
}

// TestTSClientPinChangeReapproved: with pinFile set, a tool's definition is pinned at its first call; when its
// server comes back with another definition, the next call is put to the user through the same elicitation,
// saying what changed. Declining keeps it blocked; accepting runs it and pins the new definition, which a
// client that cannot ask then calls without a question.
func TestTSClientPinChangeReapproved(t *testing.T) {
	t.Parallel()
	node, script := requireTSClient(t)
	bin := toolsearchBinary(t)
	pins := filepath.Join(t.TempDir(), "pins.json")
	create := []map[string]any{toolCall("mcp:github:create_issue", map[string]any{"title": "t"})}
	serve := func(revision string, elicit map[string]any) tsResult {
		t.Helper()
		cfg := approvalConfig{mode: "tools", pinFile: pins, githubEnv: fmt.Sprintf(", %q: %q", upstreamRevisionEnv, revision)}.write(t)
		spec := stdioSpec(bin, cfg, t.TempDir(), create)
		if elicit != nil {
			spec["elicit"] = elicit
		}
		res := tsCall(t, node, script, spec)
		require.Len(t, res.Results, 1)
		require.Empty(t, res.Results[0].Error)
		return res
	}

	first := serve("1", nil)
	require.False(t, first.Results[0].IsError, "auto-approved, and pinned: %s", first.Results[0].Text)
	pinned, err := os.ReadFile(pins)
	require.NoError(t, err)
	assert.Contains(t, string(pinned), "mcp:github:create_issue")

	declined := serve("2", map[string]any{"action": "decline"})
	assert.True(t, declined.Results[0].IsError)
	assert.Contains(t, declined.Results[0].Text, "the user declined to run mcp:github:create_issue")
	require.Len(t, declined.Elicitations, 1, "autoApprove does not lift a changed definition")
	assert.Contains(t, declined.Elicitations[0].Message, "Changed: description since it was pinned")
	assert.Contains(t, declined.Elicitations[0].Message, "approving accepts the new definition")

	unasked := serve("2", nil)
	assert.True(t, unasked.Results[0].IsError, "still blocked: nobody accepted the change")
	assert.Contains(t, unasked.Results[0].Text, "accept its new definition with `toolsearch pins forget mcp:github:create_issue`")

	accepted := serve("2", map[string]any{"action": "accept"})
	require.False(t, accepted.Results[0].IsError, accepted.Results[0].Text)
	assert.Contains(t, accepted.Results[0].Text, "created issue: t")
	assert.Len(t, accepted.Elicitations, 1)

	after := serve("2", nil)
	assert.False(t, after.Results[0].IsError, "the accepted definition is pinned: %s", after.Results[0].Text)
}

// TestTSClientProfilesOverHTTP: one `mcp serve --http` with two tokens: TOOLSEARCH_MCP_TOKEN's clients get the
// file's policy, the CI profile's token (from the environment) a narrower one, which denies mail. The CI client
// cannot find, describe or call send_email, and off mode's tools/list differs; no token is ever printed, and a
// request with neither token is refused.
func TestTSClientProfilesOverHTTP(t *testing.T) {
	node, script := requireTSClient(t)
	bin := toolsearchBinary(t)
	const ciToken, fullToken = "ci-token-7f3a9c2e51", "full-token-0b8d4e6f13"
	env := []string{"TS_TEST_CI_AGENT_TOKEN=" + ciToken, tokenEnv + "=" + fullToken}
	profiles := `
    profiles: {
      // the CI agent files issues and sends no mail
      ci: {token: "${TS_TEST_CI_AGENT_TOKEN}", deny: ["server:mail"]},
    },`

	for _, mode := range []string{"tools", "off"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			url, stderr := serveHTTPEnv(t, bin, approvalConfig{mode: mode, tools: profiles}.write(t), env)
			var calls []map[string]any
			if mode == "tools" {
				calls = []map[string]any{
					{"name": runtime.ToolSearchName, "arguments": map[string]any{"query": "send an email"}},
					{"name": runtime.ToolDescribeName, "arguments": map[string]any{"id": "mcp:mail:send_email"}},
					toolCall("mcp:mail:send_email", map[string]any{"title": "hi"}),
					toolCall("mcp:github:create_issue", map[string]any{"title": "from ci"}),
				}
			} else {
				calls = []map[string]any{
					{"name": "send_email", "arguments": map[string]any{"title": "hi"}},
					{"name": "create_issue", "arguments": map[string]any{"title": "from ci"}},
				}
			}
			spec := func(token string) map[string]any {
				return map[string]any{"url": url, "token": token, "calls": calls, "listTools": mode == "off",
					"elicit": map[string]any{"action": "accept"}}
			}
			ci, err := tsCallErr(t.Context(), node, script, spec(ciToken))
			require.NoError(t, err, "mcp serve: %s", stderr)
			full, err := tsCallErr(t.Context(), node, script, spec(fullToken))
			require.NoError(t, err, "mcp serve: %s", stderr)
			texts := func(r tsResult) []string {
				var out []string
				for _, c := range r.Results {
					require.Empty(t, c.Error, c.Name)
					out = append(out, c.Text)
				}
				return out
			}
			ciText, fullText := texts(ci), texts(full)
			if mode == "tools" {
				assert.NotContains(t, ciText[0], "mcp:mail:send_email", "CI cannot find it")
				assert.Contains(t, fullText[0], "mcp:mail:send_email")
				assert.Contains(t, ciText[1], "Unknown tool id: mcp:mail:send_email", "nor describe it")
				assert.Contains(t, fullText[1], "Send an email")
				assert.Contains(t, ciText[2], "Unknown tool id: mcp:mail:send_email", "nor call it")
				assert.Contains(t, fullText[2], "sent: hi")
				assert.Contains(t, ciText[3], "created issue: from ci")
			} else {
				assert.Equal(t, `["create_issue"]`, ciText[0], "off mode lists only what the profile allows")
				assert.Equal(t, `["create_issue","send_email"]`, fullText[0])
				assert.NotContains(t, ciText[1], "sent: hi")
				assert.Contains(t, fullText[1], "sent: hi")
				assert.Contains(t, ciText[2], "created issue: from ci")
			}
			assert.Empty(t, ci.Elicitations, "the CI client was asked nothing: create_issue is auto-approved")
			assert.Len(t, full.Elicitations, 1, "the full client's user approved send_email")

			_, err = tsCallErr(t.Context(), node, script, map[string]any{"url": url, "token": "not-a-token", "calls": calls})
			require.Error(t, err, "a token of no profile is refused")
			assert.Contains(t, stderr.String(), "profiles ci, and the default one for "+tokenEnv)
			for _, tok := range []string{ciToken, fullToken} {
				assert.NotContains(t, stderr.String(), tok, "tokens are never printed")
			}
		})
	}
}

// TestTSClientHungServerDoesNotDelayAnswers: beside a server that never answers initialize (start timeout a
// minute), a client of the TypeScript SDK searches for a ready server's tool the moment it has connected, and
// lists resources, templates and prompts of a real server (server-everything) that is starting too. The search
// takes no longer than the control, the same calls without the hung server, and no list is empty because a
// server was starting. A wrong front waits for the hung server on every search.
func TestTSClientHungServerDoesNotDelayAnswers(t *testing.T) {
	node, script := requireTSClient(t)
	everything, err := filepath.Abs("../../mcp/testdata/npm/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
	require.NoError(t, err)
	if _, err := os.Stat(everything); err != nil {
		requireTSClient(t)
		if os.Getenv("CI") == "true" {
			t.Fatalf("server-everything is not installed: run npm ci in mcp/testdata/npm")
		}
		t.Skip("server-everything is not installed: run npm ci in mcp/testdata/npm")
	}
	bin := toolsearchBinary(t)
	config := func(mode string, hung bool) string {
		extra := fmt.Sprintf("\n    everything: {command: %q, args: [%q, \"stdio\"]},", node, everything)
		if hung {
			extra += fmt.Sprintf("\n    silent: {command: %q, args: [\"-test.run=^$\"], env: {%q: \"hung\"}, startTimeoutMs: 60000},",
				os.Args[0], upstreamEnv)
		}
		return slowServersConfig(t, mode, 0, extra)
	}
	for _, mode := range []string{"tools", "code"} {
		t.Run(mode, func(t *testing.T) {
			call := map[string]any{"name": "tool_search", "arguments": map[string]any{"query": "send an email"}}
			if mode == "code" {
				call = map[string]any{"name": "tool_search_code", "arguments": map[string]any{"code": `
					return (await openclaw.tools.search("send an email")).map(h => h.id)`}}
			}
			run := func(hung bool) (took int, res tsResult) {
				res = tsCall(t, node, script, map[string]any{"command": bin, "args": []string{"mcp", "serve", "--config", config(mode, hung)},
					"calls": []map[string]any{call}, "lists": []string{"resources", "resourceTemplates", "prompts"}})
				for _, r := range res.Results {
					require.Empty(t, r.Error, "%s failed as a request", r.Name)
					switch r.Name {
					case "resources", "resourceTemplates", "prompts":
						assert.NotEqual(t, "0", r.Text, "%s listed right after connecting is not empty", r.Name)
					default:
						assert.Contains(t, r.Text, "mcp:mail:send_email")
						took = r.TookMs
					}
				}
				return took, res
			}
			controlTook, _ := run(false)
			took, res := run(true)
			t.Logf("%s mode: the search beside a hung server took %d ms, the control %d ms", mode, took, controlTook)
			assert.Less(t, took, controlTook+10_000, "the hung server (55 s of waiting, or its minute) is not waited for")
			for _, r := range res.Results {
				if r.Name == call["name"] {
					assert.Regexp(t, `[Ss]erver \\?"silent\\?" is still starting`, r.Text, "the answer names the server still starting")
				}
			}
		})
	}
}
