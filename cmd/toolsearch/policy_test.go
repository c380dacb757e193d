package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/runtime"
)

// fakeTerminal is the user's terminal in tests: it records what is written to it and answers each question
// ("[y/N]") with the next of answers, after delay.
type fakeTerminal struct {
	mu      sync.Mutex
	out     bytes.Buffer
	answers []string
	delay   time.Duration
	r       *io.PipeReader
	w       *io.PipeWriter
	opened  int
}

func newFakeTerminal(delay time.Duration, answers ...string) *fakeTerminal {
	r, w := io.Pipe()
	return &fakeTerminal{answers: answers, delay: delay, r: r, w: w}
}

func (f *fakeTerminal) open() (io.ReadWriteCloser, error) {
	f.mu.Lock()
	f.opened++
	f.mu.Unlock()
	return f, nil
}

func (f *fakeTerminal) Read(p []byte) (int, error) { return f.r.Read(p) }

func (f *fakeTerminal) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.out.Write(p)
	if bytes.Contains(p, []byte("[y/N]")) && len(f.answers) > 0 {
		answer := f.answers[0]
		f.answers = f.answers[1:]
		go func() {
			time.Sleep(f.delay)
			f.w.Write([]byte(answer + "\n"))
		}()
	}
	return len(p), nil
}

func (f *fakeTerminal) Close() error {
	f.w.Close()
	return f.r.Close()
}

func (f *fakeTerminal) String() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.out.String()
}

// noTerminal is a process without a controlling terminal (a CI job, a pipe).
func noTerminal() (io.ReadWriteCloser, error) { return nil, errNoTerminal }

func runCLIWith(t *testing.T, open terminalOpener, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(withTerminal(context.Background(), open), args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

// policyConfigFile is upstreamConfig with a policy: github's close_issue disabled and create_issue
// auto-approved, every destructive tool asked about (every tool of an untrusted server is taken as destructive),
// and one deny entry that matches nothing.
func policyConfigFile(t *testing.T, mode string, extra string) string {
	t.Helper()
	return writeFile(t, "config.json", fmt.Sprintf(`{
  mcpServers: {
    github: {command: %q, args: ["-test.run=^$"], env: {%q: "github"},
             disabledTools: ["close_*"], autoApprove: ["create_issue"]},
    mail: {command: %[1]q, args: ["-test.run=^$"], env: {%[2]q: "mail"}, alwaysAllow: []},
  },
  tools: {
    deny: ["mcp:mail:delete_everything"],
    ask: ["annotation:destructive"],
    %s
    toolSearch: {mode: %q},
  },
}`, os.Args[0], upstreamEnv, extra, mode))
}

func TestPolicyCommandsAgainstMCPConfig(t *testing.T) {
	cfg := policyConfigFile(t, "tools", "")
	const unmatched = `warning: tools.deny "mcp:mail:delete_everything" matches no tool`

	// A disabled tool is never a hit, and the selector that matches nothing is named at start.
	code, stdout, stderr := runCLI(t, "", "search", "--mcp-config", cfg, "--json", "close an issue")
	require.Equal(t, exitOK, code, stderr)
	assert.NotContains(t, stdout, "close_issue")
	assert.Contains(t, stdout, "mcp:github:create_issue")
	assert.Contains(t, stderr, unmatched)

	// To describe and call it is unknown, not blocked: nothing says it exists.
	for _, cmd := range []string{"describe", "call"} {
		code, _, stderr = runCLI(t, "", cmd, "--mcp-config", cfg, "mcp:github:close_issue")
		assert.Equal(t, exitFailure, code, cmd)
		assert.Contains(t, stderr, "Unknown tool id: mcp:github:close_issue", cmd)
		assert.NotContains(t, stderr, "blocked", cmd)
	}

	// autoApprove lifts tools.ask: the call runs without a question, with no terminal at all.
	code, stdout, stderr = runCLIWith(t, noTerminal, "", "call", "--mcp-config", cfg, "--args", `{"title":"t1"}`, "create_issue")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "created issue: t1")

	// Without a terminal a held call is blocked, naming the rule and how to allow the tool; what stdin holds
	// answers nothing.
	code, stdout, stderr = runCLIWith(t, noTerminal, "y\nyes\n", "call", "--mcp-config", cfg, "--args", `{"title":"t2"}`, "send_email")
	assert.Equal(t, exitFailure, code)
	assert.Empty(t, stdout)
	assert.Contains(t, stderr, `Tool call blocked: mcp:mail:send_email needs approval (tools.ask "annotation:destructive"), `+
		`and there is no terminal to ask: run the command on a terminal, pass --yes, or add "send_email" to `+
		`mcpServers.mail.autoApprove, or remove "annotation:destructive" from tools.ask.`)

	// --yes approves, and says so.
	code, stdout, stderr = runCLIWith(t, noTerminal, "", "call", "--mcp-config", cfg, "--yes", "--args", `{"title":"t3"}`, "send_email")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "sent: t3")
	assert.Contains(t, stderr, `toolsearch call: --yes approved mcp:mail:send_email (tools.ask "annotation:destructive")`)

	// On a terminal the user is asked, with the facts, and the answer decides.
	term := newFakeTerminal(0, "y")
	code, stdout, stderr = runCLIWith(t, term.open, "", "call", "--mcp-config", cfg, "--args", `{"title":"t4"}`, "send_email")
	require.Equal(t, exitOK, code, stderr)
	assert.Contains(t, stdout, "sent: t4")
	question := term.String()
	for _, want := range []string{"a tool call needs your approval", "tool:        mcp:mail:send_email", "server:      mail",
		`why:         tools.ask "annotation:destructive"`, `arguments:   {"title":"t4"}`,
		"annotations: none (untrusted server: treated as destructive, openWorld)", "Approve this call? [y/N]"} {
		assert.Contains(t, question, want)
	}

	term = newFakeTerminal(0, "n")
	code, _, stderr = runCLIWith(t, term.open, "", "call", "--mcp-config", cfg, "--args", `{"title":"t5"}`, "send_email")
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, stderr, "Tool call blocked: the user declined mcp:mail:send_email on the terminal.")

	// --allow and --deny still add a layer of their own, on top of the file's.
	code, _, stderr = runCLIWith(t, noTerminal, "", "call", "--mcp-config", cfg, "--deny", "server:github", "--args", `{"title":"x"}`, "create_issue")
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, stderr, "Unknown tool id")
	code, stdout, stderr = runCLI(t, "", "search", "--mcp-config", cfg, "--allow", "server:mail", "--json", "issue email")
	require.Equal(t, exitOK, code, stderr)
	assert.NotContains(t, stdout, "mcp:github:")
	assert.Contains(t, stdout, "mcp:mail:send_email")
}

// A call is asked about once: the approver does not ask for calls that need no approval, and never opens the
// terminal for them.
func TestCLIApproverAsksOnlyWhatNeedsIt(t *testing.T) {
	term := newFakeTerminal(0)
	a, release := newCLIApprover(withTerminal(context.Background(), term.open), "call", false, nil, nil, io.Discard)
	defer release()
	d, err := a.Approve(context.Background(), &runtime.Invocation{Tool: &catalog.Tool{Name: "x"}})
	require.NoError(t, err)
	assert.True(t, d.Allow)
	assert.Equal(t, 0, term.opened)
}

// The question is bounded and cannot drive the terminal: arguments are cut at 2 KB, and escape sequences in
// what a server or the model wrote are shown, not obeyed.
func TestApprovalQuestionIsSafe(t *testing.T) {
	term := newFakeTerminal(0, "n")
	a, release := newCLIApprover(withTerminal(context.Background(), term.open), "run", false,
		&catalog.Policy{Agent: catalog.Rule{Ask: []string{"*"}}}, nil, io.Discard)
	defer release()
	tool := &catalog.Tool{Source: catalog.SourceMCP, SourceName: "evil", Name: "wipe", Label: "Harmless\x1b[2K\rread-only \u202eetirw"}
	args, _ := json.Marshal(map[string]string{"blob": strings.Repeat("a", 10_000), "a_esc": "\u009b31m"})
	d, err := a.Approve(context.Background(), &runtime.Invocation{Tool: tool, ApprovalRequired: true, ApprovalRule: "*", Arguments: args})
	require.NoError(t, err)
	assert.False(t, d.Allow)
	assert.Equal(t, "terminal", d.By)
	q := term.String()
	assert.NotContains(t, q, "\x1b")
	assert.NotContains(t, q, "\u009b")
	assert.NotContains(t, q, "\u202e")
	assert.Contains(t, q, `Harmless\u001b[2K\u000dread-only \u202eetirw`)
	assert.Contains(t, q, `\u009b31m`, "shown escaped")
	assert.Contains(t, q, fmt.Sprintf("(%d bytes in all)", len(args)))
	assert.Less(t, len(q), 3_000)
}

// An approval that takes longer than the script's codeTimeoutMs completes: the script is suspended while the
// question waits, its deadline held.
func TestRunApprovalOnTheTerminal(t *testing.T) {
	cat := writeFile(t, "cat.json", `[
  {"name": "get_issue", "server": "github", "description": "Read an issue.", "inputSchema": {"type": "object"}},
  {"name": "delete_repository", "server": "github", "description": "Delete a repository.", "inputSchema": {"type": "object"}},
  {"name": "web_search", "description": "Search the web.", "inputSchema": {"type": "object"}}
]`)
	cfg := writeFile(t, "config.json", `{tools: {deny: ["delete_*"], ask: ["server:github"], groups: {nobody: ["nothing_*"]}, allow: ["*", "group:nobody"]}}`)
	script := writeFile(t, "s.js", `
const hits = await openclaw.tools.search("delete repository");
let denied;
try { await openclaw.tools.call("mcp:github:delete_repository", {}) } catch (e) { denied = e.message }
const r = await openclaw.tools.call("mcp:github:get_issue", {n: 1});
return {hits: hits.map(h => h.id), denied, got: r.result.details};`)

	term := newFakeTerminal(1500*time.Millisecond, "yes")
	code, stdout, stderr := runCLIWith(t, term.open, "", "run", "--catalog", cat, "--config", cfg, "--timeout", "1s", script)
	require.Equal(t, exitOK, code, "%s\n%s", stdout, stderr)
	var out struct {
		OK    bool
		Value struct {
			Hits   []string
			Denied string
			Got    map[string]int
		}
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &out), stdout)
	assert.True(t, out.OK)
	assert.NotContains(t, out.Value.Hits, "mcp:github:delete_repository")
	assert.Contains(t, out.Value.Denied, "Unknown tool id: mcp:github:delete_repository")
	assert.Equal(t, map[string]int{"n": 1}, out.Value.Got, "approved after longer than codeTimeoutMs, and ran")
	assert.Contains(t, term.String(), `why:         tools.ask "server:github"`)
	assert.Contains(t, stderr, `warning: tools.allow "group:nobody" matches no tool`)

	// Without a terminal the script gets the block as an error it can read.
	code, stdout, _ = runCLIWith(t, noTerminal, "", "run", "--catalog", cat, "--config", cfg, script)
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, stdout, `needs approval (tools.ask \"server:github\"), and there is no terminal to ask`)
	assert.Contains(t, stdout, `remove \"server:github\" from tools.ask`)

	// --yes approves every held call.
	code, stdout, stderr = runCLIWith(t, noTerminal, "", "run", "--catalog", cat, "--config", cfg, "--yes", script)
	require.Equal(t, exitOK, code, stdout)
	assert.Contains(t, stderr, "toolsearch run: --yes approved mcp:github:get_issue")
}

func TestPolicyConfigChecks(t *testing.T) {
	t.Setenv("POLICY_TEST_TOKEN_A", "")
	tests := []struct {
		name, file string
		want       string // "" means the file loads
	}{
		{"every key", `{mcpServers: {gh: {url: "https://x.example/mcp", disabledTools: ["a*"], autoApprove: ["b"], alwaysAllow: ["c"]}},
			tools: {allow: ["server:gh"], deny: ["*_delete*"], ask: ["annotation:destructiveHint"], groups: {g: ["mcp:gh:*"]},
			profiles: {ci: {token: "${CI_TOKEN}", allow: ["group:g"], deny: [], ask: ["annotation:openWorld"]}}}}`, ""},
		{"allow not a list", `{tools: {allow: "server:gh"}}`,
			`tools.allow must be an array of selectors, for example ["server:github", "mcp:fs:read_*", "annotation:readOnly"] (got "server:gh")`},
		{"empty selector", `{tools: {deny: ["x", " "]}}`, `tools.deny[1] is empty`},
		{"unknown annotation", `{tools: {ask: ["annotation:destrutive"]}}`,
			`tools.ask[0] "annotation:destrutive" names no annotation: did you mean "annotation:destructive"?`},
		{"unknown annotation in a profile", `{tools: {profiles: {ci: {token: "${T}", allow: ["annotation:redOnly"]}}}}`,
			`tools.profiles.ci.allow[0] "annotation:redOnly" names no annotation: did you mean "annotation:readOnly"?`},
		{"groups not an object", `{tools: {groups: ["a"]}}`, `tools.groups must be an object of tool lists by group name`},
		{"literal token", `{tools: {profiles: {ci: {token: "s3cret-value"}}}}`,
			`tools.profiles.ci.token must be a reference to an environment variable, such as "${CI_AGENT_TOKEN}", not the token itself`},
		{"no token", `{tools: {profiles: {ci: {allow: ["x"]}}}}`, `tools.profiles.ci needs a "token"`},
		{"same token twice", `{tools: {profiles: {a: {token: "${T}"}, b: {token: "${T}"}}}}`,
			`tools.profiles.a and tools.profiles.b have the same token (${T})`},
		{"unknown profile key", `{tools: {profiles: {ci: {token: "${T}", alow: []}}}}`,
			`unknown key tools.profiles.ci.alow: did you mean "allow"?`},
		{"empty disabled tool", `{mcpServers: {gh: {url: "https://x.example/mcp", disabledTools: [""]}}}`,
			`mcpServers.gh.disabledTools[0] is empty`},
		{"autoApprove not a list", `{mcpServers: {gh: {url: "https://x.example/mcp", autoApprove: true}}}`,
			`mcpServers.gh.autoApprove must be an array of strings`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := loadConfig(writeFile(t, "c.json5", tc.file))
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, err.Error(), "s3cret-value", "a token is never repeated")
		})
	}

	lc, err := loadConfig(writeFile(t, "c.json5", `{mcpServers: {"my server": {url: "https://x.example/mcp",
		disabledTools: ["drop table", "rm*"], excludeTools: ["wipe"], autoApprove: ["get_issue"], alwaysAllow: ["list_*"]}},
		tools: {allow: ["server:my_server"], ask: ["*"], profiles: {ci: {token: "${A}", allow: ["annotation:readOnly"], ask: ["x"]}}}}`))
	require.NoError(t, err)
	assert.Equal(t, catalog.Rule{
		Allow:       append([]string{"server:my_server"}, controlNames()...),
		Deny:        []string{"listed:my_server:drop table", "listed:my_server:rm*", "listed:my_server:wipe"},
		Ask:         []string{"*"},
		AutoApprove: []string{"listed:my_server:get_issue", "listed:my_server:list_*"},
	}, lc.policy.Agent, "disabledTools and excludeTools deny, autoApprove and alwaysAllow merge, names as the server lists them")
	require.Len(t, lc.profiles, 1)
	ci := lc.profiles[0]
	assert.Equal(t, "A", ci.TokenEnv)
	assert.Equal(t, lc.policy.Agent, ci.Policy.Agent, "a profile narrows the file's policy")
	assert.Equal(t, append([]string{"annotation:readOnly"}, controlNames()...), ci.Policy.Profile.Allow)

	// A profile's ask adds to the file's, and the server's autoApprove does not lift it.
	get := &catalog.Tool{Source: catalog.SourceMCP, SourceName: "my_server", Name: "get_issue"}
	assert.False(t, lc.policy.Check(get).Ask)
	x := &catalog.Tool{Source: catalog.SourceMCP, SourceName: "my_server", Name: "x"}
	v := ci.Policy.Check(x)
	assert.False(t, v.Allowed, "the profile allows read-only tools only")

	// Tokens come from the environment when mcp serve starts: an unset one is named, two equal ones refused.
	profiles := []policyProfile{{Name: "a", TokenEnv: "TA"}, {Name: "b", TokenEnv: "TB"}}
	err = resolveProfileTokens(profiles, func(string) string { return "" })
	require.Error(t, err)
	assert.Contains(t, err.Error(), "tools.profiles.a.token names $TA, which is not set")
	assert.Contains(t, err.Error(), "tools.profiles.b.token names $TB, which is not set")
	err = resolveProfileTokens(profiles, func(string) string { return "same" })
	require.Error(t, err)
	assert.Contains(t, err.Error(), `profiles "a" and "b" get the same token from the environment ($TA and $TB)`)
	assert.NotContains(t, err.Error(), "same token from the environment (same")
	require.NoError(t, resolveProfileTokens(profiles, func(k string) string { return "tok-" + k }))
	assert.Equal(t, "tok-TB", profiles[1].Token)
}

func TestAllowHint(t *testing.T) {
	lc, err := loadConfig(writeFile(t, "c.json5", `{mcpServers: {github: {url: "https://x.example/mcp", disabledTools: ["delete_*"]}},
		tools: {deny: ["mcp:github:wipe"], ask: ["annotation:destructive"], allow: ["server:github"],
		profiles: {ci: {token: "${T}", ask: ["server:*"]}}}}`))
	require.NoError(t, err)
	tool := func(name string) *catalog.Tool {
		return &catalog.Tool{Source: catalog.SourceMCP, SourceName: "github", Name: name}
	}
	hint := func(p *catalog.Policy, profile string, t *catalog.Tool) string {
		return lc.pc.allowHint(t, p.Check(t), profile)
	}
	assert.Equal(t, `add "get_issue" to mcpServers.github.autoApprove, or remove "annotation:destructive" from tools.ask`,
		hint(lc.policy, "", tool("get_issue")))
	assert.Equal(t, `remove "delete_*" from mcpServers.github.disabledTools`, hint(lc.policy, "", tool("delete_repo")))
	assert.Equal(t, `remove "mcp:github:wipe" from tools.deny`, hint(lc.policy, "", tool("wipe")))
	other := &catalog.Tool{Source: catalog.SourceMCP, SourceName: "fs", Name: "read"}
	assert.Equal(t, `add "mcp:fs:read" to tools.allow`, hint(lc.policy, "", other))

	// A profile's ask is lifted by editing the profile; the server's autoApprove does not reach it.
	ci := lc.profiles[0].Policy
	ciPolicy := *ci
	ciPolicy.Agent.Ask = nil
	assert.Equal(t, `remove "server:*" from tools.profiles.ci.ask`, hint(&ciPolicy, "ci", tool("get_issue")))
}

func TestPolicyConfigGetSetKeys(t *testing.T) {
	path := writeFile(t, "config.json5", `{
  // a literal token: refused, and never printed
  tools: {profiles: {ci: {token: "s3cret-value"}, dev: {token: "${DEV_TOKEN}"}}},
}`)
	code, stdout, stderr := runCLI(t, "", "config", "get", "--config", path, "tools.profiles")
	assert.Equal(t, exitFailure, code, "the file does not load")
	assert.NotContains(t, stdout+stderr, "s3cret-value")
	assert.Contains(t, stdout, `"token": "[redacted]"`)
	assert.Contains(t, stdout, `"token": "${DEV_TOKEN}"`, "a reference holds no secret")

	path = writeFile(t, "config.json5", `{}`)
	for _, tc := range []struct {
		key, value string
		code       int
		want       string
	}{
		{"tools.ask", `["annotation:destrutive"]`, exitFailure, `did you mean "annotation:destructive"?`},
		{"tools.ask", `["annotation:destructive"]`, exitOK, ""},
		{"tools.deny", `"x"`, exitFailure, "tools.deny must be an array of selectors"},
		{"tools.allow", `["sever:github"]`, exitOK, `"sever:" is not a kind of selector, so it is matched as a tool name or id; did you mean "server:"?`},
		{"tools.profiles.ci", `{token: "literal"}`, exitFailure, "not the token itself"},
		{"tools.profiles.ci", `{token: "${CI_TOKEN}", allow: ["annotation:readOnly"]}`, exitOK, ""},
		{"mcpServers.github", `{url: "https://x.example/mcp", autoApprove: ["get_issue", "list_*"]}`, exitOK, ""},
		{"mcpServers.github.disabledTools", `[""]`, exitFailure, "mcpServers.github.disabledTools[0] is empty"},
		{"tools.dany", `["x"]`, exitFailure, "did you mean tools.deny?"},
	} {
		code, stdout, stderr := runCLI(t, "", "config", "set", "--config", path, tc.key, tc.value)
		assert.Equal(t, tc.code, code, "%s %s: %s%s", tc.key, tc.value, stdout, stderr)
		if tc.want != "" {
			assert.Contains(t, stderr, tc.want, tc.key)
		}
		assert.NotContains(t, stdout+stderr, "literal", "a literal token is never echoed")
	}
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Contains(t, string(data), `"${CI_TOKEN}"`)
	assert.NotContains(t, string(data), "literal")

	code, stdout, _ = runCLI(t, "", "config", "keys")
	require.Equal(t, exitOK, code)
	for _, k := range []string{"allow", "deny", "ask", "groups", "profiles", "disabledTools", "autoApprove", "alwaysAllow"} {
		assert.Contains(t, stdout, "  "+k+" ")
	}
}

// TestMCPServePolicy drives `mcp serve` over stdio with the Go SDK client, in every mode: a disabled tool is
// unknown (absent from off mode's tools/list), an auto-approved tool runs, a held tool is blocked with the
// message that says how to allow it (this client declares no elicitation, so nobody can be asked), and the
// selector that matches no tool is named once the servers have started.
func TestMCPServePolicy(t *testing.T) {
	for _, mode := range []string{"off", "tools", "directory", "code"} {
		t.Run(mode, func(t *testing.T) {
			cfg := policyConfigFile(t, mode, "")
			sess, _, stderr := serveInProcess(t, nil, "--config", cfg)
			held := `mcp:mail:send_email needs approval (policy: annotation:destructive), but this MCP client did not ` +
				`declare elicitation, so it cannot ask its user; add "send_email" to mcpServers.mail.autoApprove, or remove ` +
				`"annotation:destructive" from tools.ask, or connect with an MCP client that supports elicitation.`

			// call makes a call the way this mode's model would, and returns the text it reads.
			var call func(id string) string
			switch mode {
			case "off":
				require.Eventually(t, func() bool { return len(listSDKNames(t, sess)) == 2 }, time.Minute, 20*time.Millisecond, stderr.String())
				assert.Equal(t, []string{"create_issue", "send_email"}, listSDKNames(t, sess), "a disabled tool is not listed")
				call = func(id string) string {
					text, _ := sdkCall(t, sess, id[strings.LastIndex(id, ":")+1:], map[string]any{"title": "x"})
					return text
				}
			case "code":
				call = func(id string) string {
					text, _ := sdkCall(t, sess, runtime.ToolSearchCodeName, map[string]any{"code": `try { const r = await ` +
						`openclaw.tools.call("` + id + `", {title: "x"}); return r.result.content[0].text } catch (e) { return e.message }`})
					var res struct{ Value string }
					if json.Unmarshal([]byte(text), &res) != nil {
						return text
					}
					return res.Value
				}
			default:
				call = func(id string) string {
					text, _ := sdkCall(t, sess, runtime.ToolCallName, map[string]any{"id": id, "args": map[string]any{"title": "x"}})
					return text
				}
			}
			require.Eventually(t, func() bool { return strings.Contains(call("mcp:github:create_issue"), "created issue: x") },
				time.Minute, 50*time.Millisecond, "the auto-approved tool runs: %s", stderr.String())
			assert.Contains(t, call("mcp:mail:send_email"), held)
			if mode != "off" {
				assert.Contains(t, call("mcp:github:close_issue"), "Unknown tool id: mcp:github:close_issue")
			}
			if mode == "tools" || mode == "directory" {
				text, _ := sdkCall(t, sess, runtime.ToolSearchName, map[string]any{"query": "close an issue"})
				assert.NotContains(t, text, "close_issue")
			}
			require.Eventually(t, func() bool {
				return strings.Contains(stderr.String(), `toolsearch mcp serve: warning: tools.deny "mcp:mail:delete_everything" matches no tool`)
			}, time.Minute, 20*time.Millisecond, stderr.String())
			assert.Equal(t, 1, strings.Count(stderr.String(), "matches no tool"), "warned once, for the one entry")
		})
	}
}

// A Go agent that starts mcp serve with the go-sdk client at its defaults (the 2026-07-28 protocol, which asks
// through the call's result) gets its user asked, in tools and code mode, and the call runs once approved.
func TestMCPServeAsksAGoSDKClientThroughTheResult(t *testing.T) {
	for _, mode := range []string{"tools", "code"} {
		t.Run(mode, func(t *testing.T) {
			cfg := policyConfigFile(t, mode, "")
			var asked atomic.Int32
			sess, _, stderr := serveInProcess(t, &sdk.ClientOptions{
				ElicitationHandler: func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
					asked.Add(1)
					assert.Contains(t, req.Params.Message, "Tool: mcp:mail:send_email")
					return &sdk.ElicitResult{Action: "accept"}, nil
				}}, "--config", cfg)
			require.GreaterOrEqual(t, sess.InitializeResult().ProtocolVersion, "2026-07-28")
			call := func() string {
				if mode == "code" {
					text, _ := sdkCall(t, sess, runtime.ToolSearchCodeName, map[string]any{"code": `const r = await ` +
						`openclaw.tools.call("mcp:mail:send_email", {title: "x"}); return r.result.content[0].text`})
					return text
				}
				text, _ := sdkCall(t, sess, runtime.ToolCallName, map[string]any{"id": "mcp:mail:send_email", "args": map[string]any{"title": "x"}})
				return text
			}
			require.Eventually(t, func() bool { return strings.Contains(call(), "sent: x") }, time.Minute,
				50*time.Millisecond, stderr.String())
			assert.Positive(t, asked.Load())
		})
	}
}

func TestMCPServeProfiles(t *testing.T) {
	cfg := policyConfigFile(t, "tools", `profiles: {ci: {token: "${POLICY_TEST_CI_TOKEN}", allow: ["server:github"]}},`)
	t.Setenv("POLICY_TEST_CI_TOKEN", "")
	t.Setenv(tokenEnv, "")
	code, _, stderr := runCLI(t, "", "mcp", "serve", "--config", cfg, "--http", "127.0.0.1:0")
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, stderr, "tools.profiles.ci.token names $POLICY_TEST_CI_TOKEN, which is not set")

	// The default token and a profile's cannot be the same: which policy it gets would be a guess.
	t.Setenv("POLICY_TEST_CI_TOKEN", "tok-1")
	t.Setenv(tokenEnv, "tok-1")
	code, _, stderr = runCLI(t, "", "mcp", "serve", "--config", cfg, "--http", "127.0.0.1:0")
	assert.Equal(t, exitFailure, code)
	assert.Contains(t, stderr, "tools.profiles.ci.token ($POLICY_TEST_CI_TOKEN) holds the same token as --token or $TOOLSEARCH_MCP_TOKEN")
	assert.NotContains(t, stderr, "tok-1")

	// Profiles' tokens guard an address other machines reach, as --token does: it is not refused for want of one
	// (and gets as far as reading the profiles' variables).
	t.Setenv(tokenEnv, "")
	t.Setenv("POLICY_TEST_CI_TOKEN", "")
	code, _, stderr = runCLI(t, "", "mcp", "serve", "--config", cfg, "--http", "0.0.0.0:0")
	assert.Equal(t, exitFailure, code)
	assert.NotContains(t, stderr, "can be reached from other machines")
	assert.Contains(t, stderr, "which is not set")
	code, _, stderr = runCLI(t, "", "mcp", "serve", "--config", policyConfigFile(t, "tools", ""), "--http", "0.0.0.0:0")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "can be reached from other machines", "without profiles or a token it is refused")

	// With profiles and no server token, nobody can read /readyz and /metrics (they name every server and tool,
	// and a profile's token never opens them): serve says so at start rather than leaving a 401 to puzzle over.
	t.Setenv("POLICY_TEST_CI_TOKEN", "tok-ci")
	ctx, cancel := context.WithCancel(t.Context())
	noteErr := &lockedBuffer{}
	exited := make(chan int, 1)
	go func() {
		exited <- run(ctx, []string{"mcp", "serve", "--config", cfg, "--http", "127.0.0.1:0", "--metrics"},
			strings.NewReader(""), io.Discard, noteErr)
	}()
	require.Eventually(t, func() bool { return strings.Contains(noteErr.String(), "serve: note:") }, 30*time.Second,
		10*time.Millisecond, noteErr.String())
	cancel()
	assert.Equal(t, exitOK, <-exited, noteErr.String())
	assert.Contains(t, noteErr.String(), "/readyz and /metrics take the server's own token, and none is set")
	assert.NotContains(t, noteErr.String(), "tok-ci")

	// On stdio no client has a token: the profiles are named as not applying, and their variables need not be set.
	t.Setenv("POLICY_TEST_CI_TOKEN", "")
	_, _, serveErr := serveInProcess(t, nil, "--config", cfg)
	assert.Contains(t, serveErr.String(), "tools.profiles apply to --http clients by their token")
	assert.NotContains(t, serveErr.String(), "not set")
}

// A selector naming a tool of a server that is still starting is not yet a mistake: the warning waits until
// every server has started or failed.
func TestMCPServeUnmatchedWaitsForServers(t *testing.T) {
	cfg := writeFile(t, "config.json", fmt.Sprintf(`{
  mcpServers: {
    hung: {command: %q, args: ["-test.run=^$"], env: {%q: "hung"}, startTimeoutMs: 2000},
    mail: {command: %[1]q, args: ["-test.run=^$"], env: {%[2]q: "mail"}},
  },
  tools: {deny: ["mcp:hung:anything"], toolSearch: {mode: "tools"}},
}`, os.Args[0], upstreamEnv))
	sess, _, stderr := serveInProcess(t, nil, "--config", cfg)
	require.Eventually(t, func() bool {
		text, _ := sdkCall(t, sess, runtime.ToolSearchName, map[string]any{"query": "send an email"})
		return strings.Contains(text, "mcp:mail:send_email")
	}, time.Minute, 20*time.Millisecond, stderr.String())
	const warning = `warning: tools.deny "mcp:hung:anything" matches no tool`
	require.Eventually(t, func() bool { return strings.Contains(stderr.String(), warning) },
		time.Minute, 20*time.Millisecond, stderr.String())
	// Read by order, not by time: mail's being searchable says nothing of how long hung has been starting on a
	// loaded machine, but the warning must come after hung's start failed, never while it was starting.
	log := stderr.String()
	failed := strings.Index(log, "mcp: hung: failed")
	require.GreaterOrEqual(t, failed, 0, log)
	assert.Greater(t, strings.Index(log, warning), failed, "the warning waited for hung's start to end: %s", log)
}

// The hint of a call `mcp serve` blocked because its client cannot ask names the keys of the client's own
// rules: the file's for stdio and the default token, the profile's for a profile's clients, and the pins for a
// changed definition.
func TestServeApprovalHint(t *testing.T) {
	lc, err := loadConfig(writeFile(t, "c.json5", `{mcpServers: {github: {url: "https://x.example/mcp"}},
		tools: {ask: ["*_repo"], profiles: {ci: {token: "${T}", ask: ["mcp:github:get_*"]}}}}`))
	require.NoError(t, err)
	hint := serveApprovalHint(lc)
	get := &catalog.Tool{Source: catalog.SourceMCP, SourceName: "github", Name: "get_issue"}
	del := &catalog.Tool{Source: catalog.SourceMCP, SourceName: "github", Name: "delete_repo"}
	const elicit = ", or connect with an MCP client that supports elicitation"
	assert.Equal(t, `add "delete_repo" to mcpServers.github.autoApprove, or remove "*_repo" from tools.ask`+elicit,
		hint(del, "*_repo", ""))
	assert.Equal(t, `remove "mcp:github:get_*" from tools.profiles.ci.ask`+elicit, hint(get, "mcp:github:get_*", "ci"))
	assert.Equal(t, "accept its new definition with `toolsearch pins forget mcp:github:get_issue`"+elicit, hint(get, "", ""))
	assert.Equal(t, `add "delete_repo" to mcpServers.github.autoApprove, or remove "*_repo" from tools.ask; `+
		"and accept its new definition with `toolsearch pins forget mcp:github:delete_repo`"+elicit, hint(del, "", ""),
		"a changed tool the policy also asks about needs both")
	assert.Empty(t, hint(get, "x", "nobody"), "a profile the file does not have: the front's own hint")
}
