package catalog

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/internal/devset"
)

// The explained first stage is the first stage's score, bit for bit, and the explained features times their
// weights are the learned score, for the top ten of every query of every development set (terse and long, exact
// names, typos, synonyms, Chinese), and the hits are explained in search order. Both learned models are on,
// whichever the default re-ranks with; the default (learnedLong, learnedTerse) ranks the other class by the
// first stage alone.
func TestExplainTotalIsTheScore(t *testing.T) {
	sets, err := devset.Load("testdata", true)
	require.NoError(t, err)
	def := defaultRankConfig()
	assert.Equal(t, learnedLong, def.weights != nil, "long requests: the trainer's default")
	assert.Equal(t, learnedTerse, def.terseWeights != nil, "terse requests: the trainer's default")
	cfg := def
	cfg.weights = unstandardise(&learnedZWeights, &learnedStd)
	cfg.terseWeights = unstandardise(&learnedTerseZWeights, &learnedTerseStd)
	checked := 0
	for _, s := range sets {
		tools, err := ParseFile(s.Catalog)
		require.NoError(t, err)
		for _, cfg := range []rankConfig{cfg, def} {
			c, err := newCatalog(tools, &Options{MaxSearchLimit: 10}, "", &counters{}, cfg)
			require.NoError(t, err)
			for qi, q := range s.Queries {
				if qi%3 != 0 { // a third of each set keeps the test quick; every set's kinds of request are in it
					continue
				}
				pq, ranked := c.ix.ranked(q.Text, 10)
				hits := c.ix.search(q.Text, 10)
				model := c.ix.learnedFor(&pq)
				if model == nil {
					require.Nil(t, ranked, "a class with no model is not re-scored")
					for _, h := range hits {
						ranked = append(ranked, candidate{scored: h, first: h.score})
					}
				}
				ranked = ranked[:min(10, len(ranked))]
				require.Len(t, hits, len(ranked))
				docs := make([]uint32, len(ranked))
				for i, r := range ranked {
					docs[i] = r.doc
					require.Equal(t, hits[i], r.scored, "search ranks as ranked")
				}
				_, scores := c.ix.explain(q.Text, docs)
				for i, r := range ranked {
					require.Equal(t, r.first, scores[i].score, "%s: %q, hit %d", s.Name, q.Text, i+1)
					require.Equal(t, r.exact, scores[i].exact)
					if model != nil {
						require.Equal(t, learnedScore(&r.x, model), r.score)
					}
					checked++
				}
			}
		}
	}
	assert.Greater(t, checked, 5000)
}

func TestExplain(t *testing.T) {
	c, err := New(sampleTools(), nil)
	require.NoError(t, err)
	ctx := context.Background()
	hits, err := c.Search(ctx, "take a sceenshot of the page", 3)
	require.NoError(t, err)
	xs, err := c.Explain(ctx, "take a sceenshot of the page", 3, "web_search")
	require.NoError(t, err)
	require.Len(t, xs, len(hits)+1, "the named tool after the hits")
	for i, h := range hits {
		assert.Equal(t, h.ID, xs[i].ID)
		assert.Equal(t, h.Score, xs[i].Score)
		assert.Equal(t, i+1, xs[i].Rank)
		assert.InDelta(t, xs[i].FirstStage, xs[i].Sum*xs[i].CoverageFactor*xs[i].ActionFactor, 1e-3)
		assert.Empty(t, xs[i].Features, "a terse query ranks by the first stage alone")
		assert.Equal(t, xs[i].FirstStage, xs[i].Total)
		assert.False(t, xs[i].Reranked)
	}
	// A long request is re-scored by the learned model when it is on (by default, when learnedLong): each
	// explanation's parts add up to its total.
	long := "could you please take a sceenshot of the page that is open in my browser window right now for my weekly report"
	dxs, err := c.Explain(ctx, long, 3)
	require.NoError(t, err)
	require.NotEmpty(t, dxs)
	assert.Equal(t, learnedLong, dxs[0].Reranked, "the default")
	cfg := defaultRankConfig()
	cfg.weights = unstandardise(&learnedZWeights, &learnedStd)
	lc, err := newCatalog(sampleTools(), nil, "", &counters{}, cfg)
	require.NoError(t, err)
	lhits, err := lc.Search(ctx, long, 3)
	require.NoError(t, err)
	lxs, err := lc.Explain(ctx, long, 3)
	require.NoError(t, err)
	require.Len(t, lxs, len(lhits))
	for i, h := range lhits {
		x := lxs[i]
		assert.Equal(t, h.ID, x.ID)
		assert.Equal(t, h.Score, x.Score)
		assert.True(t, x.Long)
		assert.True(t, x.Reranked)
		require.NotEmpty(t, x.Features)
		var total float64
		for _, f := range x.Features {
			assert.InDelta(t, f.Contribution, f.Value*f.Weight, 1e-4, f.Name)
			total += f.Contribution
		}
		assert.InDelta(t, x.Total, total, 1e-3, "the learned score is the sum of its parts")
	}
	top := xs[0]
	assert.Equal(t, "mcp:playwright:browser_take_screenshot", top.ID)
	byWord := map[string]WordMatch{}
	for _, w := range top.Words {
		byWord[w.Word] = w
	}
	assert.Equal(t, "typo fix", byWord["sceenshot"].How)
	assert.Equal(t, "screenshot", byWord["sceenshot"].Term)
	assert.Contains(t, byWord["sceenshot"].Fields, "name")
	assert.Contains(t, byWord["sceenshot"].Fields, "description")
	assert.True(t, byWord["take"].Hint, "a light verb")
	assert.Positive(t, byWord["take"].Bonus, "take is written as in the name")
	assert.Equal(t, "word", byWord["page"].How)
	var sum float64
	for _, w := range top.Words {
		sum += w.Score + w.Bonus
	}
	assert.InDelta(t, top.Sum, sum, 1e-4)

	last := xs[len(xs)-1]
	assert.Equal(t, "openclaw:core:web_search", last.ID)
	_, err = c.Explain(ctx, "screenshot", 3, "no_such_tool")
	require.Error(t, err)
	_, err = c.Explain(ctx, "screenshot", -1)
	require.ErrorIs(t, err, ErrInvalidLimit)
}
