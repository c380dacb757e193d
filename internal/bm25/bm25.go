// Package bm25 is a plain Okapi BM25 ranker (k1 1.2, b 0.75) over one text field per document, with an inverted
// index. It is the baseline the catalog's ranking is measured against, for quality (catalog's dev set) and for
// speed (bench): what a reasonable first implementation would do, so beating it measures the ranking ideas.
package bm25

import (
	"math"
	"sort"
	"strings"
	"unicode"
)

// Doc is one document: its id and all its text in one field.
type Doc struct {
	ID   string
	Text string
}

// Hit is a ranked document.
type Hit struct {
	ID    string
	Score float64
}

type posting struct {
	doc  int32
	freq int32
}

// Index is immutable after New and safe for concurrent use.
type Index struct {
	ids      []string
	lens     []float32
	avg      float64
	postings map[string][]posting
	words    func(string) []string
}

const (
	k1 = 1.2
	b  = 0.75
)

// Words lowercases s, splits it on anything but letters and digits and drops the words stop reports (nil keeps
// every word).
func Words(s string, stop func(string) bool) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if stop == nil || !stop(w) {
			out = append(out, w)
		}
	}
	return out
}

// New indexes docs; words tokenizes both documents and queries. Ties rank in the order of docs.
func New(docs []Doc, words func(string) []string) *Index {
	ix := &Index{postings: map[string][]posting{}, words: words}
	total := 0.0
	for i, d := range docs {
		tf := map[string]int32{}
		ws := words(d.Text)
		for _, w := range ws {
			tf[w]++
		}
		for w, f := range tf {
			ix.postings[w] = append(ix.postings[w], posting{doc: int32(i), freq: f})
		}
		ix.ids = append(ix.ids, d.ID)
		ix.lens = append(ix.lens, float32(len(ws)))
		total += float64(len(ws))
	}
	if len(docs) > 0 {
		ix.avg = total / float64(len(docs))
	}
	return ix
}

// Search returns the k best documents for query; documents that match no query word are not returned.
func (ix *Index) Search(query string, k int) []Hit {
	n := float64(len(ix.ids))
	scores := map[int32]float64{}
	// A word repeated in the query counts each time, like a query-term frequency of plain BM25.
	for _, w := range ix.words(query) {
		ps := ix.postings[w]
		if len(ps) == 0 {
			continue
		}
		df := float64(len(ps))
		idf := math.Log(1 + (n-df+0.5)/(df+0.5))
		for _, p := range ps {
			f := float64(p.freq)
			scores[p.doc] += idf * f * (k1 + 1) / (f + k1*(1-b+b*float64(ix.lens[p.doc])/ix.avg))
		}
	}
	hits := make([]int32, 0, len(scores))
	for d := range scores {
		hits = append(hits, d)
	}
	sort.Slice(hits, func(x, y int) bool {
		if sx, sy := scores[hits[x]], scores[hits[y]]; sx != sy {
			return sx > sy
		}
		return hits[x] < hits[y]
	})
	out := make([]Hit, 0, min(k, len(hits)))
	for _, d := range hits[:min(k, len(hits))] {
		out = append(out, Hit{ID: ix.ids[d], Score: scores[d]})
	}
	return out
}
