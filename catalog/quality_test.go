package catalog

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/internal/bm25"
)

// devQuery is one line of testdata/devset/queries.jsonl.
type devQuery struct {
	Query  string   `json:"query"`
	Expect []string `json:"expect"`
	Kind   string   `json:"kind"`
}

func loadDevSet(t testing.TB) ([]Tool, []devQuery) {
	t.Helper()
	data, err := os.ReadFile("testdata/devset/catalog.json")
	require.NoError(t, err)
	tools, err := ParseFile(data)
	require.NoError(t, err)
	return tools, loadQueries(t, "testdata/devset/queries.jsonl")
}

func loadQueries(t testing.TB, path string) []devQuery {
	t.Helper()
	f, err := os.ReadFile(path)
	require.NoError(t, err)
	var qs []devQuery
	sc := bufio.NewScanner(bytes.NewReader(f))
	for sc.Scan() {
		var q devQuery
		require.NoError(t, json.Unmarshal(sc.Bytes(), &q))
		qs = append(qs, q)
	}
	return qs
}

// quality is hit@1, hit@5 and MRR@10 over a query set.
type quality struct{ hit1, hit5, mrr float64 }

func measure(qs []devQuery, rank func(q string) []string) (all quality, byKind map[string]quality, misses []string) {
	byKind = make(map[string]quality)
	counts := make(map[string]int)
	for _, q := range qs {
		ids := rank(q.Query)
		pos := 0
		for i, id := range ids {
			if i >= 10 {
				break
			}
			for _, want := range q.Expect {
				if id == want && pos == 0 {
					pos = i + 1
				}
			}
		}
		var r quality
		if pos == 1 {
			r.hit1 = 1
		}
		if pos >= 1 && pos <= 5 {
			r.hit5 = 1
		}
		if pos > 0 {
			r.mrr = 1 / float64(pos)
		} else {
			top := ""
			if len(ids) > 0 {
				top = ids[0]
			}
			misses = append(misses, fmt.Sprintf("%q want %v got %q", q.Query, q.Expect, top))
		}
		for _, k := range []string{"all", q.Kind} {
			s := byKind[k]
			s.hit1, s.hit5, s.mrr = s.hit1+r.hit1, s.hit5+r.hit5, s.mrr+r.mrr
			byKind[k] = s
			counts[k]++
		}
	}
	for k, s := range byKind {
		n := float64(counts[k])
		byKind[k] = quality{s.hit1 / n, s.hit5 / n, s.mrr / n}
	}
	return byKind["all"], byKind, misses
}

func oursRanker(t testing.TB, tools []Tool, cfg rankConfig) func(string) []string {
	c, err := newCatalog(tools, nil, "", &counters{}, cfg)
	require.NoError(t, err)
	return func(q string) []string {
		hits, err := c.Search(context.Background(), q, 10)
		require.NoError(t, err)
		ids := make([]string, len(hits))
		for i, h := range hits {
			ids[i] = h.ID
		}
		return ids
	}
}

// TestSearchQuality is the ranking's report card on the development set: our ranker against a plain BM25
// baseline (one field, lowercase words, stop words, no stemming or expansion). A held-out set decides later,
// so the margin asserted here is what any general ranking improvement should clear, not a fitted number.
func TestSearchQuality(t *testing.T) {
	tools, qs := loadDevSet(t)
	require.GreaterOrEqual(t, len(tools), 200)
	require.GreaterOrEqual(t, len(qs), 150)

	base, baseKinds, _ := measure(qs, newPlainBM25(tools).rank)
	ours, ourKinds, misses := measure(qs, oursRanker(t, tools, defaultRankConfig()))

	var b strings.Builder
	fmt.Fprintf(&b, "dev set: %d tools, %d queries\n", len(tools), len(qs))
	fmt.Fprintf(&b, "%-22s %7s %7s %7s\n", "ranker", "hit@1", "hit@5", "MRR@10")
	row := func(name string, q quality) {
		fmt.Fprintf(&b, "%-22s %7.3f %7.3f %7.3f\n", name, q.hit1, q.hit5, q.mrr)
	}
	row("plain BM25", base)
	row("ours", ours)
	kinds := sortedKeys(ourKinds)
	for _, k := range kinds {
		if k != "all" {
			row("  bm25/"+k, baseKinds[k])
			row("  ours/"+k, ourKinds[k])
		}
	}
	// queries_fresh.jsonl was written after the ranker was tuned and never tuned on: the closest thing to the
	// held-out set that we have, reported but not asserted beyond "not worse than the baseline".
	fresh := loadQueries(t, "testdata/devset/queries_fresh.jsonl")
	freshBase, _, _ := measure(fresh, newPlainBM25(tools).rank)
	freshOurs, _, freshMisses := measure(fresh, oursRanker(t, tools, defaultRankConfig()))
	fmt.Fprintf(&b, "fresh queries (not tuned on): %d\n", len(fresh))
	row("  plain BM25", freshBase)
	row("  ours", freshOurs)
	if testing.Verbose() {
		for _, m := range freshMisses {
			fmt.Fprintf(&b, "fresh miss: %s\n", m)
		}
		ablations := []struct {
			name string
			edit func(*rankConfig)
		}{
			{"-synonyms", func(c *rankConfig) { c.noSynonyms = true }},
			{"-prefix", func(c *rankConfig) { c.noPrefix = true }},
			{"-fuzzy", func(c *rankConfig) { c.noFuzzy = true }},
			{"-coverage", func(c *rankConfig) { c.coverage = 0 }},
			{"-abbreviations", func(c *rankConfig) { c.noAbbreviations = true }},
			{"-light verbs", func(c *rankConfig) { c.lightVerb = 1 }},
			{"-surface", func(c *rankConfig) { c.surface = 0 }},
			{"-source field", func(c *rankConfig) { c.boost[fieldSource] = 0 }},
			{"-params field", func(c *rankConfig) { c.boost[fieldParams] = 0 }},
			{"flat field boosts", func(c *rankConfig) { c.boost = [numFields]float32{1, 1, 1, 1, 1} }},
		}
		for _, a := range ablations {
			cfg := defaultRankConfig()
			a.edit(&cfg)
			q, _, _ := measure(qs, oursRanker(t, tools, cfg))
			row("ablation "+a.name, q)
		}
		for _, m := range misses {
			fmt.Fprintf(&b, "miss: %s\n", m)
		}
	}
	t.Log("\n" + b.String())

	// Measured: +0.10 hit@1, +0.07 hit@5, +0.08 MRR@10. The asserted floors leave room for ranking changes that
	// trade a query or two, and fail on any change that gives up the ranking's real advantage.
	require.Greater(t, ours.hit1, base.hit1+0.06, "hit@1 must beat plain BM25 clearly")
	require.Greater(t, ours.hit5, base.hit5+0.04, "hit@5 must beat plain BM25 clearly")
	require.Greater(t, ours.mrr, base.mrr+0.05, "MRR@10 must beat plain BM25 clearly")
	require.GreaterOrEqual(t, freshOurs.mrr, freshBase.mrr, "fresh queries: not worse than plain BM25")
}

// plainBM25 is the baseline: internal/bm25 (Okapi BM25, k1 1.2, b 0.75, inverted index) over one field holding
// the name, description and parameter text, lowercased and split on anything but letters and digits, with this
// package's stop words. It is what a reasonable first implementation would do, so beating it measures the
// ranking ideas, not the tokenizer alone.
type plainBM25 struct{ ix *bm25.Index }

func newPlainBM25(tools []Tool) *plainBM25 {
	sorted := append([]Tool(nil), tools...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].ID() < sorted[j].ID() })
	docs := make([]bm25.Doc, len(sorted))
	for i, t := range sorted {
		docs[i] = bm25.Doc{ID: t.ID(), Text: t.Name + " " + t.Description + " " + paramText(t.Parameters)}
	}
	return &plainBM25{ix: bm25.New(docs, func(s string) []string { return bm25.Words(s, isStopWord) })}
}

func (b *plainBM25) rank(q string) []string {
	hits := b.ix.Search(q, 10)
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.ID
	}
	return ids
}
