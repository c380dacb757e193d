package main

import (
	"fmt"
	"io"
	"math"
	"sort"

	"github.com/toolsearch/toolsearch/internal/ltr"
)

// featureIndex is the index of the named feature.
func featureIndex(name string) int {
	for i, n := range ltr.FeatureNames {
		if n == name {
			return i
		}
	}
	panic(fmt.Sprintf("learn: no feature %q", name))
}

// scan prints what a model could draw on, on each set's long requests (-scan): how often the first stage's
// candidates hold a gold tool, the first stage's hit@1 and that of the same candidates ordered by the plain BM25
// feature alone, both by the request's number of content words and by how much of it the best candidate has in
// its parameters; then the hit@1 of the candidates ordered by each
// feature alone (ties keep the first stage's order). Where one set wants an order no other set wants, a model
// trained without it cannot learn it.
func scan(w io.Writer, data []*setData) {
	first, words, bm := featureIndex("first stage (of best)"), featureIndex("first stage × request length"), featureIndex("plain BM25 (of best)")
	bounds := []int{5, 10, 15, 20, 30}
	label := func(b int) string {
		if b == len(bounds)-1 {
			return fmt.Sprintf("%d+", bounds[b])
		}
		return fmt.Sprintf("%d-%d", bounds[b], bounds[b+1]-1)
	}
	// top1 reports whether the candidates ordered by feature f (-1: the first stage's order) put a gold tool first.
	top1 := func(d *setData, qi, f int) bool {
		cands := d.cands[qi]
		if len(cands) == 0 {
			return false
		}
		best := 0
		if f >= 0 {
			idx := make([]int, len(cands))
			for i := range idx {
				idx[i] = i
			}
			sort.SliceStable(idx, func(a, b int) bool {
				ca, cb := cands[idx[a]], cands[idx[b]]
				if ca.Exact != cb.Exact {
					return ca.Exact
				}
				return ca.X[f] > cb.X[f]
			})
			best = idx[0]
		}
		return d.isGold(qi, cands[best].Doc)
	}
	fmt.Fprintf(w, "\nlong requests: gold among the candidates, hit@1 of the first stage / of the candidates by plain BM25, by content words\n")
	fmt.Fprintf(w, "%-18s %6s %7s %13s", "set", "long", "recall", "all")
	for b := range bounds {
		fmt.Fprintf(w, " %19s", label(b))
	}
	fmt.Fprintln(w)
	for _, d := range data {
		type cell struct{ n, f, b int }
		var all cell
		cells := make([]cell, len(bounds))
		recall := 0
		for qi := range d.Queries {
			if !d.long[qi] {
				continue
			}
			n := 0
			for _, c := range d.cands[qi] {
				if c.X[first] == 1 {
					n = int(math.Round(math.Expm1(float64(c.X[words]))))
				}
				if d.isGold(qi, c.Doc) {
					recall++
					break
				}
			}
			b := sort.SearchInts(bounds, n+1) - 1
			b = max(b, 0)
			for _, c := range []*cell{&all, &cells[b]} {
				c.n++
				if top1(d, qi, -1) {
					c.f++
				}
				if top1(d, qi, bm) {
					c.b++
				}
			}
		}
		if all.n == 0 {
			continue
		}
		share := func(k, n int) float64 { return float64(k) / float64(max(n, 1)) }
		fmt.Fprintf(w, "%-18s %6d %7.3f  %.3f/%.3f", d.set.Name, all.n, share(recall, all.n), share(all.f, all.n), share(all.b, all.n))
		for _, c := range cells {
			fmt.Fprintf(w, " %5d %.3f/%.3f", c.n, share(c.f, c.n), share(c.b, c.n))
		}
		fmt.Fprintln(w)
	}
	params := featureIndex("coverage: parameters")
	fmt.Fprintf(w, "\nlong requests: hit@1 of the first stage / of the candidates by plain BM25, by the share of the request the best candidate has in its parameters\n%-18s", "set")
	for b := range 5 {
		fmt.Fprintf(w, " %19s", fmt.Sprintf("%d-%d%%", 20*b, 20*b+20))
	}
	fmt.Fprintln(w)
	for _, d := range data {
		var cells [5]struct{ n, f, b int }
		for qi := range d.Queries {
			if !d.long[qi] || len(d.cands[qi]) == 0 {
				continue
			}
			var best float32
			for _, c := range d.cands[qi] {
				best = max(best, c.X[params])
			}
			c := &cells[min(int(best*5), 4)]
			c.n++
			if top1(d, qi, -1) {
				c.f++
			}
			if top1(d, qi, bm) {
				c.b++
			}
		}
		fmt.Fprintf(w, "%-18s", d.set.Name)
		for _, c := range cells {
			fmt.Fprintf(w, " %5d %.3f/%.3f", c.n, float64(c.f)/float64(max(c.n, 1)), float64(c.b)/float64(max(c.n, 1)))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "\nlong requests: hit@1 of the candidates ordered by one feature alone\n%-44s", "feature")
	for _, d := range data {
		fmt.Fprintf(w, " %9.9s", d.set.Name)
	}
	fmt.Fprintln(w)
	for f, name := range ltr.FeatureNames {
		fmt.Fprintf(w, "%-44.44s", name)
		for _, d := range data {
			n, hit := 0, 0
			for qi := range d.Queries {
				if d.long[qi] {
					n++
					if top1(d, qi, f) {
						hit++
					}
				}
			}
			if n == 0 {
				fmt.Fprintf(w, " %9s", "-")
				continue
			}
			fmt.Fprintf(w, " %9.3f", float64(hit)/float64(n))
		}
		fmt.Fprintln(w)
	}
}

// isGold reports whether doc meets some need of request qi.
func (d *setData) isGold(qi, doc int) bool {
	for _, nd := range d.Queries[qi].Needs {
		for _, t := range nd.Tools {
			if t == doc {
				return true
			}
		}
	}
	return false
}
