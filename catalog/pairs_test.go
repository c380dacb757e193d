package catalog

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pairsConfig is the ranking with adjacent-word pairs on, for long requests only.
func pairsConfig() rankConfig {
	cfg := firstStageConfig()
	cfg.pairWeight = 0.3
	return cfg
}

// twinFlights hold the same words; only the first has "round trip" side by side, the second has it joined, the
// third has the two words the other way round, the fourth neither.
func twinFlights() []Tool {
	return []Tool{
		{Source: SourceMCP, SourceName: "air", Name: "search_flights_a", Description: "Search flights for a round trip between two airports."},
		{Source: SourceMCP, SourceName: "air", Name: "SearchRoundtripFlights", Description: "Search flights between two airports."},
		{Source: SourceMCP, SourceName: "air", Name: "search_flights_c", Description: "Search flights for a trip round between two airports."},
		{Source: SourceMCP, SourceName: "air", Name: "SearchOnewayFlight", Description: "Search flights between two airports."},
	}
}

func TestPairsIndexAdjacentWords(t *testing.T) {
	c, err := newCatalog(twinFlights(), nil, "", &counters{}, pairsConfig())
	require.NoError(t, err)
	ix := c.ix
	id, ok := ix.term(pairKey("round", "trip"))
	require.True(t, ok, "a description's adjacent words are a pair")
	assert.GreaterOrEqual(t, id, ix.firstPair)
	docs := ix.list(id).doc
	require.Len(t, docs, 1, "only the tool with the words side by side, in this order, has the pair")
	assert.Equal(t, "search_flights_a", c.entries[docs[0]].tool.Name)
	assert.Nil(t, ix.list(id).name, "a pair has no surface weights stored")
	_, ok = ix.term(pairKey("search", "roundtrip"))
	assert.True(t, ok, "a name's words, split, are pairs too")
	_, ok = ix.term(pairKey("flight", "a"))
	assert.False(t, ok, "a one-letter word is no word")

	numbered, err := newCatalog([]Tool{{Source: SourceMCP, Name: "task_48_get", Description: "Get task 48 hours late."}}, nil, "", &counters{}, pairsConfig())
	require.NoError(t, err)
	for _, key := range numbered.ix.vocab {
		if len(key) > 0 && key[0] == '+' {
			assert.NotContains(t, key, "48", "a number is no half of a pair")
		}
	}
	_, ok = numbered.ix.term(pairKey("task", "get"))
	assert.False(t, ok, "a number between two words breaks their run")

	off, err := New(twinFlights(), nil)
	require.NoError(t, err)
	assert.Equal(t, uint32(len(off.ix.vocab)), off.ix.firstPair, "with pairs off no pair is indexed")
}

// In a long request, a tool that has two adjacent words of the request side by side, or joined into one word,
// beats one that has the same words apart; a terse query ranks as without pairs.
func TestPairsTellTwinsApart(t *testing.T) {
	ctx := context.Background()
	// Pairs are a first-stage signal: both sides without the learned ranking, which re-scores long requests.
	on, err := newCatalog(twinFlights(), nil, "", &counters{}, pairsConfig())
	require.NoError(t, err)
	off, err := newCatalog(twinFlights(), nil, "", &counters{}, firstStageConfig())
	require.NoError(t, err)
	long := "I am looking to book a round trip between Boston and Denver airports next month for my family"
	require.True(t, on.ix.parseQuery(long).long)

	scores := func(c *Catalog, q string) map[string]float32 {
		out := map[string]float32{}
		for _, r := range c.ix.search(q, 10) {
			out[c.entries[r.doc].tool.Name] = r.score
		}
		return out
	}
	got, before := scores(on, long), scores(off, long)
	require.Equal(t, before["search_flights_a"], before["search_flights_c"], "the same words score the same without pairs")
	assert.Greater(t, got["search_flights_a"], got["search_flights_c"], "side by side beats apart")
	assert.Greater(t, got["SearchRoundtripFlights"], got["SearchOnewayFlight"], "joined beats neither")
	assert.Equal(t, before["search_flights_c"], got["search_flights_c"], "a tool with neither the pair nor the joined word scores as before")
	assert.Equal(t, before["SearchOnewayFlight"], got["SearchOnewayFlight"])

	hits, err := on.Search(ctx, "round trip flights", 4)
	require.NoError(t, err)
	want, err := off.Search(ctx, "round trip flights", 4)
	require.NoError(t, err)
	assert.Equal(t, want, hits, "a terse query reads no pairs")

	short := pairsConfig()
	short.shortPairs = true
	all, err := newCatalog(twinFlights(), nil, "", &counters{}, short)
	require.NoError(t, err)
	terse := scores(all, "round trip flights")
	assert.Greater(t, terse["search_flights_a"], terse["search_flights_c"], "with shortPairs a terse query reads them too")
}

// A pair is a hint: it does not count towards coverage, nor makes a request long, and its group comes after the
// words' within maxQueryGroups.
func TestPairGroups(t *testing.T) {
	c, err := newCatalog(twinFlights(), nil, "", &counters{}, pairsConfig())
	require.NoError(t, err)
	pq := c.ix.parseQuery("please search flights for a round trip between two airports today")
	var words, pairs int
	for _, g := range pq.groups {
		if g.pair {
			pairs++
			assert.True(t, g.hint, g.raw)
			assert.NotEmpty(t, g.exps, g.raw)
			continue
		}
		assert.Zero(t, pairs, "pairs come after every word")
		words++
	}
	assert.Positive(t, pairs)
	w, _, _ := c.ix.queryWeights(pq.groups)
	for gi, g := range pq.groups {
		if g.pair {
			assert.Zero(t, w[gi], "a pair counts nothing towards coverage")
		}
	}
	assert.Equal(t, "round trip", pq.groups[words+indexOfPair(pq, "round trip")].raw)

	var flood string
	for i := range maxQueryGroups + 10 {
		flood += string(rune('a'+i%26)) + string(rune('a'+i/26)) + "x search flights "
	}
	assert.LessOrEqual(t, len(c.ix.parseQuery(flood).groups), maxQueryGroups, "pairs stay within the bound on groups")
}

func indexOfPair(pq parsedQuery, raw string) int {
	i := 0
	for _, g := range pq.groups {
		if !g.pair {
			continue
		}
		if g.raw == raw {
			return i
		}
		i++
	}
	return -1
}

// Explain names a pair's match and still sums to the score search gives.
func TestExplainPairs(t *testing.T) {
	c, err := newCatalog(twinFlights(), nil, "", &counters{}, pairsConfig())
	require.NoError(t, err)
	long := "I am looking to book a round trip between Boston and Denver airports next month for my family"
	xs, err := c.Explain(context.Background(), long, 4)
	require.NoError(t, err)
	hows := map[string]string{}
	for _, x := range xs {
		for _, w := range x.Words {
			if w.Word == "round trip" && w.How != "" {
				hows[x.Name] = w.How
				assert.True(t, w.Hint)
				assert.Zero(t, w.Weight)
			}
		}
	}
	assert.Equal(t, map[string]string{"search_flights_a": "pair", "SearchRoundtripFlights": "joined pair"}, hows)
	for _, x := range xs {
		for _, r := range c.ix.search(long, 4) {
			if c.entries[r.doc].tool.Name == x.Name {
				assert.InDelta(t, float64(r.score), x.Total, 0, x.Name)
			}
		}
	}
}
