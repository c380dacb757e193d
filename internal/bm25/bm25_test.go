package bm25

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRanksByTermRarityAndFrequency(t *testing.T) {
	ix := New([]Doc{
		{ID: "a", Text: "send an email message"},
		{ID: "b", Text: "send a chat message message"},
		{ID: "c", Text: "list calendar events"},
	}, func(s string) []string { return Words(s, func(w string) bool { return w == "a" || w == "an" }) })
	hits := ix.Search("chat message", 10)
	require.Len(t, hits, 2)
	assert.Equal(t, "b", hits[0].ID, "the rare word and the repeated word both favour b")
	assert.Empty(t, ix.Search("nothing matches", 10))
	assert.Empty(t, New(nil, func(s string) []string { return Words(s, nil) }).Search("x", 10))
}

// The inverted index must score exactly like the textbook formula applied document by document.
func TestMatchesBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	vocab := []string{"alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta"}
	var docs []Doc
	for i := range 200 {
		text := ""
		for range 1 + r.IntN(12) {
			text += vocab[r.IntN(len(vocab))] + " "
		}
		docs = append(docs, Doc{ID: fmt.Sprint(i), Text: text})
	}
	words := func(s string) []string { return Words(s, nil) }
	ix := New(docs, words)
	for _, q := range []string{"alpha", "beta gamma", "theta theta eta", "zeta unknown"} {
		want := bruteForce(docs, words, q)
		got := ix.Search(q, 10)
		require.Len(t, got, len(want), q)
		for i := range got {
			assert.Equal(t, want[i].ID, got[i].ID, q)
			assert.InEpsilon(t, want[i].Score, got[i].Score, 1e-6, q) // float32 weights, as the catalog keeps
		}
	}
}

func bruteForce(docs []Doc, words func(string) []string, q string) []Hit {
	df := map[string]float64{}
	var lens []float64
	total := 0.0
	tfs := make([]map[string]float64, len(docs))
	for i, d := range docs {
		tfs[i] = map[string]float64{}
		ws := words(d.Text)
		for _, w := range ws {
			tfs[i][w]++
		}
		for w := range tfs[i] {
			df[w]++
		}
		lens = append(lens, float64(len(ws)))
		total += float64(len(ws))
	}
	n, avg := float64(len(docs)), total/float64(len(docs))
	var hits []Hit
	for i, tf := range tfs {
		s := 0.0
		for _, w := range words(q) {
			if f := tf[w]; f > 0 {
				idf := math.Log(1 + (n-df[w]+0.5)/(df[w]+0.5))
				s += idf * f * (k1 + 1) / (f + k1*(1-b+b*lens[i]/avg))
			}
		}
		if s > 0 {
			hits = append(hits, Hit{ID: docs[i].ID, Score: s})
		}
	}
	sort.SliceStable(hits, func(x, y int) bool { return hits[x].Score > hits[y].Score })
	return hits[:min(10, len(hits))]
}
