package config

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/catalog"
)

// writeFile writes content to a file of a fresh directory and returns its path.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	return path
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
			`tools.allow must be an array of selectors, not one string: write ["server:gh"]`},
		{"allow an object", `{tools: {allow: {a: 1}}}`,
			`tools.allow must be an array of selectors, for example ["server:github", "mcp:fs:read_*", "annotation:readOnly"] (got an object)`},
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
			_, err := Load(t.Context(), writeFile(t, "c.json5", tc.file))
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, err.Error(), "s3cret-value", "a token is never repeated")
		})
	}

	lc, err := Load(t.Context(), writeFile(t, "c.json5", `{mcpServers: {"my server": {url: "https://x.example/mcp",
		disabledTools: ["drop table", "rm*"], excludeTools: ["wipe"], autoApprove: ["get_issue"], alwaysAllow: ["list_*"]}},
		tools: {allow: ["server:my_server"], ask: ["*"], profiles: {ci: {token: "${A}", allow: ["annotation:readOnly"], ask: ["x"]}}}}`))
	require.NoError(t, err)
	assert.Equal(t, catalog.Rule{
		Allow:       append([]string{"server:my_server"}, controlNames()...),
		Deny:        []string{"listed:my_server:drop table", "listed:my_server:rm*", "listed:my_server:wipe"},
		Ask:         []string{"*"},
		AutoApprove: []string{"listed:my_server:get_issue", "listed:my_server:list_*"},
	}, lc.Policy.Agent, "disabledTools and excludeTools deny, autoApprove and alwaysAllow merge, names as the server lists them")
	require.Len(t, lc.Profiles, 1)
	ci := lc.Profiles[0]
	assert.Equal(t, "A", ci.TokenEnv)
	assert.Equal(t, lc.Policy.Agent, ci.Policy.Agent, "a profile narrows the file's policy")
	assert.Equal(t, append([]string{"annotation:readOnly"}, controlNames()...), ci.Policy.Profile.Allow)

	// A profile's ask adds to the file's, and the server's autoApprove does not lift it.
	get := &catalog.Tool{Source: catalog.SourceMCP, SourceName: "my_server", Name: "get_issue"}
	assert.False(t, lc.Policy.Check(get).Ask)
	x := &catalog.Tool{Source: catalog.SourceMCP, SourceName: "my_server", Name: "x"}
	v := ci.Policy.Check(x)
	assert.False(t, v.Allowed, "the profile allows read-only tools only")

	// Tokens come from the environment when mcp serve starts: an unset one is named, two equal ones refused.
	profiles := []Profile{{Name: "a", TokenEnv: "TA"}, {Name: "b", TokenEnv: "TB"}}
	err = ResolveProfileTokens(profiles, func(string) string { return "" })
	require.Error(t, err)
	assert.Contains(t, err.Error(), "tools.profiles.a.token names $TA, which is not set")
	assert.Contains(t, err.Error(), "tools.profiles.b.token names $TB, which is not set")
	err = ResolveProfileTokens(profiles, func(string) string { return "same" })
	require.Error(t, err)
	assert.Contains(t, err.Error(), `profiles "a" and "b" get the same token from the environment ($TA and $TB)`)
	assert.NotContains(t, err.Error(), "same token from the environment (same")
	require.NoError(t, ResolveProfileTokens(profiles, func(k string) string { return "tok-" + k }))
	assert.Equal(t, "tok-TB", profiles[1].Token)
}

func TestAllowHint(t *testing.T) {
	lc, err := Load(t.Context(), writeFile(t, "c.json5", `{mcpServers: {github: {url: "https://x.example/mcp", disabledTools: ["delete_*"]}},
		tools: {deny: ["mcp:github:wipe"], ask: ["annotation:destructive"], allow: ["server:github"],
		profiles: {ci: {token: "${T}", ask: ["server:*"]}}}}`))
	require.NoError(t, err)
	tool := func(name string) *catalog.Tool {
		return &catalog.Tool{Source: catalog.SourceMCP, SourceName: "github", Name: name}
	}
	hint := func(p *catalog.Policy, profile string, t *catalog.Tool) string {
		return lc.Origins.AllowHint(t, p.Check(t), profile)
	}
	assert.Equal(t, `add "get_issue" to mcpServers.github.autoApprove, or remove "annotation:destructive" from tools.ask`,
		hint(lc.Policy, "", tool("get_issue")))
	assert.Equal(t, `remove "delete_*" from mcpServers.github.disabledTools`, hint(lc.Policy, "", tool("delete_repo")))
	assert.Equal(t, `remove "mcp:github:wipe" from tools.deny`, hint(lc.Policy, "", tool("wipe")))
	other := &catalog.Tool{Source: catalog.SourceMCP, SourceName: "fs", Name: "read"}
	assert.Equal(t, `add "mcp:fs:read" to tools.allow`, hint(lc.Policy, "", other))

	// A profile's ask is lifted by editing the profile; the server's autoApprove does not reach it.
	ci := lc.Profiles[0].Policy
	ciPolicy := *ci
	ciPolicy.Agent.Ask = nil
	assert.Equal(t, `remove "server:*" from tools.profiles.ci.ask`, hint(&ciPolicy, "ci", tool("get_issue")))
}
