package catalog

import (
	"math"
	"math/bits"
	"slices"
)

// cell is one tool's running score during a query, eight bytes so that the cells of 100,000 tools stay in a
// core's cache: the sum of the groups that matched it so far, and which groups those were (bit i: group i), from
// which the coverage weight is summed once, in group order, at the end.
type cell struct {
	acc  float32
	mask uint32
}

type scratch struct {
	cells   []cell
	cur     []float32 // best expansion of the current group per tool, for groups read from several lists
	touched []uint32  // tools some group matched, in the order first matched
	// found has, once a pass reads its lists for the tools found so far only (see markFound), bit d set for
	// each tool d of touched: the tools whose cells are not empty, a set that no longer grows. Such a read
	// tests one bit of a few kilobytes per posting, which stay in the core's first cache, where testing the
	// cell would read a line of a block's quarter megabyte of cells for every posting of a common word's long
	// list, most of them tools it then skips.
	found    []uint64
	marked   bool     // found is in use (see markFound)
	gtouched []uint32 // tools the current group matched, for groups read from several lists
	weight   [1 << maxTableGroups]float32
	factor   [1 << maxTableGroups]float32
	slots    [4][256]uint16 // coverage.slots's array
	// boundFactor is, per set of groups a tool matched, the coverage factor bounding what it can reach
	boundFactor [1 << maxTableGroups]float32
	best        []float32  // a min-heap of the best scores seen, for the k-th best
	tied        []scored   // topK.tied's array
	cands       []uint32   // the tools a pruned query rescores
	bounds      []float32  // and their bounds
	mini        columns    // their postings
	spans       []span     // which of mini is which term's
	lists       []termList // by term
	// lo and hi are the tools a query's pass scores, [lo, hi) (hi 0: all of them): a large catalog is scored one
	// block of tools at a time (see rankConfig.blockDocs). floor is the k-th best score of the blocks before, a
	// score no tool of this block can enter the top k without beating (0: none yet).
	lo, hi uint32
	floor  float32
}

// maxTableGroups: a query of up to this many groups looks the coverage factor of a tool's groups up in a table.
const maxTableGroups = 10

func (ix *index) getScratch() *scratch {
	if s, ok := ix.scratch.Get().(*scratch); ok {
		return s
	}
	return &scratch{cells: make([]cell, ix.n), cur: make([]float32, ix.n), found: make([]uint64, (ix.n+63)/64)}
}

// markFound sets found to the tools found so far, when a pass starts to read lists for them only, and the lists
// left hold at least twice as many postings of its tools as it found (rest: their postings over all tools):
// the bits of the tools [lo, hi) it scores are then those of touched (and of the tools sharing a word with the
// first and last, cleared, which no pass of theirs reads then). Marking them costs a pass over touched, which
// only pays when many postings are tested after. Marking each tool as it is found would cost as much for every
// query, most of which never read a list so.
func (s *scratch) markFound(rest, n int) {
	if s.hi != 0 {
		rest = int(int64(rest) * int64(s.hi-s.lo) / int64(n))
	}
	if rest < 2*len(s.touched) {
		return
	}
	if s.hi == 0 {
		clear(s.found)
	} else {
		clear(s.found[s.lo/64 : (s.hi+63)/64])
	}
	for _, d := range s.touched {
		s.found[d/64] |= 1 << (d % 64)
	}
	s.marked = true
}

// isFound reports whether tool d is among the tools found: its bit once markFound has marked them, else whether
// its cell is not empty.
func (s *scratch) isFound(d uint32) bool {
	if s.marked {
		return s.found[d/64]&(1<<(d%64)) != 0
	}
	return s.cells[d].mask != 0
}

// matchedWeight sums the coverage weights of the groups in mask, in group order.
func matchedWeight(mask uint32, weights *[maxQueryGroups]float32) float32 {
	var m float32
	for gi := 0; mask != 0; gi, mask = gi+1, mask>>1 {
		if mask&1 != 0 {
			m += weights[gi]
		}
	}
	return m
}

// coverage turns the set of query groups a tool matched into its coverage factor.
type coverage struct {
	weights      [maxQueryGroups]float32
	total        float32 // of weights
	live         int     // groups with a weight
	ng, strength float32
	factors      []float32 // by slot (see slot), for a query of up to maxTableGroups groups with a weight
	// tableMask keeps the bits of a mask that factors is indexed by: the groups before the pairs, which come
	// last and count nothing towards coverage, so that leaving them out sums the same weights.
	tableMask uint32
	// slots, when not nil, gathers the bits of a mask's groups with a weight into factors's index, byte by byte
	// of the mask: a request of more than maxTableGroups words of which at most that many match some tool.
	slots *[4][256]uint16
}

// newCoverage computes a query's coverage weights, and for a short query the coverage factor of every subset of
// its groups, each weight summed in group order as matchedWeight does: a mask's lower groups, then its highest.
func (ix *index) newCoverage(s *scratch, groups []queryGroup) coverage {
	var cv coverage
	cv.weights, cv.total, cv.live = ix.queryWeights(groups)
	cv.ng = max(cv.total, 1e-6)
	cv.strength = ix.coverageStrength(cv.live)
	words := len(groups)
	for words > 0 && groups[words-1].pair {
		words--
	}
	weights := cv.weights[:words]
	if words > maxTableGroups {
		// A long request: most of its words match no tool, and a group without a weight adds nothing to the sum
		// (adding 0 leaves a float as it is), so the table is over the groups with a weight, in group order.
		var kept [maxTableGroups]float32
		n := 0
		for _, w := range cv.weights[:len(groups)] {
			if w != 0 {
				if n == maxTableGroups {
					return cv // too many: matchedWeight per tool
				}
				kept[n] = w
				n++
			}
		}
		cv.slots = &s.slots
		*cv.slots = [4][256]uint16{}
		n = 0
		for gi, w := range cv.weights[:len(groups)] {
			if w == 0 {
				continue
			}
			row := &cv.slots[gi/8]
			for v := range row {
				if v&(1<<(gi%8)) != 0 {
					row[v] |= 1 << n
				}
			}
			n++
		}
		words, weights = n, kept[:n]
	}
	cv.tableMask = 1<<words - 1
	weight, factor := s.weight[:1<<words], s.factor[:1<<words]
	weight[0], factor[0] = 0, coverageFactor(0, cv.ng, cv.strength)
	for m := 1; m < len(weight); m++ {
		hb := bits.Len(uint(m)) - 1
		weight[m] = weight[m&^(1<<hb)] + weights[hb]
		factor[m] = coverageFactor(weight[m], cv.ng, cv.strength)
	}
	cv.factors = factor
	return cv
}

// slot is the index in factors of the groups in mask.
func (cv *coverage) slot(mask uint32) uint32 {
	if t := cv.slots; t != nil {
		return uint32(t[0][mask&0xff] | t[1][mask>>8&0xff] | t[2][mask>>16&0xff] | t[3][mask>>24])
	}
	return mask & cv.tableMask
}

// factor is the coverage factor of the groups in mask. Its common case, a short query's table, is inlined into
// the loops over every tool found; the others are a call.
func (cv *coverage) factor(mask uint32) float32 {
	if cv.slots == nil && cv.factors != nil {
		return cv.factors[mask&cv.tableMask]
	}
	return cv.factorOf(mask)
}

func (cv *coverage) factorOf(mask uint32) float32 {
	if cv.factors != nil {
		return cv.factors[cv.slot(mask)]
	}
	return coverageFactor(matchedWeight(mask, &cv.weights), cv.ng, cv.strength)
}

// coverageFactor is 1 + strength × (m / ng)²: the bonus for matching m of the query's total weight ng.
func coverageFactor(m, ng, strength float32) float32 {
	cov := m / ng
	return 1 + strength*cov*cov
}

// finalScore is a tool's score from the sum of its groups (acc) and its coverage factor, with the action factor
// when the tool's action is one the request asks for. search and explain both score with it.
func finalScore(acc, factor float32, action bool, actionBonus float32) float32 {
	score := acc * factor
	if action {
		score *= actionBonus
	}
	return score
}

// search ranks the tools for q and returns at most limit of them, best first: the first stage's best
// rerankDepth (or limit, if more) re-scored by the learned model (see rerank), unless the configuration has no
// model.
func (ix *index) search(q string, limit int) []scored {
	pq, cands := ix.ranked(q, limit)
	if cands == nil {
		return ix.firstStage(&pq, limit)
	}
	out := make([]scored, min(limit, len(cands)))
	for i := range out {
		out[i] = cands[i].scored
	}
	return out
}

// ranked is search's ranking with every candidate's features: the first stage's best max(limit, rerankDepth)
// tools, re-scored. A request of a class the configuration has no model for (by default, see learnedLong and
// learnedTerse) gets no candidates, and ranks by the first stage alone.
func (ix *index) ranked(q string, limit int) (parsedQuery, []candidate) {
	pq := ix.parseQuery(q)
	w := ix.learnedFor(&pq)
	if limit <= 0 || w == nil {
		return pq, nil
	}
	first := ix.firstStage(&pq, max(limit, rerankDepth))
	return pq, ix.rerank(&pq, first, w)
}

// learnedFor is the learned model that re-scores the request's class (long or terse), or nil: the first stage's
// order.
func (ix *index) learnedFor(pq *parsedQuery) *[numFeatures]float32 {
	if pq.long {
		return ix.cfg.weights
	}
	return ix.cfg.terseWeights
}

// firstStage ranks the tools for a parsed query with BM25F and the coverage and action factors, and returns at
// most limit of them, best first.
func (ix *index) firstStage(pq *parsedQuery, limit int) []scored {
	groups, exact := pq.groups, pq.exact
	if (len(groups) == 0 && len(exact) == 0) || limit <= 0 {
		return nil
	}
	s := ix.getScratch()
	defer ix.scratch.Put(s)
	cv := ix.newCoverage(s, groups)
	actionBonus := float32(1)
	if pq.actions != 0 {
		actionBonus += ix.cfg.actionBonus
	}
	top := newTopK(limit)
	top.tied = s.tied[:0]
	defer func() { s.tied = top.tied[:0] }() // its array, for the next query
	// A large catalog is scored one block of tools at a time, each block's every group before the
	// next block's: the cells of a block stay in the core's cache while all its lists are added, where a pass of
	// one list over a million tools' cells would miss the cache on most of them. A tool's score is the same
	// floats added in the same order either way, and the best k of the blocks' best k are the best k.
	step := ix.n
	if b := ix.cfg.blockDocs; b > 0 && ix.n > max(b, ix.cfg.blockAbove) {
		step = b
	}
	for lo := 0; lo < ix.n; lo += step {
		s.lo, s.hi, s.floor = 0, 0, 0
		if step < ix.n {
			s.lo, s.hi = uint32(lo), uint32(min(lo+step, ix.n))
			if len(top.h) == top.k && !top.h[0].exact {
				s.floor = top.h[0].score
			}
		}
		ix.scoreQuery(s, pq, limit, &cv, actionBonus)
		cells := s.cells // a local: see addList
		for _, d := range s.touched {
			c := &cells[d]
			score := finalScore(c.acc, cv.factor(c.mask), pq.actions != 0 && ix.actions[d]&pq.actions != 0, actionBonus)
			*c = cell{}
			isExact := len(exact) > 0 && containsID(exact, d)
			// Most touched tools cannot enter a full top k; this is the comparison push would make first.
			if len(top.h) == top.k && !isExact && (top.h[0].exact || score < top.h[0].score) {
				continue
			}
			top.push(scored{doc: d, score: score, exact: isExact})
		}
		s.touched = s.touched[:0]
	}
	s.lo, s.hi, s.floor = 0, 0, 0
	for _, d := range exact {
		if !top.has(d) {
			top.push(scored{doc: d, exact: true, score: ix.scoreOf(s, pq, d, &cv, actionBonus)})
		}
	}
	return ix.breakTies(pq, top.sorted(), top.tied, limit)
}

// scoreOf scores one tool from its own postings: a tool the query names exactly ranks first whatever its score,
// and among several such tools by their scores, which a pass that stopped reading lists for tools it had not
// found yet (see scoreInOrder) would otherwise leave at 0.
func (ix *index) scoreOf(s *scratch, pq *parsedQuery, d uint32, cv *coverage, actionBonus float32) float32 {
	ix.rescore(s, pq, []uint32{d})
	var score float32
	for _, t := range s.touched {
		c := &s.cells[t]
		score = finalScore(c.acc, cv.factor(c.mask), pq.actions != 0 && ix.actions[t]&pq.actions != 0, actionBonus)
		*c = cell{}
	}
	s.touched = s.touched[:0]
	return score
}

// queryWeights returns the coverage weight of each of the query's groups, their total, and how many of them are
// live (match some tool and are not hints: a word no tool has cannot tell tools apart).
func (ix *index) queryWeights(groups []queryGroup) (weights [maxQueryGroups]float32, total float32, live int) {
	weights = ix.coverageWeights(groups)
	for _, w := range weights[:len(groups)] {
		total += w
		if w > 0 {
			live++
		}
	}
	return weights, total, live
}

// accumulate scores groups[from:to] of a query into s.cells, in group order, and returns the query's coverage
// weights as queryWeights does. surface false leaves out the bonuses for words written as in the tool. Explain
// scores one group, or one expansion, at a time with it: the same code search scores with.
func (ix *index) accumulate(s *scratch, pq *parsedQuery, from, to int, surface bool) (weights [maxQueryGroups]float32, total float32, live int) {
	src := postingSource{ix: ix, lo: s.lo, hi: s.hi}
	for gi := from; gi < to; gi++ {
		ix.scoreGroup(s, pq, gi, surface, false, &src)
	}
	return ix.queryWeights(pq.groups)
}

// postingSource is the postings a scoring pass reads: the index's, or (restricted) only those of the few tools
// a pruned query rescores.
type postingSource struct {
	ix         *index
	restricted bool
	lists      []termList
	lo, hi     uint32 // unrestricted: the postings of the tools [lo, hi) (hi 0: all)
}

// termList is the postings of one term.
type termList struct {
	term uint32
	list plist
}

func (ps *postingSource) list(t uint32) plist {
	if !ps.restricted {
		return ps.ix.listIn(t, ps.lo, ps.hi)
	}
	for _, tl := range ps.lists {
		if tl.term == t {
			return tl.list
		}
	}
	return plist{}
}

// scoreGroup adds one group of a query to the cells of the tools it matches; with only, to the cells of tools
// some group matched before only (a pruned query's groups that can no longer bring a tool into the top k).
//
// A tool's score for a group is its best expansion, plus the group word's surface bonuses. The common group, one
// expansion whose bonuses (if any) are folded into its postings (see index.inlineName), is added to the tools'
// sums straight from its list; any other group first finds each tool's best in s.cur. Both add the same floats in
// the same order, and what a tool gets depends only on its own postings, so scoring from a restricted source
// gives a tool the same floats as scoring from the index.
func (ix *index) scoreGroup(s *scratch, pq *parsedQuery, gi int, surface, only bool, src *postingSource) {
	g := &pq.groups[gi]
	mode := pq.mode()
	bit := uint32(1) << gi
	stem, inline := ix.stemOfGroup(g)
	nameW, textW := ix.surfaceWeights(g, surface)
	// A word written in its stem's main form finds both its bonuses in the stem's list (both or neither: the
	// main form's "=word" and "~word" are folded in together).
	nameInline := inline && g.hasSurf && ix.inlineName[stem] == g.surface
	textInline := inline && g.hasText && ix.inlineText[stem] == g.textSurf
	var inlineName, inlineText float32
	if nameInline {
		inlineName = nameW * ix.idf[g.surface]
	}
	if textInline {
		inlineText = textW * ix.idf[g.textSurf]
	}
	separate := g.hasSurf && !nameInline && nameW != 0 || g.hasText && !textInline && textW != 0
	if len(g.exps) == 1 && !separate {
		e := g.exps[0]
		if !inline {
			inlineName, inlineText = 0, 0
		}
		l := src.list(e.term)
		s.addList(&l, mode, ix.idf[e.term]*e.w, inlineName, inlineText, bit, only)
		return
	}
	// The stem's own list goes last: a best expansion is a maximum, the same in any order, and the main
	// form's bonuses stored with the stem's postings must be added after it.
	for _, e := range g.exps {
		if !inline || e.term != stem {
			ix.scoreExpansion(s, e, mode, only, src)
		}
	}
	if inline && !separate {
		// The stem's list, last, completes each of its tools' best expansion and adds it to the cell at
		// once; only the tools the other expansions found and the stem did not are left for the fold below
		// (their s.cur is left above 0; a folded tool's is reset to 0 here).
		e := expansionOf(g, stem)
		idf := ix.idf[e.term] * e.w
		l := src.list(e.term)
		ws, names, texts := l.weights(mode), l.name[:len(l.doc)], l.text[:len(l.doc)]
		cells, curs, touched := s.cells, s.cur, s.touched // locals: see addList
		for i, d := range l.doc {
			if only && !s.isFound(d) {
				continue
			}
			c := &cells[d]
			cur := &curs[d]
			v := max(*cur, idf*ws[i])
			v += inlineName * names[i]
			v += inlineText * texts[i]
			*cur = 0
			if c.mask == 0 {
				touched = append(touched, d)
			}
			c.acc += v
			c.mask |= bit
		}
		s.touched = touched
		ix.fold(s, bit)
		return
	}
	if inline {
		e := expansionOf(g, stem)
		idf := ix.idf[e.term] * e.w
		l := src.list(e.term)
		ws, names, texts := l.weights(mode), l.name[:len(l.doc)], l.text[:len(l.doc)]
		curs, gtouched := s.cur, s.gtouched // locals: see addList
		for i, d := range l.doc {
			if only && !s.isFound(d) {
				continue
			}
			cur := &curs[d]
			if *cur == 0 {
				gtouched = append(gtouched, d)
			}
			if v := idf * ws[i]; v > *cur {
				*cur = v
			}
			*cur += inlineName * names[i]
			*cur += inlineText * texts[i]
		}
		s.gtouched = gtouched
	}
	if g.hasSurf && !nameInline && nameW != 0 {
		ix.addSurface(s, g.surface, nameW, src)
	}
	if g.hasText && !textInline && textW != 0 {
		ix.addSurface(s, g.textSurf, textW, src)
	}
	ix.fold(s, bit)
}

// fold adds the current group's best expansions (s.cur) of the tools in s.gtouched to their cells.
func (ix *index) fold(s *scratch, bit uint32) {
	cells, curs, touched := s.cells, s.cur, s.touched // locals: see addList
	for _, d := range s.gtouched {
		if curs[d] == 0 {
			continue
		}
		c := &cells[d]
		if c.mask == 0 {
			touched = append(touched, d)
		}
		c.acc += curs[d]
		c.mask |= bit
		curs[d] = 0
	}
	s.touched = touched
	s.gtouched = s.gtouched[:0]
}

// scoreExpansion raises each tool's best expansion of the current group (s.cur) to what e gives it.
func (ix *index) scoreExpansion(s *scratch, e expansion, mode int, only bool, src *postingSource) {
	idf := ix.idf[e.term] * e.w
	l := src.list(e.term)
	ws := l.weights(mode)
	curs, gtouched := s.cur, s.gtouched // locals: see addList
	for i, d := range l.doc {
		if only && !s.isFound(d) {
			continue
		}
		cur := &curs[d]
		if *cur == 0 {
			gtouched = append(gtouched, d)
		}
		if v := idf * ws[i]; v > *cur {
			*cur = v
		}
	}
	s.gtouched = gtouched
}

// stemOfGroup returns the term of the group's word itself, and whether it is one of the group's expansions (it is
// whenever some tool has the word).
func (ix *index) stemOfGroup(g *queryGroup) (uint32, bool) {
	if !g.wordDone { // looked up once: a large catalog's query asks again for every block of tools it scores
		g.wordTerm, g.wordKnown = ix.term(g.word)
		g.wordDone = true
	}
	id := g.wordTerm
	if !g.wordKnown || g.pair { // a pair term has no bonuses to fold, nor name and text weights to fold them in
		return noTerm, false
	}
	for _, e := range g.exps {
		if e.term == id {
			return id, true
		}
	}
	return noTerm, false
}

func expansionOf(g *queryGroup, term uint32) expansion {
	for _, e := range g.exps {
		if e.term == term {
			return e
		}
	}
	return expansion{}
}

// surfaceWeights are the factors of the bonuses for the group's word written as in a tool's name and in its
// other text (0: none). A hint's bonus is scaled like the hint itself, or a light verb written as in a tool name
// ("make" in make_call) would count more than the words that carry the need.
func (ix *index) surfaceWeights(g *queryGroup, surface bool) (name, text float32) {
	if !surface {
		return 0, 0
	}
	name, text = ix.cfg.surface, ix.cfg.textSurface
	if g.hint {
		name, text = name*ix.cfg.lightVerb, text*ix.cfg.lightVerb
	}
	return name, text
}

// addSurface adds the bonus for a query word written as in the tools that have its surface term, to those that
// match the word at all.
func (ix *index) addSurface(s *scratch, term uint32, weight float32, src *postingSource) {
	idf := ix.idf[term] * weight
	l := src.list(term)
	ws, curs := l.weights(0), s.cur // a local: see addList
	for i, d := range l.doc {
		if cur := &curs[d]; *cur > 0 {
			*cur += idf * ws[i]
		}
	}
}

// maxPruneLimit: a search for more tools than this scores every tool it matches (Explain ranks them all).
const maxPruneLimit = 64

// maxRescore bounds how many tools a pruned query rescores from their postings; past it, scoring every group in
// full is cheaper.
const maxRescore = 1024

// pruneMargin covers the rounding of float32 sums added in another order, and of the bounds: a tool is left out
// only when its bound is below the threshold by this share.
const pruneMargin = 1e-3

// lead is how a pruned query reads one group at first: one list, its expansion with the highest bound, which
// gives each tool it has a lower bound of the group's value.
type lead struct {
	group          int
	exp            expansion
	inName, inText float32 // the surface bonus factors folded into the list, when the lead is the stem
	ub             float64 // the most the lead's list gives a tool
	slack          float64 // the most the group's other lists can add to what the lead gave
	full           float64 // the most the group gives a tool
}

// scoreQuery scores a query into s.cells and leaves in s.touched every tool that can be among the best limit,
// each cell holding the tool's sum and mask exactly as scoring every group in full, in group order, gives them;
// the cells of other tools are left empty.
//
// On a large catalog most tools a query matches match only a common word or a weak expansion ("query" for
// "search", a parameter of a quarter of the tools), and cannot reach the top k. This is MaxScore pruning (Turtle
// and Flood), term at a time: each group is read at first from its strongest list only (its lead, a lower bound
// of the group's value), the leads that take the most bound off per posting first; once no tool missing from the
// leads read so far can reach the k-th best score seen (the most the leads still to read and the other lists can
// give it, times the best coverage and action factors), the leads still to read are read only for the tools
// already found. The tools whose bound (lower bound plus the most the other lists can add) then reaches the k-th
// best lower bound are scored again exactly, every group in group order, from their own postings alone.
//
// That pays when most of what a query reads is weak: on a query whose words are all about as strong, the tools
// found before the cut are most of those it matches, and finding the cut costs more than it saves. So only a
// query whose strong leads (a bound at least half the strongest's) hold at most half the postings it reads is
// pruned so; any other is scored in group order, where the same cut needs no rescoring (scoreInOrder).
func (ix *index) scoreQuery(s *scratch, pq *parsedQuery, limit int, cv *coverage, actionBonus float32) {
	var buf [maxQueryGroups]lead
	var leads []lead
	total := 0
	if !ix.cfg.noPrune && limit <= maxPruneLimit {
		total = ix.postingsRead(pq)
	}
	if total >= ix.cfg.prunePostings {
		leads = ix.leads(pq, buf[:0])
	}
	var full [maxQueryGroups]float64
	for _, l := range leads {
		full[l.group] = l.full
	}
	if !ix.worthPruning(leads, total) || !ix.prune(s, pq, limit, leads, cv, actionBonus) {
		ix.scoreInOrder(s, pq, limit, leads != nil, &full, cv, actionBonus)
	}
}

// scoreInOrder scores every group in full, in group order, except that with cut, once no tool none of the groups
// read so far matched can reach the k-th best score seen, the groups left are read only for the tools found:
// their sums are then exact, and the tools never found could not have been among the best.
func (ix *index) scoreInOrder(s *scratch, pq *parsedQuery, limit int, cut bool, full *[maxQueryGroups]float64, cv *coverage, actionBonus float32) {
	s.marked = false
	all := postingSource{ix: ix, lo: s.lo, hi: s.hi}
	n := len(pq.groups)
	only := false
	var read float64
	var readW float32
	for gi := range pq.groups {
		ix.scoreGroup(s, pq, gi, true, only, &all)
		read += full[gi]
		readW += cv.weights[gi]
		if !cut || only || gi == n-1 || len(s.touched) < limit && s.floor == 0 {
			continue
		}
		var acc, m float64
		for g := gi + 1; g < n; g++ {
			acc += full[g]
			m += float64(cv.weights[g])
		}
		cov := m / float64(cv.ng)
		missing := acc * (1 + float64(cv.strength)*cov*cov) * float64(actionBonus) * (1 + pruneMargin)
		if read*float64(coverageFactor(readW, cv.ng, cv.strength))*(1+pruneMargin) < missing {
			continue // no tool found can score more than the groups read give; nor can the k-th best
		}
		only = s.outOfReach(missing, limit, cv)
		if only {
			rest := 0
			for g := gi + 1; g < n; g++ {
				rest += ix.groupPostings(&pq.groups[g])
			}
			s.markFound(rest, ix.n)
		}
	}
}

// prune scores a query as scoreQuery says, or reports false, with every cell empty, when the tools left to
// rescore are too many.
func (ix *index) prune(s *scratch, pq *parsedQuery, limit int, leads []lead, cv *coverage, actionBonus float32) bool {
	// Leads are read by how much bound each posting read takes off the tools not found yet: a strong word with a
	// short list first, a common word's long list last, where it is read only for the tools already found.
	slices.SortStableFunc(leads, func(a, b lead) int {
		ka, kb := a.full/float64(1+ix.listLen(a.exp.term)), b.full/float64(1+ix.listLen(b.exp.term))
		switch {
		case ka > kb:
			return -1
		case ka < kb:
			return 1
		}
		return 0
	})
	s.marked = false
	mode := pq.mode()
	cut := len(leads)
	var read float64 // the most the leads read so far give a tool
	var readW float32
	for j := range leads {
		ix.scoreLead(s, &leads[j], mode, j >= cut)
		read += leads[j].ub
		readW += cv.weights[leads[j].group]
		if j >= cut-1 || len(s.touched) < limit && s.floor == 0 {
			continue
		}
		missing := missingBound(leads[:j+1], leads[j+1:], cv, actionBonus)
		// No tool found so far can score more than all the leads read; when even that is below the bound, the
		// k-th best is too, and there is no need to look for it.
		if read*float64(coverageFactor(readW, cv.ng, cv.strength))*(1+pruneMargin) < missing {
			continue
		}
		if s.outOfReach(missing, limit, cv) {
			cut = j + 1
			rest := 0
			for _, l := range leads[j+1:] {
				rest += ix.listLen(l.exp.term)
			}
			s.markFound(rest, ix.n)
		}
	}

	// Every group's lead has now been read for every tool found; what the other lists can add is the slack.
	var slack float64
	var slackMask uint32
	for _, l := range leads {
		if l.slack > 0 {
			slack += l.slack
			slackMask |= 1 << l.group
		}
	}
	// One pass finds the k-th best lower bound and the tools whose bound reaches the k-th best lower bound seen so
	// far (which only rises), and empties the cells; the tools whose bound is below the final one are dropped
	// after. It is in float32, with a factor of the bound per set of groups for a short query: pruneMargin is far
	// above float32's rounding.
	var bf []float32
	if cv.factors != nil {
		bf = s.boundFactor[:len(cv.factors)]
		slackSlot := cv.slot(slackMask)
		for m := range bf {
			bf[m] = cv.factors[uint32(m)|slackSlot] * (1 + pruneMargin)
		}
	}
	slack32 := float32(slack)
	h := s.best[:0]
	cands := s.cands[:0]
	// A tool is dropped when its bound is below below: the floor's, and once h is full its least's.
	floorCut := s.floor * (1 - pruneMargin)
	below := floorCut
	cells, bounds := s.cells, s.bounds // locals: see addList
	for _, d := range s.touched {
		c := cells[d]
		cells[d] = cell{}
		var bound float32
		if bf != nil {
			bound = (c.acc + slack32) * bf[cv.slot(c.mask)]
		} else {
			bound = (c.acc + slack32) * cv.factor(c.mask|slackMask) * (1 + pruneMargin)
		}
		if pq.actions != 0 && ix.actions[d]&pq.actions != 0 {
			bound *= actionBonus
		}
		if bound < below {
			continue
		}
		cands = append(cands, d)
		bounds = append(bounds, bound)
		h = pushBest(h, limit, c.acc*cv.factor(c.mask))
		if len(h) == limit {
			below = max(h[0]*(1-pruneMargin), floorCut)
		}
	}
	s.bounds = bounds
	s.touched = s.touched[:0]
	s.best = h
	threshold := float32(math.Inf(-1))
	if len(h) == limit {
		threshold = h[0] * (1 - pruneMargin)
	}
	if s.floor > 0 {
		threshold = max(threshold, s.floor*(1-pruneMargin))
	}
	kept := cands[:0]
	for i, d := range cands {
		if s.bounds[i] >= threshold {
			kept = append(kept, d)
		}
	}
	cands = kept
	s.bounds = s.bounds[:0]
	if slack > 0 && missingBound(leads, nil, cv, actionBonus) >= float64(threshold) {
		return false // a tool no lead has could still be among the best: the other lists must be read in full
	}
	for _, d := range pq.exact {
		if s.inBlock(d) && !containsID(cands, d) {
			cands = append(cands, d)
		}
	}
	s.cands = cands
	if len(cands) > maxRescore {
		return false
	}
	slices.Sort(cands)
	ix.rescore(s, pq, cands)
	return true
}

// worthPruning says whether the strong leads' lists hold at most half of the total postings the query reads.
func (ix *index) worthPruning(leads []lead, total int) bool {
	if len(leads) < 2 {
		return false
	}
	var strongest float64
	for _, l := range leads {
		strongest = max(strongest, l.full)
	}
	strong := 0
	for _, l := range leads {
		if l.full >= strongest/2 {
			strong += ix.listLen(l.exp.term)
		}
	}
	return 2*strong <= total
}

// postingsRead is how many postings scoring the query in full reads.
func (ix *index) postingsRead(pq *parsedQuery) int {
	total := 0
	for gi := range pq.groups {
		total += ix.groupPostings(&pq.groups[gi])
	}
	return total
}

// groupPostings is how many postings scoring group g in full reads.
func (ix *index) groupPostings(g *queryGroup) int {
	total := 0
	for _, e := range g.exps {
		total += ix.listLen(e.term)
	}
	if g.hasSurf {
		total += ix.listLen(g.surface)
	}
	if g.hasText {
		total += ix.listLen(g.textSurf)
	}
	return total
}

// leads picks each group's lead and bounds.
func (ix *index) leads(pq *parsedQuery, out []lead) []lead {
	mode := pq.mode()
	for gi := range pq.groups {
		g := &pq.groups[gi]
		if len(g.exps) == 0 {
			continue
		}
		stem, inline := ix.stemOfGroup(g)
		nameW, textW := ix.surfaceWeights(g, true)
		nameInline := inline && g.hasSurf && ix.inlineName[stem] == g.surface
		textInline := inline && g.hasText && ix.inlineText[stem] == g.textSurf
		var nameUB, textUB float64
		if g.hasSurf && nameW != 0 {
			nameUB = float64(nameW) * float64(ix.idf[g.surface]) * float64(ix.maxW[g.surface][0])
		}
		if g.hasText && textW != 0 {
			textUB = float64(textW) * float64(ix.idf[g.textSurf]) * float64(ix.maxW[g.textSurf][0])
		}
		expUB := func(e expansion) float64 {
			return float64(ix.idf[e.term]) * float64(e.w) * float64(ix.maxW[e.term][mode])
		}
		// The stem's list carries its folded bonuses, so its bound includes them.
		folded := func(e expansion) (name, text bool) {
			return inline && e.term == stem && nameInline, inline && e.term == stem && textInline
		}
		best, bestUB := 0, -1.0
		var maxExp float64
		for i, e := range g.exps {
			b := expUB(e)
			maxExp = max(maxExp, b)
			if n, t := folded(e); n || t {
				if n {
					b += nameUB
				}
				if t {
					b += textUB
				}
			}
			if b > bestUB {
				best, bestUB = i, b
			}
		}
		l := lead{group: gi, exp: g.exps[best], ub: bestUB * (1 + pruneMargin), full: (maxExp + nameUB + textUB) * (1 + pruneMargin)}
		var others float64
		for i, e := range g.exps {
			if i != best {
				others = max(others, expUB(e))
			}
		}
		n, t := folded(l.exp)
		if n {
			l.inName = nameW * ix.idf[g.surface]
		} else {
			others += nameUB
		}
		if t {
			l.inText = textW * ix.idf[g.textSurf]
		} else {
			others += textUB
		}
		if others > 0 {
			l.slack = others * (1 + pruneMargin)
		}
		out = append(out, l)
	}
	return out
}

// scoreLead adds a group's lead list to the cells of the tools it has; with only, to those of tools found before.
// What it adds is at most the group's value for the tool: that value is the best expansion (this one or another),
// plus the bonuses, which this list carries folded in when it is the stem's.
func (ix *index) scoreLead(s *scratch, l *lead, mode int, only bool) {
	list := ix.listIn(l.exp.term, s.lo, s.hi)
	s.addList(&list, mode, ix.idf[l.exp.term]*l.exp.w, l.inName, l.inText, 1<<l.group, only)
}

// addList adds idf × weight of each posting of l, plus the folded bonuses, to its tool's cell, and marks the
// cell with bit; with only, for tools found before only. A list whose bonuses are not used is read without
// them: adding 0 × a bonus leaves the float as it is, the same as adding nothing.
func (s *scratch) addList(l *plist, mode int, idf, inName, inText float32, bit uint32, only bool) {
	ws := l.weights(mode)
	// The cells and touched are held in locals: through s, every cell written would make the compiler load
	// the slices' headers again for the next posting, as a write through a pointer may change them.
	cells := s.cells
	switch {
	case only && inName == 0 && inText == 0:
		for i, d := range l.doc {
			if s.isFound(d) {
				c := &cells[d]
				c.acc += idf * ws[i]
				c.mask |= bit
			}
		}
	case only:
		names, texts := l.name[:len(l.doc)], l.text[:len(l.doc)]
		for i, d := range l.doc {
			if s.isFound(d) {
				c := &cells[d]
				c.acc += idf*ws[i] + inName*names[i] + inText*texts[i]
				c.mask |= bit
			}
		}
	case inName == 0 && inText == 0:
		touched := s.touched
		for i, d := range l.doc {
			c := &cells[d]
			if c.mask == 0 {
				touched = append(touched, d)
			}
			c.acc += idf * ws[i]
			c.mask |= bit
		}
		s.touched = touched
	default:
		names, texts := l.name[:len(l.doc)], l.text[:len(l.doc)]
		touched := s.touched
		for i, d := range l.doc {
			c := &cells[d]
			if c.mask == 0 {
				touched = append(touched, d)
			}
			c.acc += idf*ws[i] + inName*names[i] + inText*texts[i]
			c.mask |= bit
		}
		s.touched = touched
	}
}

// missingBound is the best score of a tool no lead in done has: the slack of the groups of done, the full bound
// of the groups of rest, times the coverage factor of those groups and the action factor.
func missingBound(done, rest []lead, cv *coverage, actionBonus float32) float64 {
	var acc, m float64
	for _, l := range done {
		if l.slack > 0 {
			acc += l.slack
			m += float64(cv.weights[l.group])
		}
	}
	for _, l := range rest {
		acc += l.full
		m += float64(cv.weights[l.group])
	}
	cov := m / float64(cv.ng)
	return acc * (1 + float64(cv.strength)*cov*cov) * float64(actionBonus) * (1 + pruneMargin)
}

// pushBest adds v to h, a min-heap of at most k of the best values seen.
func pushBest(h []float32, k int, v float32) []float32 {
	if len(h) < k {
		h = append(h, v)
		for i := len(h) - 1; i > 0 && h[(i-1)/2] > h[i]; i = (i - 1) / 2 {
			h[(i-1)/2], h[i] = h[i], h[(i-1)/2]
		}
		return h
	}
	if v <= h[0] {
		return h
	}
	h[0] = v
	for i := 0; ; {
		l, r, w := 2*i+1, 2*i+2, i
		if l < len(h) && h[l] < h[w] {
			w = l
		}
		if r < len(h) && h[r] < h[w] {
			w = r
		}
		if w == i {
			break
		}
		h[i], h[w] = h[w], h[i]
		i = w
	}
	return h
}

// outOfReach reports whether missing, the most a tool not found yet can still score, is below the k-th best by
// the margin: below the floor the blocks scored before set, or, when that does not decide it, below the k-th
// best of the tools found (kthPartial, which is skipped when the floor decides).
func (s *scratch) outOfReach(missing float64, k int, cv *coverage) bool {
	return missing < float64(s.floor)*(1-pruneMargin) || missing < float64(s.kthPartial(k, cv))*(1-pruneMargin)
}

// kthPartial is the k-th best score of the tools found so far from what they matched so far (without the action
// factor): every one of those k tools will score at least that.
//
// It looks at no more than maxSampled of them, evenly spread: the k-th best of any k tools is a lower bound of
// the k-th best of all, and the bound only needs to clear the best a tool not found could score, which it does by
// far when pruning pays at all.
func (s *scratch) kthPartial(k int, cv *coverage) float32 {
	h := s.best[:0]
	step := max(1, len(s.touched)/maxSampled)
	for i := 0; i < len(s.touched); i += step {
		c := s.cells[s.touched[i]]
		h = pushBest(h, k, c.acc*cv.factor(c.mask))
	}
	s.best = h
	if len(h) < k {
		return s.floor // fewer than k looked at: no bound but the blocks before's
	}
	return max(h[0], s.floor)
}

// inBlock reports whether tool d is among those the current pass scores.
func (s *scratch) inBlock(d uint32) bool { return s.hi == 0 || d >= s.lo && d < s.hi }

// maxSampled bounds the tools kthPartial looks at.
const maxSampled = 1024

// rescore scores the tools cands (sorted) from their own postings, every group in group order, with the code
// that scores from the index.
func (ix *index) rescore(s *scratch, pq *parsedQuery, cands []uint32) {
	mini := columns{doc: s.mini.doc[:0], w: s.mini.w[:0], long: s.mini.long[:0], name: s.mini.name[:0], text: s.mini.text[:0]}
	spans := s.spans[:0]
	add := func(t uint32) {
		for _, sp := range spans {
			if sp.term == t {
				return
			}
		}
		lo := len(mini.doc)
		l := ix.listIn(t, s.lo, s.hi) // the tools of the block scored, where every one of cands is
		restrict(&mini, &l, cands)
		spans = append(spans, span{t, lo, len(mini.doc)})
	}
	for gi := range pq.groups {
		g := &pq.groups[gi]
		for _, e := range g.exps {
			add(e.term)
		}
		if g.hasSurf {
			add(g.surface)
		}
		if g.hasText {
			add(g.textSurf)
		}
	}
	s.mini, s.spans = mini, spans
	lists := s.lists[:0]
	for _, sp := range spans {
		lo, hi := sp.lo, sp.hi
		lists = append(lists, termList{term: sp.term, list: plist{doc: mini.doc[lo:hi:hi], w: mini.w[lo:hi:hi],
			long: mini.long[lo:hi:hi], name: mini.name[lo:hi:hi], text: mini.text[lo:hi:hi]}})
	}
	s.lists = lists
	src := postingSource{ix: ix, restricted: true, lists: lists}
	for gi := range pq.groups {
		ix.scoreGroup(s, pq, gi, true, false, &src)
	}
}

// span is where one term's postings are in scratch.mini.
type span struct {
	term   uint32
	lo, hi int
}

// restrict appends to dst the postings of l whose tools are in docs (sorted), in order. Few tools in a long list
// cost a few probes each, not the list (restrictGallop); but each probe waits for the one before, and when the
// tools are more than one in mergeShare of the list a pass over the list, which the core reads ahead, costs less.
func restrict(dst *columns, l *plist, docs []uint32) {
	if len(l.doc) <= mergeShare*len(docs) {
		restrictMerge(dst, l, docs)
		return
	}
	restrictGallop(dst, l, docs)
}

// mergeShare: see restrict.
const mergeShare = 32

// restrictMerge is restrict by a pass over the list.
func restrictMerge(dst *columns, l *plist, docs []uint32) {
	j := 0
	for i, x := range l.doc {
		for j < len(docs) && docs[j] < x {
			j++
		}
		if j == len(docs) {
			return
		}
		if docs[j] == x {
			appendPosting(dst, l, i)
			j++
		}
	}
}

// appendPosting appends posting i of l to dst.
func appendPosting(dst *columns, l *plist, i int) {
	dst.doc = append(dst.doc, l.doc[i])
	dst.w = append(dst.w, l.w[i])
	dst.long = append(dst.long, l.long[i])
	if l.name != nil {
		dst.name = append(dst.name, l.name[i])
		dst.text = append(dst.text, l.text[i])
	} else {
		dst.name = append(dst.name, 0) // a pair's: kept so that dst's columns stay aligned
		dst.text = append(dst.text, 0)
	}
}

// restrictGallop is restrict by galloping through the list from one tool to the next.
func restrictGallop(dst *columns, l *plist, docs []uint32) {
	list := l.doc
	lo := 0
	for _, d := range docs {
		hi := lo
		for step := 1; hi < len(list) && list[hi] < d; step <<= 1 {
			lo = hi + 1
			hi += step
		}
		hi = min(hi, len(list))
		for lo < hi {
			mid := int(uint(lo+hi) >> 1)
			if list[mid] < d {
				lo = mid + 1
			} else {
				hi = mid
			}
		}
		if lo == len(list) {
			break
		}
		if list[lo] == d {
			appendPosting(dst, l, lo)
			lo++
		}
	}
}
