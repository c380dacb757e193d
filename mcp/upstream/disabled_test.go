package upstream

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/catalog"
)

// longStem makes two 68-character names that the 64-character cut of "mcp:child:..." ids makes equal.
var longStem = strings.Repeat("archive_", 7) + "old_records" // 67 characters

// awkwardNames is what the "names" child lists: pairs of a harmless and a dangerous name that make one safe
// name, so one of each gets the collision suffix (the server's order decides which): rm.rf and rm_rf,
// suppréssion_totale and suppr_ssion_totale, drop‑table (U+2011) and drop_table, and two long names that the
// 64-character cut of "mcp:child:..." makes equal.
var awkwardNames = []string{
	"rm_rf", "rm.rf",
	"suppr_ssion_totale", "suppréssion_totale",
	"drop_table", "drop\u2011table",
	longStem + "K", longStem + "W",
}

// disabled are the dangerous names of awkwardNames, as a user copies them from the server's listing.
var disabled = []string{"rm.rf", "suppréssion_totale", "drop\u2011table", longStem + "W"}

// TestDisabledToolsByListedName starts a real stdio server listing non-ASCII, over-long and colliding names,
// and disables the dangerous one of each pair the way the config does (catalog.ListedToolSelector): none of
// them is in the catalog, and every harmless twin is there and reaches the server.
func TestDisabledToolsByListedName(t *testing.T) {
	requireProc(t)
	cfg := childConfig("names")
	cfg.DisabledTools = disabled
	src := newChildSource(t, map[string]ServerConfig{"child": cfg}, fastOptions(nil))
	require.Equal(t, StateReady, src.Status()[0].State, "%v", src.Status()[0].Err)

	byListed := map[string]catalog.Tool{}
	for _, tool := range src.Tools() {
		byListed[tool.ListedName] = tool
	}
	require.Len(t, byListed, len(awkwardNames)+1)
	for i := 0; i < len(awkwardNames); i += 2 {
		a, b := byListed[awkwardNames[i]].Name, byListed[awkwardNames[i+1]].Name
		assert.True(t, strings.HasSuffix(a, "-2") != strings.HasSuffix(b, "-2"),
			"the twins %q and %q collide, so one id (%s, %s) has a suffix", awkwardNames[i], awkwardNames[i+1], a, b)
	}

	policy := &catalog.Policy{}
	for _, e := range disabled {
		policy.Agent.Deny = append(policy.Agent.Deny, catalog.ListedToolSelector("child", e))
	}
	cat, err := catalog.New(src.Tools(), &catalog.Options{Policy: policy})
	require.NoError(t, err)
	assert.Empty(t, policy.Unmatched(src.Tools()), "every entry resolves")
	kept := map[string]bool{}
	for _, tool := range cat.Tools() {
		kept[tool.ListedName] = true
	}
	for i, name := range awkwardNames {
		if i%2 == 1 {
			assert.False(t, kept[name], "%q is disabled", name)
			continue
		}
		require.True(t, kept[name], "the harmless twin %q stays", name)
		twin := byListed[name]
		tool, err := cat.Lookup(twin.ID())
		require.NoError(t, err, name)
		res, err := tool.Handler.Call(t.Context(), json.RawMessage(`{"text":"hi"}`))
		require.NoError(t, err)
		assert.Equal(t, name+": hi", contentText(res.Content), "the twin reaches its own tool on the server")
	}
}

// TestDisabledToolNotListedFailsClosed: an entry that names no listed tool (the server renamed the tool, or
// the entry is misspelt) refuses the server's listing, so none of its tools is served, and the error says which
// entry and what the server lists.
func TestDisabledToolNotListedFailsClosed(t *testing.T) {
	requireProc(t)
	cfg := childConfig("names")
	cfg.DisabledTools = []string{"rm.rf", "rm-rf"}
	cfg.ExcludeTools = []string{"drop-table"}
	src := newChildSource(t, map[string]ServerConfig{"child": cfg}, fastOptions(nil))
	st := src.Status()[0]
	require.Equal(t, StateFailed, st.State)
	assert.Empty(t, src.Tools(), "none of the server's tools is served")
	require.ErrorIs(t, st.Err, ErrUnresolvedDisabled)
	var ue *UnresolvedDisabledError
	require.ErrorAs(t, st.Err, &ue)
	assert.Equal(t, []string{`disabledTools "rm-rf"`, `excludeTools "drop-table"`}, ue.Entries)
	assert.Contains(t, ue.Listed, "drop\u2011table")
	assert.Contains(t, st.Err.Error(), `"drop\u2011table"`, "the listed names are quoted in ASCII")
}
