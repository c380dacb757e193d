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
