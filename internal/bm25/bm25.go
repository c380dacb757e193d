// Package bm25 is a plain Okapi BM25 ranker (k1 1.2, b 0.75) over one text field per document, with an inverted
// index. It is the baseline the catalog's ranking is measured against, for quality (the development sets) and
// for speed (bench): what a reasonable first implementation would do, built as efficiently as ours (per-posting
// weights computed at build time, a dense score array, a top-k heap), so beating it measures the ranking ideas.
package bm25

import (
	"container/heap"
	"math"
	"sort"
	"strings"
	"sync"
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

// posting is one (word, document) pair with the document's part of the BM25 term weight,
// f(k1+1)/(f+k1(1-b+b·len/avg)), computed once at build time.
type posting struct {
	doc int32
	w   float32
}

// Index is immutable after New and safe for concurrent use.
type Index struct {
	ids      []string
	postings map[string][]posting
	words    func(string) []string
	scratch  sync.Pool // *scratch
}

type scratch struct {
	score   []float32
	touched []int32
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
	type raw struct {
		doc  int32
		freq int32
	}
	postings := map[string][]raw{}
	lens := make([]float64, len(docs))
	total := 0.0
	for i, d := range docs {
		tf := map[string]int32{}
		ws := words(d.Text)
		for _, w := range ws {
			tf[w]++
		}
		for w, f := range tf {
			postings[w] = append(postings[w], raw{doc: int32(i), freq: f})
		}
		ix.ids = append(ix.ids, d.ID)
		lens[i] = float64(len(ws))
		total += float64(len(ws))
	}
	avg := 1.0
	if len(docs) > 0 && total > 0 {
		avg = total / float64(len(docs))
	}
	for w, ps := range postings {
		sort.Slice(ps, func(i, j int) bool { return ps[i].doc < ps[j].doc })
		out := make([]posting, len(ps))
		for i, p := range ps {
			f := float64(p.freq)
			out[i] = posting{doc: p.doc, w: float32(f * (k1 + 1) / (f + k1*(1-b+b*lens[p.doc]/avg)))}
		}
		ix.postings[w] = out
	}
	return ix
}

// Search returns the k best documents for query; documents that match no query word are not returned.
func (ix *Index) Search(query string, k int) []Hit {
	if k <= 0 {
		return nil
	}
	s, _ := ix.scratch.Get().(*scratch)
	if s == nil {
		s = &scratch{score: make([]float32, len(ix.ids))}
	}
	defer ix.scratch.Put(s)
	n := float64(len(ix.ids))
	// A word repeated in the query counts each time, like a query-term frequency of plain BM25.
	for _, w := range ix.words(query) {
		ps := ix.postings[w]
		if len(ps) == 0 {
			continue
		}
		df := float64(len(ps))
		idf := float32(math.Log(1 + (n-df+0.5)/(df+0.5)))
		for _, p := range ps {
			if s.score[p.doc] == 0 {
				s.touched = append(s.touched, p.doc)
			}
			s.score[p.doc] += idf * p.w
		}
	}
	top := make(minHeap, 0, min(k, len(s.touched)))
	for _, d := range s.touched {
		c := candidate{doc: d, score: s.score[d]}
		s.score[d] = 0
		if len(top) < k {
			heap.Push(&top, c)
		} else if c.better(top[0]) {
			top[0] = c
			heap.Fix(&top, 0)
		}
	}
	s.touched = s.touched[:0]
	out := make([]Hit, len(top))
	for i := len(top) - 1; i >= 0; i-- {
		c := heap.Pop(&top).(candidate)
		out[i] = Hit{ID: ix.ids[c.doc], Score: float64(c.score)}
	}
	return out
}

type candidate struct {
	doc   int32
	score float32
}

func (c candidate) better(o candidate) bool {
	if c.score != o.score {
		return c.score > o.score
	}
	return c.doc < o.doc
}

// minHeap keeps the worst of the best k on top.
type minHeap []candidate

func (h minHeap) Len() int           { return len(h) }
func (h minHeap) Less(i, j int) bool { return h[j].better(h[i]) }
func (h minHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *minHeap) Push(x any)        { *h = append(*h, x.(candidate)) }
func (h *minHeap) Pop() any {
	old := *h
	c := old[len(old)-1]
	*h = old[:len(old)-1]
	return c
}
