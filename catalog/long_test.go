package catalog

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestContentWordsAndLongRequests(t *testing.T) {
	for _, tc := range []struct {
		q    string
		want int
	}{
		{"create an issue", 2},
		{"please help me get the weather", 1}, // stop words, a light verb and a framing word
		{"create create creates", 1},
		{"open a pull request on the repository for the fix in the login form today", 7}, // "pull" is a light verb
	} {
		assert.Equal(t, tc.want, contentWords(tc.q), tc.q)
	}
	c, err := New(sampleTools(), nil)
	require.NoError(t, err)
	assert.False(t, c.ix.parseQuery("alpha beta gamma delta epsilon zeta").long)
	assert.True(t, c.ix.parseQuery("alpha beta gamma delta epsilon zeta eta").long)
}

func TestQuotedWords(t *testing.T) {
	got := quotedWords(`Reschedule 'Alice-One' to "May 2" and don't touch the users' “Team Sync” or 「会議」`)
	for _, w := range []string{"alice", "one", "may", "team", "sync", "会議"} {
		assert.True(t, got[w], w)
	}
	for _, w := range []string{"reschedule", "don", "touch", "users"} {
		assert.False(t, got[w], w)
	}
	far := "say 'hello " + strings.Repeat("x", maxQuotedRunes) + " world'"
	assert.Empty(t, quotedWords(far), "a quote closing past the bound quotes nothing")
	assert.True(t, quotedWords("say 'hello " + strings.Repeat("x", maxQuotedRunes-20) + " world'")["hello"])
}

// lookAlikes differ only in their action word; any other word of a request matches both the same.
func lookAlikes() []Tool {
	d := "Pull requests of a GitHub repository: the title, body, head and base branches and reviewers."
	return []Tool{
		{Source: SourceMCP, SourceName: "github", Name: "pull_requests_create", Description: d},
		{Source: SourceMCP, SourceName: "github", Name: "pull_requests_list", Description: d},
	}
}

// In a long request a tool whose name's action is one the request asks for scores actionBonus more; the other
// look-alike and every terse query score as without the rule.
func TestActionBreaksLookAlikeTies(t *testing.T) {
	ctx := context.Background()
	// The action factor is the first stage's: compared without the learned ranking, which re-scores long requests.
	on, err := newCatalog(lookAlikes(), nil, "", &counters{}, firstStageConfig())
	require.NoError(t, err)
	cfg := firstStageConfig()
	cfg.actionBonus = 0
	off, err := newCatalog(lookAlikes(), nil, "", &counters{}, cfg)
	require.NoError(t, err)
	scores := func(c *Catalog, q string) map[string]float64 {
		hits, err := c.Search(ctx, q, 2)
		require.NoError(t, err)
		out := map[string]float64{}
		for _, h := range hits {
			out[h.ID] = h.Score
		}
		return out
	}
	const list, create = "mcp:github:pull_requests_list", "mcp:github:pull_requests_create"
	long := "our team needs you to enumerate every open pull request of the frontend repository against main"
	a, b := scores(on, long), scores(off, long)
	require.Positive(t, defaultRankConfig().actionBonus)
	assert.InEpsilon(t, b[list]*(1+float64(defaultRankConfig().actionBonus)), a[list], 1e-3, "the list tool gains the bonus (scores are rounded)")
	assert.Equal(t, b[create], a[create], "the create tool does not")
	short := "enumerate pull requests"
	assert.Equal(t, scores(off, short), scores(on, short), "a terse query ranks as before")
}

// Numbers and quoted values of a long request count longHint of a word: below 1, a tool that matches a number of
// the request scores less.
func TestLongHints(t *testing.T) {
	tools := []Tool{
		{Source: SourceMCP, SourceName: "geo", Name: "route_48", Description: "Route number 48 of the network."},
		{Source: SourceMCP, SourceName: "geo", Name: "reverse_geocode", Description: "Turn coordinates into a street address."},
	}
	scores := func(hint float32, q string) map[string]float64 {
		cfg := firstStageConfig()
		cfg.longHint = hint
		c, err := newCatalog(tools, nil, "", &counters{}, cfg)
		require.NoError(t, err)
		hits, err := c.Search(context.Background(), q, 2)
		require.NoError(t, err)
		out := map[string]float64{}
		for _, h := range hits {
			out[h.ID] = h.Score
		}
		return out
	}
	const route, geo = "mcp:geo:route_48", "mcp:geo:reverse_geocode"
	for _, q := range []string{
		"which street address is at latitude 48 longitude 2 near the old city centre by the river",
		"which street address is at the place called '48' near the old city centre by the river",
	} {
		full, weak := scores(1, q), scores(0.1, q)
		assert.Less(t, weak[route], full[route], q)
		// A hint does not count towards coverage either, so a tool without the number covers more of the rest.
		assert.GreaterOrEqual(t, weak[geo], full[geo], q)
	}
	terse := "street address 48"
	assert.Equal(t, scores(1, terse), scores(0.1, terse), "a terse query's numbers count in full")
}

// A long request reads the postings weighted with longBoost: with the name weighted 0 in long requests, a tool
// that has a request word only in its name loses to one with it in its description.
func TestLongBoost(t *testing.T) {
	tools := []Tool{
		{Source: SourceMCP, SourceName: "a", Name: "hourly_report", Description: "Summarise the sales of a store."},
		{Source: SourceMCP, SourceName: "b", Name: "forecast", Description: "The hourly weather of a town."},
	}
	q := "hourly"
	long := "tell me what happens hourly in the town where my parents have been living for years"
	cfg := firstStageConfig()
	cfg.longBoost[fieldName] = 0
	c, err := newCatalog(tools, nil, "", &counters{}, cfg)
	require.NoError(t, err)
	hits, err := c.Search(context.Background(), q, 2)
	require.NoError(t, err)
	assert.Equal(t, "mcp:a:hourly_report", hits[0].ID, "a terse query weighs the name as before")
	hits, err = c.Search(context.Background(), long, 2)
	require.NoError(t, err)
	assert.Equal(t, "mcp:b:forecast", hits[0].ID)
}
