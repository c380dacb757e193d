package catalog

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPolicyAllows(t *testing.T) {
	search := &Tool{Source: SourceOpenClaw, SourceName: "core", Name: "web_search", Groups: []string{"web"}}
	issue := &Tool{Source: SourceMCP, SourceName: "github", Name: "create_issue"}
	pick := &Tool{Source: SourceClient, SourceName: "client", Name: "pick_file"}
	all := []*Tool{search, issue, pick}

	tests := []struct {
		name   string
		policy *Policy
		want   []bool // search, issue, pick
	}{
		{"nil allows all", nil, []bool{true, true, true}},
		{"empty allows all", &Policy{}, []bool{true, true, true}},
		{"deny by name", &Policy{Agent: Rule{Deny: []string{"web_search"}}}, []bool{false, true, true}},
		{"deny by id", &Policy{Session: Rule{Deny: []string{"mcp:github:create_issue"}}}, []bool{true, false, true}},
		{"deny by source", &Policy{Sandbox: Rule{Deny: []string{"source:mcp"}}}, []bool{true, false, true}},
		{"deny by declared group", &Policy{Profile: Rule{Deny: []string{"group:web"}}}, []bool{false, true, true}},
		{"deny by policy group", &Policy{Groups: map[string][]string{"risky": {"pick_file"}},
			Agent: Rule{Deny: []string{"group:risky"}}}, []bool{true, true, false}},
		{"deny star", &Policy{Session: Rule{Deny: []string{"*"}}}, []bool{false, false, false}},
		{"glob", &Policy{Agent: Rule{Deny: []string{"mcp:github:*"}}}, []bool{true, false, true}},
		{"case does not dodge a deny", &Policy{Agent: Rule{Deny: []string{"WEB_SEARCH"}}}, []bool{false, true, true}},
		{"allow list restricts", &Policy{Agent: Rule{Allow: []string{"group:web", "pick_file"}}}, []bool{true, false, true}},
		{"deny wins within a layer", &Policy{Agent: Rule{Allow: []string{"*"}, Deny: []string{"pick_file"}}}, []bool{true, true, false}},
		{"later layer narrows", &Policy{Agent: Rule{Allow: []string{"*"}}, Session: Rule{Allow: []string{"source:client"}}},
			[]bool{false, false, true}},
		{"later layer cannot widen", &Policy{Agent: Rule{Allow: []string{"web_search"}}, Session: Rule{Allow: []string{"*"}}},
			[]bool{true, false, false}},
		{"every layer with an allow list must pass", &Policy{Profile: Rule{Allow: []string{"source:openclaw", "source:mcp"}},
			Sandbox: Rule{Allow: []string{"source:mcp", "pick_file"}}}, []bool{false, true, false}},
		{"unknown group matches nothing", &Policy{Agent: Rule{Allow: []string{"group:nope"}}}, []bool{false, false, false}},
		{"blank entries match nothing", &Policy{Agent: Rule{Deny: []string{"", " "}}}, []bool{true, true, true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for i, tool := range all {
				assert.Equal(t, tc.want[i], tc.policy.Allows(tool), tool.ID())
			}
		})
	}
}

// TestDeniedToolIsInvisible is the fail-closed rule: a denied tool is not in the catalog at all, so
// neither search nor lookup (and so neither describe nor call) can reach it, and nothing hints that it exists.
func TestDeniedToolIsInvisible(t *testing.T) {
	c := mustNew(t, sampleTools(), &Options{Policy: &Policy{Session: Rule{Deny: []string{"browser_take_screenshot"}}}})
	ctx := context.Background()
	for _, q := range []string{"screenshot", "browser_take_screenshot", "mcp:playwright:browser_take_screenshot", "sceenshot"} {
		hits, err := c.Search(ctx, q, 20)
		require.NoError(t, err)
		assert.NotContains(t, ids(hits), "mcp:playwright:browser_take_screenshot", q)
	}
	for _, q := range []string{"browser_take_screenshot", "mcp:playwright:browser_take_screenshot"} {
		_, err := c.Lookup(q)
		var unk *UnknownToolError
		require.ErrorAs(t, err, &unk)
		assert.NotContains(t, c.Suggest(ctx, q, nil), "mcp:playwright:browser_take_screenshot")
		_, err = c.Describe(q)
		require.ErrorAs(t, err, &unk)
	}
	assert.Equal(t, 6, c.Len())
}

func TestGlobMatch(t *testing.T) {
	tests := []struct {
		pattern, s string
		want       bool
	}{
		{"*", "", true},
		{"abc", "abc", true},
		{"abc", "abcd", false},
		{"a*", "abc", true},
		{"*c", "abc", true},
		{"a*c", "abbbc", true},
		{"a*b*c", "axbyc", true},
		{"a*b*c", "axcyb", false},
		{"ab*ba", "aba", false},
		{"[x]", "[x]", true},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, globMatch(tc.pattern, tc.s), "%s ~ %s", tc.pattern, tc.s)
	}
}

// policyTools are the tools of the precedence tables: two servers (one trusted), a core tool and a client tool.
func policyTools() []Tool {
	return []Tool{
		{Source: SourceMCP, SourceName: "github", Name: "get_issue", Annotations: &Annotations{ReadOnlyHint: ptr(true)}},
		{Source: SourceMCP, SourceName: "github", Name: "delete_repository",
			Annotations: &Annotations{DestructiveHint: ptr(true)}},
		{Source: SourceMCP, SourceName: "fs", Name: "read_file", TrustedByUser: true,
			Annotations: &Annotations{ReadOnlyHint: ptr(true)}},
		{Source: SourceMCP, SourceName: "fs", Name: "write_file", TrustedByUser: true,
			Annotations: &Annotations{ReadOnlyHint: ptr(false), DestructiveHint: ptr(false)}},
		{Source: SourceOpenClaw, SourceName: "core", Name: "web_search", Groups: []string{"web"},
			Annotations: &Annotations{ReadOnlyHint: ptr(true)}},
		{Source: SourceClient, SourceName: "client", Name: "pick_file"},
	}
}

// TestPolicyCheck is the precedence table: deny over ask, ask over allow, every layer narrowing, AutoApprove
// lifting only its own layer's Ask, and the rule that decided named for the logs.
func TestPolicyCheck(t *testing.T) {
	tools := policyTools()
	const (
		allow = "allow"
		ask   = "ask"
		deny  = "deny"
	)
	tests := []struct {
		name   string
		policy *Policy
		want   map[string]string // tool name → allow, ask or deny (every tool not listed: allow)
		rule   map[string]string // tool name → Verdict.String(), for the ones worth checking
	}{
		{"empty allow is everything not denied", &Policy{Agent: Rule{Deny: []string{"*_delete*", "*delete_*"}}},
			map[string]string{"delete_repository": deny},
			map[string]string{"delete_repository": `denied by agent deny "*delete_*"`, "get_issue": "allowed"}},
		{"exact id", &Policy{Agent: Rule{Deny: []string{"mcp:github:delete_repository"}}},
			map[string]string{"delete_repository": deny}, nil},
		{"glob over ids", &Policy{Agent: Rule{Allow: []string{"mcp:fs:read_*"}}},
			map[string]string{"get_issue": deny, "delete_repository": deny, "write_file": deny, "web_search": deny, "pick_file": deny},
			map[string]string{"web_search": "not in the agent allow list"}},
		{"glob over names", &Policy{Agent: Rule{Deny: []string{"*_file"}}},
			map[string]string{"read_file": deny, "write_file": deny, "pick_file": deny}, nil},
		{"server", &Policy{Agent: Rule{Allow: []string{"server:github"}}},
			map[string]string{"read_file": deny, "write_file": deny, "web_search": deny, "pick_file": deny}, nil},
		{"server glob and case", &Policy{Agent: Rule{Deny: []string{"SERVER:GIT*"}}},
			map[string]string{"get_issue": deny, "delete_repository": deny}, nil},
		{"server matches mcp tools only", &Policy{Agent: Rule{Deny: []string{"server:core", "server:client"}}}, nil, nil},
		{"group of the policy and of the tool", &Policy{Groups: map[string][]string{"readers": {"mcp:github:get_*", "read_file"}},
			Agent: Rule{Allow: []string{"group:readers", "group:web"}}},
			map[string]string{"delete_repository": deny, "write_file": deny, "pick_file": deny}, nil},
		{"annotation: trusted claims believed, untrusted only stricter", &Policy{Agent: Rule{Ask: []string{"annotation:destructive"}}},
			// get_issue's untrusted readOnly claim is not believed; write_file's trusted "not destructive" is.
			map[string]string{"get_issue": ask, "delete_repository": ask, "pick_file": ask},
			map[string]string{"get_issue": `ask by agent ask "annotation:destructive"`}},
		{"deny wins over ask", &Policy{Agent: Rule{Ask: []string{"*"}, Deny: []string{"delete_repository"}}},
			map[string]string{"get_issue": ask, "delete_repository": deny, "read_file": ask, "write_file": ask, "web_search": ask, "pick_file": ask}, nil},
		{"ask wins over allow", &Policy{Agent: Rule{Allow: []string{"server:github"}, Ask: []string{"get_issue"}}},
			map[string]string{"get_issue": ask, "read_file": deny, "write_file": deny, "web_search": deny, "pick_file": deny}, nil},
		{"autoApprove lifts its own layer's ask", &Policy{Agent: Rule{Ask: []string{"server:github"}, AutoApprove: []string{"mcp:github:get_*"}}},
			map[string]string{"delete_repository": ask},
			map[string]string{"get_issue": `allowed (agent autoApprove "mcp:github:get_*" lifts ask "server:github")`}},
		{"autoApprove never lifts a deny", &Policy{Agent: Rule{Deny: []string{"get_issue"}, AutoApprove: []string{"get_issue"}}},
			map[string]string{"get_issue": deny}, nil},
		{"autoApprove never lifts another layer's ask", &Policy{Agent: Rule{AutoApprove: []string{"get_issue"}},
			Profile: Rule{Ask: []string{"get_issue"}}},
			map[string]string{"get_issue": ask}, map[string]string{"get_issue": `ask by profile ask "get_issue"`}},
		{"a later layer asks after an earlier one lifted", &Policy{Agent: Rule{Ask: []string{"get_issue"}, AutoApprove: []string{"get_issue"}},
			Session: Rule{Ask: []string{"server:github"}}},
			map[string]string{"get_issue": ask, "delete_repository": ask}, nil},
		{"a misspelt autoApprove annotation lifts nothing", &Policy{Agent: Rule{Ask: []string{"get_issue"}, AutoApprove: []string{"annotation:redOnly"}}},
			map[string]string{"get_issue": ask}, nil},
		{"a later layer narrows, never widens", &Policy{Agent: Rule{Allow: []string{"server:*"}}, Profile: Rule{Allow: []string{"*", "annotation:readOnly"}}},
			map[string]string{"web_search": deny, "pick_file": deny}, map[string]string{"pick_file": "not in the agent allow list"}},
		{"the first denying layer is named", &Policy{Profile: Rule{Deny: []string{"pick_*"}}, Session: Rule{Deny: []string{"*"}}},
			map[string]string{"get_issue": deny, "delete_repository": deny, "read_file": deny, "write_file": deny, "web_search": deny, "pick_file": deny},
			map[string]string{"pick_file": `denied by profile deny "pick_*"`, "web_search": `denied by session deny "*"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for i := range tools {
				tool := &tools[i]
				v := tc.policy.Check(tool)
				want := tc.want[tool.Name]
				if want == "" {
					want = allow
				}
				got := allow
				switch {
				case !v.Allowed:
					got = deny
				case v.Ask:
					got = ask
				}
				assert.Equal(t, want, got, "%s: %s", tool.ID(), v)
				assert.Equal(t, v.Allowed, tc.policy.Allows(tool), "Allows agrees with Check for %s", tool.ID())
				entry, asks := tc.policy.NeedsApproval(tool)
				assert.Equal(t, got == ask, asks, "NeedsApproval agrees with Check for %s", tool.ID())
				if asks {
					assert.Equal(t, v.Entry, entry)
				}
				if r, ok := tc.rule[tool.Name]; ok {
					assert.Equal(t, r, v.String(), tool.ID())
				}
			}
		})
	}
}

func TestPolicyUnmatched(t *testing.T) {
	p := &Policy{
		Groups: map[string][]string{"readers": {"mcp:github:get_*"}, "nobody": {"mcp:gitlab:*"}},
		Agent: Rule{
			Allow:       []string{"server:github", "server:gitlab", "*", "group:readers", "group:nobody"},
			Deny:        []string{"*_delete*", "mcp:github:delete_repository", " "},
			Ask:         []string{"annotation:destructive", "annotation:openWorld", "write_fiel"},
			AutoApprove: []string{"get_issue", "list_*"},
		},
		Session: Rule{Deny: []string{"PICK_FILE", "source:plugin"}},
	}
	assert.Equal(t, []Unmatched{
		{Layer: LayerAgent, List: "allow", Entry: "server:gitlab"},
		{Layer: LayerAgent, List: "allow", Entry: "group:nobody"},
		{Layer: LayerAgent, List: "deny", Entry: "*_delete*"},
		{Layer: LayerAgent, List: "ask", Entry: "write_fiel"},
		{Layer: LayerAgent, List: "autoApprove", Entry: "list_*"},
		{Layer: LayerSession, List: "deny", Entry: "source:plugin"},
	}, p.Unmatched(policyTools()))
	assert.Nil(t, (*Policy)(nil).Unmatched(policyTools()))
	assert.Empty(t, (&Policy{}).Unmatched(nil))
}

func TestPolicyValidateAutoApprove(t *testing.T) {
	err := (&Policy{Agent: Rule{AutoApprove: []string{"annotation:readOnyl"}}}).Validate()
	require.ErrorIs(t, err, ErrInvalidPolicy)
	assert.Contains(t, err.Error(), `"annotation:readOnyl"`)
}
