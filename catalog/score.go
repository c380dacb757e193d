package catalog

import (
	"math/bits"
)

// cell is one tool's running score during a query, eight bytes so that the cells of 100,000 tools stay in a
// core's cache: the sum of the groups that matched it so far, and which groups those were (bit i: group i), from
// which the coverage weight is summed once, in group order, at the end.
type cell struct {
	acc  float32
	mask uint32
}

type scratch struct {
	cells    []cell
	cur      []float32 // best expansion of the current group per tool, for groups read from several lists
	touched  []uint32  // tools some group matched, in the order first matched
	gtouched []uint32  // tools the current group matched, for groups read from several lists
	table    [1 << maxTableGroups]float32
}

// maxTableGroups: a query of up to this many groups looks the coverage weight of a tool's groups up in a table.
const maxTableGroups = 10

func (ix *index) getScratch() *scratch {
	if s, ok := ix.scratch.Get().(*scratch); ok {
		return s
	}
	return &scratch{cells: make([]cell, ix.n), cur: make([]float32, ix.n)}
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

// search ranks the tools for q and returns at most limit of them, best first.
func (ix *index) search(q string, limit int) []scored {
	pq := ix.parseQuery(q)
	groups, exact := pq.groups, pq.exact
	if (len(groups) == 0 && len(exact) == 0) || limit <= 0 {
		return nil
	}
	s := ix.getScratch()
	defer ix.scratch.Put(s)
	weights, total, live := ix.accumulate(s, &pq, 0, len(groups), true)
	actionBonus := float32(1)
	if pq.actions != 0 {
		actionBonus += ix.cfg.actionBonus
	}

	top := newTopK(limit)
	ng := max(total, 1e-6)
	strength := ix.coverageStrength(live)
	// The coverage weight of every combination of a short query's groups, each summed in group order as
	// matchedWeight does: the sum of a mask's lower groups plus its highest.
	var table []float32
	if len(groups) <= maxTableGroups {
		table = s.table[:1<<len(groups)]
		table[0] = 0
		for m := 1; m < len(table); m++ {
			hb := bits.Len(uint(m)) - 1
			table[m] = table[m&^(1<<hb)] + weights[hb]
		}
	}
	for _, d := range s.touched {
		c := &s.cells[d]
		var m float32
		if table != nil {
			m = table[c.mask]
		} else {
			m = matchedWeight(c.mask, &weights)
		}
		score := finalScore(c.acc, m, ng, strength, ix.actions[d]&pq.actions != 0, actionBonus)
		*c = cell{}
		isExact := len(exact) > 0 && containsID(exact, d)
		// Most touched tools cannot enter a full top k; this is the comparison push would make first.
		if len(top.h) == top.k && !isExact && (top.h[0].exact || score < top.h[0].score) {
			continue
		}
		top.push(scored{doc: d, score: score, exact: isExact})
	}
	s.touched = s.touched[:0]
	for _, d := range exact {
		if !top.has(d) {
			top.push(scored{doc: d, exact: true})
		}
	}
	return top.sorted()
}

// finalScore is a tool's score from the sum of its groups (acc) and their coverage weight (m): the coverage bonus
// over the query's total weight ng, and the action factor when the tool's action is one the request asks for.
// search and explain both score with it.
func finalScore(acc, m, ng, strength float32, action bool, actionBonus float32) float32 {
	cov := m / ng
	score := acc * (1 + strength*cov*cov)
	if action {
		score *= actionBonus
	}
	return score
}

// accumulate scores groups[from:to] of a query into s.cells and returns the coverage weight of each of the
// query's groups, their total, and how many of them are live (match some tool and are not hints: a word no tool
// has cannot tell tools apart). surface false leaves out the bonuses for words written as in the tool. Search
// scores all the groups at once; explain scores one group, or one expansion, at a time with the same code.
//
// A tool's score for a group is its best expansion, plus the group word's surface bonuses. The common group, one
// expansion whose bonuses (if any) are folded into its postings (see index.inlineName), is added to the tools'
// sums straight from its list; any other group first finds each tool's best in s.cur. Both add the same floats in
// the same order.
func (ix *index) accumulate(s *scratch, pq *parsedQuery, from, to int, surface bool) (weights [maxQueryGroups]float32, total float32, live int) {
	groups, mode := pq.groups, pq.mode()
	weights = ix.coverageWeights(groups)
	for _, w := range weights[:len(groups)] {
		total += w
		if w > 0 {
			live++
		}
	}
	for gi := from; gi < to; gi++ {
		g := &groups[gi]
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
			idf := ix.idf[e.term] * e.w
			for _, p := range ix.postings[e.term] {
				// Without branches: a tool without the surface word has p.name or p.text 0, and adding 0 leaves
				// the float as it is, the same as adding nothing.
				v := idf*p.w[mode] + inlineName*p.name + inlineText*p.text
				c := &s.cells[p.doc]
				if c.mask == 0 {
					s.touched = append(s.touched, p.doc)
				}
				c.acc += v
				c.mask |= bit
			}
			continue
		}
		// The stem's own list goes last: a best expansion is a maximum, the same in any order, and the main
		// form's bonuses stored with the stem's postings must be added after it.
		for _, e := range g.exps {
			if !inline || e.term != stem {
				ix.scoreExpansion(s, e, mode)
			}
		}
		if inline && !separate {
			// The stem's list, last, completes each of its tools' best expansion and adds it to the cell at
			// once; only the tools the other expansions found and the stem did not are left for the fold below
			// (their s.cur is left above 0; a folded tool's is reset to 0 here).
			e := expansionOf(g, stem)
			idf := ix.idf[e.term] * e.w
			for _, p := range ix.postings[e.term] {
				cur := &s.cur[p.doc]
				v := max(*cur, idf*p.w[mode])
				v += inlineName * p.name
				v += inlineText * p.text
				*cur = 0
				c := &s.cells[p.doc]
				if c.mask == 0 {
					s.touched = append(s.touched, p.doc)
				}
				c.acc += v
				c.mask |= bit
			}
			for _, d := range s.gtouched {
				if s.cur[d] == 0 {
					continue
				}
				c := &s.cells[d]
				if c.mask == 0 {
					s.touched = append(s.touched, d)
				}
				c.acc += s.cur[d]
				c.mask |= bit
				s.cur[d] = 0
			}
			s.gtouched = s.gtouched[:0]
			continue
		}
		if inline {
			e := expansionOf(g, stem)
			idf := ix.idf[e.term] * e.w
			for _, p := range ix.postings[e.term] {
				cur := &s.cur[p.doc]
				if *cur == 0 {
					s.gtouched = append(s.gtouched, p.doc)
				}
				if v := idf * p.w[mode]; v > *cur {
					*cur = v
				}
				*cur += inlineName * p.name
				*cur += inlineText * p.text
			}
		}
		if g.hasSurf && !nameInline && nameW != 0 {
			ix.addSurface(s, g.surface, nameW)
		}
		if g.hasText && !textInline && textW != 0 {
			ix.addSurface(s, g.textSurf, textW)
		}
		for _, d := range s.gtouched {
			c := &s.cells[d]
			if c.mask == 0 {
				s.touched = append(s.touched, d)
			}
			c.acc += s.cur[d]
			c.mask |= bit
			s.cur[d] = 0
		}
		s.gtouched = s.gtouched[:0]
	}
	return weights, total, live
}

// scoreExpansion raises each tool's best expansion of the current group (s.cur) to what e gives it.
func (ix *index) scoreExpansion(s *scratch, e expansion, mode int) {
	idf := ix.idf[e.term] * e.w
	for _, p := range ix.postings[e.term] {
		cur := &s.cur[p.doc]
		if *cur == 0 {
			s.gtouched = append(s.gtouched, p.doc)
		}
		if v := idf * p.w[mode]; v > *cur {
			*cur = v
		}
	}
}

// stemOfGroup returns the term of the group's word itself, and whether it is one of the group's expansions (it is
// whenever some tool has the word).
func (ix *index) stemOfGroup(g *queryGroup) (uint32, bool) {
	id, ok := ix.terms[g.word]
	if !ok {
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
func (ix *index) addSurface(s *scratch, term uint32, weight float32) {
	idf := ix.idf[term] * weight
	for _, p := range ix.postings[term] {
		if cur := &s.cur[p.doc]; *cur > 0 {
			*cur += idf * p.w[0]
		}
	}
}
