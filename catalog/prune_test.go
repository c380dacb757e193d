package catalog

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// pruneQueries are the queries the pruning tests rank: the benchmark's, and requests made of the words of random
// tools' names, descriptions and parameters, 2 to 9 words each, some with a word of another tool.
func pruneQueries(tools []Tool, n int) []string {
	r := rand.New(rand.NewPCG(7, uint64(len(tools))))
	qs := synthQueries(tools)
	for range n {
		t := &tools[r.IntN(len(tools))]
		text := TextOf(t)
		words := strings.Fields(strings.Join([]string{text.Name, text.Description, text.Parameters}, " "))
		other := strings.Fields(TextOf(&tools[r.IntN(len(tools))]).Description)
		var q []string
		for range 2 + r.IntN(8) {
			if len(other) > 0 && r.IntN(4) == 0 {
				q = append(q, other[r.IntN(len(other))])
			} else if len(words) > 0 {
				q = append(q, words[r.IntN(len(words))])
			}
		}
		qs = append(qs, strings.Join(q, " "))
	}
	return qs
}

// TestPruningRanksAsFullScoring: on a large synthetic catalog and on every development set, a pruned search
// returns exactly what scoring every matched tool returns (the same tools, order and float scores) for every
// limit, and pruning does happen on many of the queries, so the comparison is not of one path with itself (the
// sets' catalogs are small enough that a search would not prune by default; here it does).
func TestPruningRanksAsFullScoring(t *testing.T) {
	type corpus struct {
		name    string
		tools   []Tool
		queries []string
	}
	synth := synthTools(20000)
	corpora := []corpus{{"synthetic", synth, pruneQueries(synth, 400)}}
	for _, s := range loadQualitySets(t) {
		var qs []string
		for _, q := range s.Queries {
			qs = append(qs, q.Text)
		}
		corpora = append(corpora, corpus{s.Name, s.tools, append(qs, pruneQueries(s.tools, 100)...)})
	}
	for _, c := range corpora {
		t.Run(c.name, func(t *testing.T) {
			full := defaultRankConfig()
			full.noPrune = true
			cfg := defaultRankConfig()
			cfg.prunePostings = 0 // prune the small sets' queries too
			pruned, err := newCatalog(c.tools, nil, "", &counters{}, cfg)
			require.NoError(t, err)
			plain, err := newCatalog(c.tools, nil, "", &counters{}, full)
			require.NoError(t, err)
			ix := pruned.ix
			worth, done, cutInOrder := 0, 0, 0
			for _, q := range c.queries {
				for _, k := range []int{1, 3, 10, 20, 50} {
					require.Equal(t, plain.ix.search(q, k), ix.search(q, k), "%q, limit %d", q, k)
				}
				pq := ix.parseQuery(q)
				var buf [maxQueryGroups]lead
				leads := ix.leads(&pq, buf[:0])
				if !ix.worthPruning(leads, ix.postingsRead(&pq)) {
					// Scored in group order: the groups after the cut are read only for the tools found.
					var full [maxQueryGroups]float64
					for _, l := range leads {
						full[l.group] = l.full
					}
					s := ix.getScratch()
					cv := ix.newCoverage(s, pq.groups)
					ix.scoreInOrder(s, &pq, 10, true, &full, &cv, 1+ix.cfg.actionBonus)
					found := len(s.touched)
					for _, d := range s.touched {
						s.cells[d] = cell{}
					}
					s.touched = s.touched[:0]
					ix.accumulate(s, &pq, 0, len(pq.groups), true)
					if found < len(s.touched) {
						cutInOrder++
					}
					for _, d := range s.touched {
						s.cells[d] = cell{}
					}
					s.touched = s.touched[:0]
					ix.scratch.Put(s)
					continue
				}
				worth++
				s := ix.getScratch()
				cv := ix.newCoverage(s, pq.groups)
				if ix.prune(s, &pq, 10, leads, &cv, 1+ix.cfg.actionBonus) {
					done++
				}
				for _, d := range s.touched {
					s.cells[d] = cell{}
				}
				s.touched = s.touched[:0]
				ix.scratch.Put(s)
			}
			t.Logf("%d queries, %d worth pruning, %d pruned, %d cut in group order", len(c.queries), worth, done, cutInOrder)
			if c.name == "synthetic" {
				require.Greater(t, done, len(c.queries)/4, "pruning must be exercised")
				require.Greater(t, cutInOrder, 10, "the cut in group order must be exercised")
			}
		})
	}
}

// randomList is a list over tools 0 to n-1 holding each with a chance drawn per tool from 1 to 1 in sparsity,
// every column filled with values telling the tool and the column apart.
func randomList(r *rand.Rand, n uint32, sparsity int) plist {
	var l plist
	for d := range n {
		if r.IntN(1+r.IntN(sparsity)) == 0 {
			l.doc = append(l.doc, d)
			l.w, l.long = append(l.w, float32(d)), append(l.long, float32(d)+1)
			l.name, l.text = append(l.name, float32(d)+2), append(l.text, float32(d)+3)
		}
	}
	return l
}

// TestRestrict: galloping through a list finds exactly the postings of the tools asked for.
func TestRestrict(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		l := randomList(r, 3000, 20)
		var docs []uint32
		for d := uint32(0); d < 3100; d++ {
			if r.IntN(1+r.IntN(200)) == 0 {
				docs = append(docs, d)
			}
		}
		var want columns
		for i, d := range l.doc {
			if slices.Contains(docs, d) {
				want.doc, want.w, want.long = append(want.doc, d), append(want.w, l.w[i]), append(want.long, l.long[i])
				want.name, want.text = append(want.name, l.name[i]), append(want.text, l.text[i])
			}
		}
		var got columns
		restrict(&got, &l, docs)
		require.Equal(t, want, got)
	}
}

// TestPruningHammer: goroutines searching one catalog at once, on queries that prune, rescore or cut in group
// order, share per-query buffers from a pool; each must get what a lone full scoring gives. Run with -race.
func TestPruningHammer(t *testing.T) {
	tools := synthTools(20000)
	pruned, err := newCatalog(tools, nil, "", &counters{}, defaultRankConfig())
	require.NoError(t, err)
	full := defaultRankConfig()
	full.noPrune = true
	plain, err := newCatalog(tools, nil, "", &counters{}, full)
	require.NoError(t, err)
	qs := pruneQueries(tools, 60)
	want := make([][]scored, len(qs))
	for i, q := range qs {
		want[i] = plain.ix.search(q, 10)
	}
	n := 30
	if testing.Short() {
		n = 5
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range n * len(qs) / 8 {
				qi := (g*7 + i) % len(qs)
				if got := pruned.ix.search(qs[qi], 10); !reflect.DeepEqual(want[qi], got) {
					errs <- qs[qi]
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for q := range errs {
		t.Errorf("%q ranked differently under load", q)
	}
}

// TestPruningWithPairsRanksAsFullScoring: with adjacent-word pairs read by every query, a pruned search still
// returns exactly what full scoring does; pair groups come after the words' and index the coverage table by
// the words' bits only, which this checks on queries longer than maxTableGroups as well.
func TestPruningWithPairsRanksAsFullScoring(t *testing.T) {
	synth := synthTools(20000)
	type corpus struct {
		name    string
		tools   []Tool
		queries []string
	}
	corpora := []corpus{{"synthetic", synth, pruneQueries(synth, 300)}}
	for _, s := range loadQualitySets(t) {
		var qs []string
		for _, q := range s.Queries {
			qs = append(qs, q.Text)
		}
		corpora = append(corpora, corpus{s.Name, s.tools, qs})
	}
	for _, c := range corpora {
		t.Run(c.name, func(t *testing.T) {
			cfg := pairsConfig()
			cfg.shortPairs = true
			cfg.prunePostings = 0
			full := cfg
			full.noPrune = true
			pruned, err := newCatalog(c.tools, nil, "", &counters{}, cfg)
			require.NoError(t, err)
			plain, err := newCatalog(c.tools, nil, "", &counters{}, full)
			require.NoError(t, err)
			withPairs := 0
			for _, q := range c.queries {
				for _, k := range []int{1, 10, 50} {
					require.Equal(t, plain.ix.search(q, k), pruned.ix.search(q, k), "%q, limit %d", q, k)
				}
				for _, g := range pruned.ix.parseQuery(q).groups {
					if g.pair {
						withPairs++
						break
					}
				}
			}
			require.Greater(t, withPairs, len(c.queries)/10, "queries must read pairs")
		})
	}
}

// TestBlockedScoringRanksAsFullScoring: a catalog scored a block of tools at a time, with each block's pruning
// bounded by the blocks before, returns exactly what scoring every matched tool at once returns (tools, order
// and float scores), for every limit, with and without pruning, on queries that name several tools exactly too;
// and the blocks do cut reading short, so the bound of the blocks before is exercised.
func TestBlockedScoringRanksAsFullScoring(t *testing.T) {
	tools := synthTools(20000)
	full := defaultRankConfig()
	full.noPrune = true
	full.blockDocs = 0
	plain, err := newCatalog(tools, nil, "", &counters{}, full)
	require.NoError(t, err)
	qs := pruneQueries(tools, 300)
	for i := 0; i < 20; i++ { // two tools named exactly, and words that match many others
		a, b := &tools[i*997%len(tools)], &tools[(i*331+17)%len(tools)]
		qs = append(qs, a.Name+" "+b.Name+" create invoice for the customer in the workspace")
	}
	for _, c := range []struct {
		name    string
		noPrune bool
	}{{"pruned", false}, {"full", true}} {
		t.Run(c.name, func(t *testing.T) {
			cfg := defaultRankConfig()
			cfg.blockDocs, cfg.blockAbove = 1500, 0
			cfg.noPrune = c.noPrune
			blocked, err := newCatalog(tools, nil, "", &counters{}, cfg)
			require.NoError(t, err)
			for _, q := range qs {
				for _, k := range []int{1, 3, 10, 50} {
					require.Equal(t, plain.ix.search(q, k), blocked.ix.search(q, k), "%q, limit %d", q, k)
				}
			}
		})
	}
	// The floor of the blocks before makes a block's pass stop reading lists for the tools it has not found.
	cfg := defaultRankConfig()
	cfg.blockDocs, cfg.blockAbove = 1500, 0
	blocked, err := newCatalog(tools, nil, "", &counters{}, cfg)
	require.NoError(t, err)
	ix := blocked.ix
	floored := 0
	for _, q := range qs {
		pq := ix.parseQuery(q)
		first := ix.firstStage(&pq, 10)
		if len(first) < 10 || first[len(first)-1].exact {
			continue
		}
		s := ix.getScratch()
		cv := ix.newCoverage(s, pq.groups)
		// The last block alone, bounded by the best of all: it finds fewer tools than without the bound.
		s.lo, s.hi = uint32(ix.n-cfg.blockDocs), uint32(ix.n)
		var full [maxQueryGroups]float64
		var buf [maxQueryGroups]lead
		for _, l := range ix.leads(&pq, buf[:0]) {
			full[l.group] = l.full
		}
		count := func(floor float32) int {
			s.floor = floor
			ix.scoreInOrder(s, &pq, 10, true, &full, &cv, 1+ix.cfg.actionBonus)
			found := len(s.touched)
			for _, d := range s.touched {
				require.True(t, s.inBlock(d))
				s.cells[d] = cell{}
			}
			s.touched = s.touched[:0]
			return found
		}
		if count(first[len(first)-1].score) < count(0) {
			floored++
		}
		s.lo, s.hi, s.floor = 0, 0, 0
		ix.scratch.Put(s)
	}
	require.Greater(t, floored, len(qs)/10, "the bound of the blocks before must cut passes short")
}
