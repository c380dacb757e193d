package catalog

import (
	"cmp"
	"flag"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/internal/devset"
)

var tieCorpora = flag.String("ties-corpora", "", "TestTiesReport: also the directory holding toollens_train/ (a path from catalog/, where go test runs: ../../shared/corpora)")

// TestTiesReport measures what the tie-break decides on every development set (and with -ties-corpora the
// ToolLens training split): how many requests have a tie at the first place, in how many of those the tie holds
// a tool that meets a need and one that does not, and hit@1 and hit@5 with ties in id order, best and worst
// possible order, and the tie-break's, from each request's first 300 tools. It checks that the tie-break only
// reorders tools of equal score: at every place, the same score as id order.
//
//	go test ./catalog -run TestTiesReport -v -ties-corpora ../../shared/corpora   # relative to catalog/, where go test runs
func TestTiesReport(t *testing.T) {
	if testing.Short() {
		t.Skip("reads every set at depth 300")
	}
	sets := loadQualitySets(t)
	if *tieCorpora != "" {
		s, err := devset.LoadCorpus("toollens-train", "", filepath.Join(*tieCorpora, "toollens_train"), true)
		require.NoError(t, err)
		tools, err := ParseFile(s.Catalog)
		require.NoError(t, err)
		ids := make([]string, len(tools))
		for i := range tools {
			ids[i] = tools[i].ID()
		}
		require.NoError(t, s.Resolve(ids))
		sets = append(sets, qualitySet{s, tools})
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-18s %6s %6s %6s | %-27s | %-27s | %s\n", "", "tied@1", "decide", "moved",
		"hit@1 id best worst", "hit@5 id best worst", "tie-break hit@1 hit@5")
	for _, s := range sets {
		c, err := newCatalog(s.tools, &Options{MaxSearchLimit: 10}, "", &counters{}, defaultRankConfig())
		require.NoError(t, err)
		pos := make(map[uint32]int, len(s.tools))
		byID := make(map[string]int, len(s.tools))
		for i := range s.tools {
			byID[s.tools[i].ID()] = i
		}
		for d, e := range c.entries {
			pos[uint32(d)] = byID[e.id]
		}
		// rankings: per request, the tie-break's first 300 and the same in id order.
		broken := make([][]scored, len(s.Queries))
		idOrder := make([][]scored, len(s.Queries))
		tied, decide, moved := 0, 0, 0
		for qi, q := range s.Queries {
			pq := c.ix.parseQuery(q.Text)
			r := c.ix.firstStage(&pq, 300)
			broken[qi] = r
			idOrder[qi] = slices.Clone(r)
			runs(r, func(i, j int) {
				slices.SortFunc(idOrder[qi][i:j], func(a, b scored) int { return cmp.Compare(a.doc, b.doc) })
			})
			for i := range r {
				require.Equal(t, idOrder[qi][i].score, r[i].score, "%s %q: the tie-break moved a tool past another score", s.Name, q.Text)
			}
			if !slices.Equal(r[:min(10, len(r))], idOrder[qi][:min(10, len(r))]) {
				moved++
			}
			meets := meetsNeed(q)
			runs(r, func(i, j int) {
				if i > 0 {
					return
				}
				tied++
				if slices.ContainsFunc(r[i:j], func(x scored) bool { return meets[pos[x.doc]] }) &&
					slices.ContainsFunc(r[i:j], func(x scored) bool { return !meets[pos[x.doc]] }) {
					decide++
				}
			})
		}
		score := func(order func(qi int, r []scored) []scored, from [][]scored) devset.Metrics {
			qi := -1
			m, _ := devset.Score(s.Queries, func(string) []int {
				qi++
				r := order(qi, slices.Clone(from[qi]))
				out := make([]int, 0, 10)
				for _, x := range r[:min(10, len(r))] {
					out = append(out, pos[x.doc])
				}
				return out
			})
			return m
		}
		keep := func(_ int, r []scored) []scored { return r }
		gold := func(first bool) func(int, []scored) []scored {
			return func(qi int, r []scored) []scored {
				meets := meetsNeed(s.Queries[qi])
				runs(r, func(i, j int) {
					slices.SortStableFunc(r[i:j], func(a, b scored) int {
						ma, mb := meets[pos[a.doc]], meets[pos[b.doc]]
						switch {
						case ma == mb:
							return 0
						case ma == first:
							return -1
						}
						return 1
					})
				})
				return r
			}
		}
		id, tb := score(keep, idOrder), score(keep, broken)
		best, worst := score(gold(true), idOrder), score(gold(false), idOrder)
		fmt.Fprintf(&b, "%-18s %6d %6d %6d | %.4f %.4f %.4f | %.4f %.4f %.4f | %.4f %.4f\n", s.Name, tied, decide, moved,
			id.Hit1, best.Hit1, worst.Hit1, id.Hit5, best.Hit5, worst.Hit5, tb.Hit1, tb.Hit5)
	}
	t.Log("\n" + b.String())
}

// runs calls fn with each run [i, j) of two or more tools of equal rank in r.
func runs(r []scored, fn func(i, j int)) {
	for i := 0; i < len(r); {
		j := i + 1
		for j < len(r) && sameRank(r[i], r[j]) {
			j++
		}
		if j-i > 1 {
			fn(i, j)
		}
		i = j
	}
}

// meetsNeed gives the catalog positions of the tools that meet some need of q.
func meetsNeed(q devset.Query) map[int]bool {
	m := map[int]bool{}
	for _, n := range q.Needs {
		for _, p := range n.Tools {
			m[p] = true
		}
	}
	return m
}
