package catalog

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mcpTools are the tools a server listing names makes, as mcp/upstream makes them: safe names, the listed
// name kept.
func mcpTools(server string, names []string) []Tool {
	safeServer, safe := SafeMCPNames(server, names)
	tools := make([]Tool, len(names))
	for i, n := range names {
		tools[i] = Tool{Source: SourceMCP, SourceName: safeServer, Name: safe[i], ListedName: n}
	}
	return tools
}

func TestListedToolSelector(t *testing.T) {
	long := strings.Repeat("x", 60)
	names := []string{"rm.rf", "rm_rf", "suppréssion_totale", "drop\u2011table", long + "_keep", long + "_wipe", "Delete"}
	tools := mcpTools("my server", names)
	deny := func(entries ...string) *Policy {
		p := &Policy{}
		for _, e := range entries {
			p.Agent.Deny = append(p.Agent.Deny, ListedToolSelector("my server", e))
		}
		return p
	}
	denied := func(p *Policy) []string {
		var out []string
		for i := range tools {
			if !p.Allows(&tools[i]) {
				out = append(out, tools[i].ListedName)
			}
		}
		return out
	}
	assert.Equal(t, []string{"rm.rf"}, denied(deny("rm.rf")), "not its twin rm_rf, which has the id rm.rf's safe form")
	assert.Equal(t, []string{"rm_rf"}, denied(deny("rm_rf")), "not rm.rf, whose id is rm_rf")
	assert.Equal(t, []string{"suppréssion_totale", "drop\u2011table"}, denied(deny("suppréssion_totale", " drop\u2011table ")))
	assert.Equal(t, []string{long + "_wipe"}, denied(deny(long+"_wipe")))
	assert.Equal(t, []string{"rm.rf", "rm_rf"}, denied(deny("rm*")), "globs over listed names")
	assert.Empty(t, denied(deny("delete")), "the listed name exactly, case included: Delete is another name")
	assert.Empty(t, deny("rm.rf", "suppréssion_totale").Unmatched(tools))
	assert.Equal(t, []Unmatched{{Layer: LayerAgent, List: "deny", Entry: "listed:my_server:rm-rf"}}, deny("rm-rf").Unmatched(tools))
	assert.Equal(t, []string{"rm-rf", "x*"}, UnresolvedListed([]string{"rm.rf", "rm-rf", "x*", "*"}, []string{"rm.rf"}))

	name, ok := ListedToolName(ListedToolSelector("my server", "suppréssion_totale"))
	assert.True(t, ok)
	assert.Equal(t, "suppréssion_totale", name)
	_, ok = ListedToolName("mcp:my_server:rm_rf")
	assert.False(t, ok)

	// Other selectors match the listed name too (ignoring case, as they do ids), besides the id.
	plain := &Policy{Agent: Rule{Deny: []string{"mcp:my_server:SUPPRÉSSION_TOTALE", "drop\u2011table"}}}
	assert.Equal(t, []string{"suppréssion_totale", "drop\u2011table"}, denied(plain))

	// A listed entry never names another server's tool.
	other := mcpTools("other", names)
	assert.True(t, deny("rm.rf").Allows(&other[0]))
}

// FuzzListedToolSelector: for any listing of distinct names, denying some of them by ListedToolSelector (as
// disabledTools does) makes exactly those unreachable, whatever safe names and suffixes the listing gets.
func FuzzListedToolSelector(f *testing.F) {
	f.Add("rm_rf\nrm.rf\nsuppréssion_totale\nsuppr_ssion_totale", uint64(0b0110))
	f.Add(strings.Repeat("a", 70)+"1\n"+strings.Repeat("a", 70)+"2\n"+strings.Repeat("a", 57)+"-2", uint64(0b101))
	f.Add("x\nx-2\nx_\nx.", uint64(0b1010))
	f.Add("drop\u2011table\ndrop_table\ndrop-table\n\u202etable", uint64(0b1001))
	f.Fuzz(func(t *testing.T, list string, mask uint64) {
		var names []string
		seen := map[string]bool{}
		for _, n := range strings.Split(list, "\n") {
			// A server lists a name once; '*' is a glob in an entry; an entry is trimmed.
			if n == "" || seen[n] || strings.Contains(n, "*") || strings.TrimSpace(n) != n {
				continue
			}
			seen[n] = true
			names = append(names, n)
		}
		if len(names) > 64 {
			names = names[:64]
		}
		tools := mcpTools("srv", names)
		p := &Policy{}
		want := map[string]bool{}
		for i, n := range names {
			if mask&(1<<i) != 0 {
				p.Agent.Deny = append(p.Agent.Deny, ListedToolSelector("srv", n))
				want[n] = true
			}
		}
		ids := map[string]bool{}
		for i := range tools {
			require.False(t, ids[tools[i].ID()], "ids are unique")
			ids[tools[i].ID()] = true
			require.Equal(t, !want[names[i]], p.Allows(&tools[i]), "listed %q (id %s), deny %v", names[i], tools[i].ID(), p.Agent.Deny)
		}
		require.Empty(t, p.Unmatched(tools))
	})
}
