package catalog

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/sahilm/fuzzy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCoverageSlotsSumAsMatchedWeight: a request of more than maxTableGroups words, at most that many of them
// with a coverage weight, looks its coverage factor up in a table over those words (coverage.slots), and the
// table gives every set of groups the float matchedWeight sums for it, whatever bits of words without a weight
// (no tool has them, hints, pairs) the set has. A request with more weighted words than the table holds sums
// per tool.
func TestCoverageSlotsSumAsMatchedWeight(t *testing.T) {
	tools := synthTools(3000)
	c, err := newCatalog(tools, nil, "", &counters{}, defaultRankConfig())
	require.NoError(t, err)
	ix := c.ix
	r := rand.New(rand.NewPCG(3, 5))
	check := func(q string, wantTable bool) int {
		pq := ix.parseQuery(q)
		s := ix.getScratch()
		defer ix.scratch.Put(s)
		cv := ix.newCoverage(s, pq.groups)
		var weighted, other []int
		for gi := range pq.groups {
			if cv.weights[gi] != 0 {
				weighted = append(weighted, gi)
			} else {
				other = append(other, gi)
			}
		}
		words := 0
		for _, g := range pq.groups {
			if !g.pair {
				words++
			}
		}
		require.Greater(t, words, maxTableGroups, q)
		require.Equal(t, wantTable, cv.factors != nil, "%q: %d weighted groups", q, len(weighted))
		if !wantTable {
			return len(weighted)
		}
		require.NotNil(t, cv.slots, q)
		require.NotEmpty(t, other, q)
		for sub := range 1 << len(weighted) {
			var mask uint32
			for i, gi := range weighted {
				if sub&(1<<i) != 0 {
					mask |= 1 << gi
				}
			}
			for range 4 {
				m := mask
				for _, gi := range other {
					if r.IntN(2) == 0 {
						m |= 1 << gi
					}
				}
				want := coverageFactor(matchedWeight(m, &cv.weights), cv.ng, cv.strength)
				require.Equal(t, want, cv.factor(m), "%q, mask %b", q, m)
			}
		}
		return len(weighted)
	}
	// Long requests: many words no tool has, a few that match.
	for _, q := range []string{
		"our finance team asked me to create an invoice for the customer who paid late last month and email it today",
		"please send a short message to the team channel saying the release is delayed until friday afternoon",
		"my manager asked me to upload the quarterly report file to the shared bucket before the board meeting tomorrow morning",
	} {
		check(q, true)
	}
	// More matching words than the table holds: every tool's factor is summed.
	var words []string
	seen := map[string]bool{}
	for i := 0; len(words) < maxTableGroups+3 && i < len(tools); i++ {
		for _, w := range strings.Fields(tools[i*7%len(tools)].Description) {
			if a := analyze(w); len(w) > 3 && a != "" && !seen[a] && !isStopWord(w) {
				if _, ok := ix.term(a); ok && len(words) < maxTableGroups+3 {
					seen[a] = true
					words = append(words, w)
				}
			}
		}
	}
	n := check(strings.Join(words, " "), false)
	assert.Greater(t, n, maxTableGroups)
}

// TestFoundMirrorsCells: once a pass reads lists for the tools found so far only, and has marked them in
// scratch.found (when the lists left are long enough to pay for it), found has exactly the tools whose cells
// are not empty, the test such a read makes instead of reading the cell, whatever bits the passes before left
// (a pruned pass that gave up leaves its own: here every bit of the block is left set). Passes that do not mark
// test the cells; both kinds occur.
func TestFoundMirrorsCells(t *testing.T) {
	tools := synthTools(20000)
	cfg := defaultRankConfig()
	cfg.blockDocs, cfg.blockAbove = 1500, 0
	c, err := newCatalog(tools, nil, "", &counters{}, cfg)
	require.NoError(t, err)
	ix := c.ix
	marked, unmarked := 0, 0
	for _, q := range pruneQueries(tools, 120) {
		pq := ix.parseQuery(q)
		if len(pq.groups) < 2 {
			continue
		}
		var buf [maxQueryGroups]lead
		var full [maxQueryGroups]float64
		for _, l := range ix.leads(&pq, buf[:0]) {
			full[l.group] = l.full
		}
		s := ix.getScratch()
		cv := ix.newCoverage(s, pq.groups)
		s.lo, s.hi = uint32(ix.n-cfg.blockDocs), uint32(ix.n)
		for d := s.lo; d < s.hi; d++ {
			s.found[d/64] |= 1 << (d % 64)
		}
		s.marked = true // as a pass before left it
		s.floor = 1e9   // no tool can reach it: the lists are read for the tools found only as soon as allowed
		ix.scoreInOrder(s, &pq, 10, true, &full, &cv, 1+ix.cfg.actionBonus)
		if s.marked {
			marked++
			for d := s.lo; d < s.hi; d++ {
				if bit := s.found[d/64]&(1<<(d%64)) != 0; bit != (s.cells[d].mask != 0) {
					require.Failf(t, "found and cells disagree", "%q: tool %d", q, d)
				}
			}
		} else {
			unmarked++
		}
		for d := s.lo; d < s.hi; d++ {
			require.Equal(t, s.cells[d].mask != 0, s.isFound(d), "%q: tool %d", q, d)
		}
		for _, d := range s.touched {
			s.cells[d] = cell{}
		}
		s.touched = s.touched[:0]
		s.lo, s.hi, s.floor = 0, 0, 0
		ix.scratch.Put(s)
	}
	require.Greater(t, marked, 10, "lists must be read for the tools found only, by their bits")
	require.Greater(t, unmarked, 10, "and by their cells")
}

// randomWord is n letters drawn from alphabet: a small alphabet makes near misses common.
func randomWord(r *rand.Rand, alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

// TestSubsequenceFiltersAsFuzzy: every word fuzzy.Find matches a word in has the word's letters in order, so
// typoFixes gives fuzzy.Find only those (isSubsequence) and finds the same matches.
func TestSubsequenceFiltersAsFuzzy(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 13))
	matched := 0
	for range 20000 {
		w := randomWord(r, "abc", 1+r.IntN(7))
		var cands []string
		for range 8 {
			cands = append(cands, randomWord(r, "abc", 1+r.IntN(10)))
		}
		var kept []string
		for _, v := range cands {
			if isSubsequence(w, v) {
				kept = append(kept, v)
			}
		}
		all, some := fuzzy.Find(w, cands), fuzzyMatches(w, kept)
		require.Len(t, some, len(all), "%q in %q", w, cands)
		for i := range all {
			require.Equal(t, all[i].Str, some[i].Str)
			require.True(t, isSubsequence(w, all[i].Str))
		}
		matched += len(all)
	}
	require.Greater(t, matched, 10000)
	// And on a catalog's words, a word with a dropped letter is still fixed by fuzzy.
	c, err := newCatalog(synthTools(2000), nil, "", &counters{}, defaultRankConfig())
	require.NoError(t, err)
	stem, ok := c.ix.term("schedul")
	require.True(t, ok)
	assert.Equal(t, []uint32{stem}, c.ix.typoFixes("shedule"))
}

// TestEditDistanceLongWords: the distance is the same whether its rows fit the stack buffer or not.
func TestEditDistanceLongWords(t *testing.T) {
	ref := func(a, b string) int { // the full table, no limit
		d := make([][]int, len(a)+1)
		for i := range d {
			d[i] = make([]int, len(b)+1)
			d[i][0] = i
		}
		for j := range d[0] {
			d[0][j] = j
		}
		for i := 1; i <= len(a); i++ {
			for j := 1; j <= len(b); j++ {
				cost := 1
				if a[i-1] == b[j-1] {
					cost = 0
				}
				d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
				if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
					d[i][j] = min(d[i][j], d[i-2][j-2]+1)
				}
			}
		}
		return d[len(a)][len(b)]
	}
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{3, 10, 46, 47, 48, 60, 100} {
		for range 200 {
			a := make([]byte, n)
			for i := range a {
				a[i] = "ab"[r.IntN(2)]
			}
			b := []byte(string(a))
			for range r.IntN(4) {
				i := r.IntN(len(b))
				switch r.IntN(3) {
				case 0:
					b[i] = 'c'
				case 1:
					b = append(b[:i], b[i+1:]...)
				default:
					b = append(b[:i], append([]byte{'d'}, b[i:]...)...)
				}
				if len(b) == 0 {
					b = []byte("e")
				}
			}
			want := ref(string(a), string(b))
			for _, limit := range []int{1, 2, 3} {
				got := editDistance(string(a), string(b), limit)
				if want <= limit {
					require.Equal(t, want, got, "%q %q", a, b)
				} else {
					require.Equal(t, limit+1, got, "%q %q", a, b)
				}
			}
		}
	}
}

// TestRestrictMergeAsGallop: both ways of restricting a list to some tools give the same postings, for tools
// from one in a thousand of the list to more than it has, with and without the name and text columns (a pair's
// list has none); and restrict takes each way on some of them.
func TestRestrictMergeAsGallop(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 8))
	merged, galloped := 0, 0
	for range 400 {
		l := randomList(r, 5000, 8)
		if r.IntN(4) == 0 {
			l.name, l.text = nil, nil
		}
		var docs []uint32
		every := 1 << r.IntN(13)
		for d := uint32(0); d < 5100; d++ {
			if r.IntN(every) == 0 {
				docs = append(docs, d)
			}
		}
		var a, b, c columns
		restrictMerge(&a, &l, docs)
		restrictGallop(&b, &l, docs)
		require.Equal(t, b, a)
		restrict(&c, &l, docs)
		require.Equal(t, b, c)
		if len(l.doc) <= mergeShare*len(docs) {
			merged++
		} else {
			galloped++
		}
	}
	require.Greater(t, merged, 50)
	require.Greater(t, galloped, 50)
}

// TestLetterGapBoundsEditDistance: typo fixes skip editDistance for a candidate whose letterGap is over 2k; that
// must only skip candidates editDistance finds more than k edits away, so the fixes are the same.
func TestLetterGapBoundsEditDistance(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 19))
	skipped, kept := 0, 0
	for range 50000 {
		w := randomWord(r, "abcd", 1+r.IntN(9))
		var hist [256]int16
		for i := 0; i < len(w); i++ {
			hist[w[i]]++
		}
		before := hist
		v := randomWord(r, "abcde", 1+r.IntN(11))
		if r.IntN(3) == 0 { // a near miss: one or two edits of w
			b := []byte(w)
			for range 1 + r.IntN(2) {
				i := r.IntN(len(b))
				switch r.IntN(3) {
				case 0:
					b[i] = "abcde"[r.IntN(5)]
				case 1:
					b = append(b[:i:i], b[i+1:]...)
				default:
					if i+1 < len(b) {
						b[i], b[i+1] = b[i+1], b[i]
					}
				}
				if len(b) == 0 {
					b = []byte{'a'}
				}
			}
			v = string(b)
		}
		gap := letterGap(&hist, len(w), v)
		require.Equal(t, before, hist, "letterGap leaves the counts as it found them")
		for k := 1; k <= 2; k++ {
			if gap > 2*k {
				require.Greater(t, editDistance(w, v, k), k, "%q %q gap %d", w, v, gap)
				skipped++
			} else if editDistance(w, v, k) <= k {
				kept++
			}
		}
		require.LessOrEqual(t, (gap+1)/2, editDistance(w, v, 20), "%q %q", w, v)
	}
	require.Greater(t, skipped, 10000)
	require.Greater(t, kept, 5000)
}

// TestByLengthFiltersAsScan: typo fixes take their candidates of a letter's words, sorted by length, from
// byLength; they must be the words a pass over all of them keeps for their length.
func TestByLengthFiltersAsScan(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 29))
	for range 2000 {
		words := make([]string, r.IntN(40))
		for i := range words {
			words[i] = strings.Repeat("x", r.IntN(12))
		}
		slices.SortFunc(words, func(a, b string) int { return len(a) - len(b) })
		lo := r.IntN(12) - 2
		hi := lo + r.IntN(5)
		var want []string
		for _, v := range words {
			if len(v) >= lo && len(v) <= hi {
				want = append(want, v)
			}
		}
		require.Equal(t, len(want), len(byLength(words, lo, hi)), "%d..%d of %q", lo, hi, words)
		require.Equal(t, want, append([]string(nil), byLength(words, lo, hi)...))
	}
	c, err := newCatalog(synthTools(3000), nil, "", &counters{}, defaultRankConfig())
	require.NoError(t, err)
	require.NotEmpty(t, c.ix.byFirst)
	for _, words := range c.ix.byFirst {
		require.True(t, slices.IsSortedFunc(words, func(a, b string) int { return len(a) - len(b) }), "byFirst sorted by length")
	}
}
