package catalog

import (
	"cmp"
	"math"
	"slices"
)

// rerankDepth is how many of the first stage's best tools the learned ranking re-scores. The first stage (BM25F
// with coverage, see score.go) finds them fast, with pruning; the learned model then orders them by features
// that a per-posting sum cannot carry (how much of the request each field covers, how much of the tool's name
// the request names, a plain BM25 view of the same words). The trainer (internal/learn) learns from the same
// depth.
const rerankDepth = 30

// The features of one (request, tool) pair. Coverage features are shares of the request's content words, each
// word weighted by its idf (its best expansion's): a tool matching the request's distinctive words scores more
// than one matching its everyday ones. Every feature is a number about the pair, never about a tool, server or
// catalog by name, so the weights learned on some catalogs apply to any other.
const (
	featFirst       = iota // the first stage's score over the best first-stage score of the request
	featFirstLog           // log(1 + the first stage's score)
	featCovName            // the share of the request's words found in the tool's name
	featCovLabel           // ... in its label
	featCovSource          // ... in its source name
	featCovDesc            // ... in its description
	featCovParams          // ... in its parameters
	featCovAll             // the share found anywhere in the tool
	featCovCount           // the share of the request's content words found, one each
	featWord               // the share found as the word itself (or its abbreviation spelled out)
	featSynonym            // ... only as a synonym
	featPrefix             // ... only as a longer word the request's word begins
	featTypo               // ... only as a typo fix
	featNameCover          // the share of the tool's name words the request has
	featNameAll            // 1 when the request has every word of the tool's name
	featNameSurface        // the share of the request's content words written exactly as in the tool's name
	featTextSurface        // ... as in its label, source name or description
	featAction             // 1 when the tool's action (create, list, ...) is one the request asks for
	featHints              // what the request's hints add (light verbs, framing words, numbers, quoted values, digits and letters)
	featPairs              // what two adjacent words of the request found side by side in the tool add
	featBM25               // a plain BM25 over the tool's whole text (stems, k1 1.2, b 0.75), over the best of the request
	featBM25Log            // log(1 + that BM25)
	featBM25Rank           // 1 / (1 + the tool's rank by plain BM25 among the first rerankDepth)
	featFirstRank          // 1 / (1 + its rank by the first stage)
	featBM25Words          // plain BM25 (of best) × log(1 + the request's content words)
	featFirstWords         // first stage (of best) × log(1 + the request's content words)
	numQueryToolFeatures
)

// Tool-side features, after the pair's own.
const (
	featNameLen    = numQueryToolFeatures + iota // log(1 + words in the tool's name)
	featDescLen                                  // log(1 + words in its description)
	featParamsLen                                // log(1 + words of its parameters)
	featBM25Vague                                // plain BM25 (of best) × the share of the request its best candidate misses
	featFirstVague                               // first stage (of best) × that share
	numBaseFeatures
)

// numFeatures: the base features, then each pair feature again relative to the request: its value minus the
// best value any of the first rerankDepth candidates has. A raw value means different things in a catalog of
// terse tools and in one of wordy tools; how far a tool is behind the request's best candidate means the same in
// both, so a weight learned on some catalogs transfers better to another.
const numFeatures = numBaseFeatures + numQueryToolFeatures

// featureNames names every feature, for Explain and the trainer's generated file.
var featureNames = func() [numFeatures]string {
	base := [numBaseFeatures]string{
		featFirst: "first stage (of best)", featFirstLog: "first stage (log)",
		featCovName: "coverage: name", featCovLabel: "coverage: label", featCovSource: "coverage: source",
		featCovDesc: "coverage: description", featCovParams: "coverage: parameters", featCovAll: "coverage: any field",
		featCovCount: "coverage: words", featWord: "match: word", featSynonym: "match: synonym",
		featPrefix: "match: prefix", featTypo: "match: typo fix", featNameCover: "name words named",
		featNameAll: "whole name named", featNameSurface: "written as in name", featTextSurface: "written as in text",
		featAction: "action", featHints: "hints", featPairs: "adjacent pairs", featBM25: "plain BM25 (of best)",
		featBM25Log: "plain BM25 (log)", featBM25Rank: "plain BM25 rank (1/(1+r))", featFirstRank: "first stage rank (1/(1+r))",
		featBM25Words: "plain BM25 × request length", featFirstWords: "first stage × request length", featNameLen: "name length (log)", featDescLen: "description length (log)",
		featParamsLen: "parameters length (log)", featBM25Vague: "plain BM25 × request missed",
		featFirstVague: "first stage × request missed",
	}
	var out [numFeatures]string
	copy(out[:], base[:])
	for i := range numQueryToolFeatures {
		out[numBaseFeatures+i] = base[i] + " − request's best"
	}
	return out
}()

type features [numFeatures]float32

// unstandardise turns the model's weights on standardised features (each feature minus its mean over the
// training candidates, over its standard deviation) into weights on the raw features: the mean only shifts every
// candidate of a request by the same amount, which orders nothing, so it drops out.
// learnedDefault is the model of a class of requests by default: the trainer re-ranks a class only when its
// held-out figures are at least the first stage's on every set (use); otherwise nil, the first stage's order.
func learnedDefault(use bool, z, std *[numFeatures]float32) *[numFeatures]float32 {
	if !use {
		return nil
	}
	return unstandardise(z, std)
}

func unstandardise(z, std *[numFeatures]float32) *[numFeatures]float32 {
	var w [numFeatures]float32
	for i := range w {
		if std[i] > 0 {
			w[i] = z[i] / std[i]
		}
	}
	return &w
}

// learnedScore is the model's score: the features times the learned weights.
func learnedScore(x *features, w *[numFeatures]float32) float32 {
	var s float32
	for i := range x {
		s += x[i] * w[i]
	}
	return s
}

// candidate is one tool the learned ranking scores: its first-stage result and its features.
type candidate struct {
	scored
	first float32 // the first stage's score
	x     features
}

// rerank re-scores the first stage's ranking (best first) with the learned model: its first rerankDepth tools
// are ordered by their learned score (the tools the request names exactly stay first), any after them keep the
// first stage's order below. Each result's score becomes its learned score.
func (ix *index) rerank(pq *parsedQuery, first []scored, w *[numFeatures]float32) []candidate {
	cands := ix.candidates(pq, first)
	for i := range cands {
		cands[i].score = learnedScore(&cands[i].x, w)
	}
	// Sorted by index, not by value: a candidate is a few hundred bytes.
	top := cands[:min(len(cands), rerankDepth)]
	idx := make([]int, len(top))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case betterCandidate(&top[a], &top[b]):
			return -1
		case betterCandidate(&top[b], &top[a]):
			return 1
		}
		return 0
	})
	sorted := make([]candidate, len(top))
	for i, j := range idx {
		sorted[i] = top[j]
	}
	copy(top, sorted)
	return cands
}

// betterCandidate orders re-scored tools: exact names first, then the learned score, then the first stage's
// score, then the tool with fewer words of description and parameters (of two look-alikes that match the same
// words, the one with less text about other things is the likelier one meant), then index order.
func betterCandidate(a, b *candidate) bool {
	if a.exact != b.exact {
		return a.exact
	}
	if a.score != b.score {
		return a.score > b.score
	}
	if a.first != b.first {
		return a.first > b.first
	}
	la, lb := a.x[featDescLen]+a.x[featParamsLen], b.x[featDescLen]+b.x[featParamsLen]
	if la != lb {
		return la < lb
	}
	return a.doc < b.doc
}

// candidates computes the features of the tools of first (a first-stage ranking, best first), in that order.
// The shares that depend on the other candidates (featFirst, featBM25) are taken over the first rerankDepth.
func (ix *index) candidates(pq *parsedQuery, first []scored) []candidate {
	out := make([]candidate, len(first))
	if len(first) == 0 {
		return out
	}
	// The tools in index order, for galloping through the postings once per term.
	order := make([]int, len(first))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(first[a].doc, first[b].doc) })
	docs := make([]uint32, len(first))
	for i, o := range order {
		docs[i] = first[o].doc
	}
	f := ix.rawFeatures(pq, docs)
	var bestFirst, bestBM25 float32
	for i, r := range first {
		if i < rerankDepth && !r.exact || i == 0 {
			bestFirst = max(bestFirst, r.score)
		}
	}
	for i, o := range order {
		if o < rerankDepth {
			bestBM25 = max(bestBM25, f[i][featBM25])
		}
	}
	var top [numQueryToolFeatures]float32 // each pair feature's best over the first rerankDepth
	for i, o := range order {
		r := first[o]
		c := candidate{scored: r, first: r.score, x: f[i]}
		c.x[featFirst] = ratio(r.score, bestFirst)
		c.x[featFirstLog] = float32(math.Log1p(float64(r.score)))
		c.x[featBM25Log] = float32(math.Log1p(float64(c.x[featBM25])))
		c.x[featBM25] = ratio(c.x[featBM25], bestBM25)
		out[o] = c
	}
	// Ranks by plain BM25 among the first rerankDepth (by first-stage order on ties), and length interactions.
	var content int
	for gi := range pq.groups {
		if !pq.groups[gi].hint && !pq.groups[gi].pair {
			content++
		}
	}
	words := float32(math.Log1p(float64(content)))
	depth := min(len(out), rerankDepth)
	for o := range out {
		x := &out[o].x
		x[featFirstRank] = 1 / float32(1+o)
		x[featBM25Words] = x[featBM25] * words
		x[featFirstWords] = x[featFirst] * words
		if o >= depth {
			continue
		}
		r := 0
		for p := range depth {
			if y := out[p].x[featBM25]; y > x[featBM25] || y == x[featBM25] && p < o {
				r++
			}
		}
		x[featBM25Rank] = 1 / float32(1+r)
	}
	for o := range depth {
		for fi := range top {
			if o == 0 || out[o].x[fi] > top[fi] {
				top[fi] = out[o].x[fi]
			}
		}
	}
	// A request whose best candidate misses much of it (a scene more than a need) may want the words weighed
	// another way than one a tool covers: the model can tell them apart by these.
	missed := 1 - top[featCovAll]
	for o := range out {
		x := &out[o].x
		for fi := range top {
			x[numBaseFeatures+fi] = x[fi] - top[fi]
		}
		x[featBM25Vague] = x[featBM25] * missed
		x[featFirstVague] = x[featFirst] * missed
	}
	return out
}

func ratio(a, b float32) float32 {
	if b <= 0 {
		return 0
	}
	return a / b
}

// Kinds of expansion, for the match features.
const (
	kindWord = iota
	kindSynonym
	kindPrefix
	kindTypo
)

// rawFeatures computes the features of docs (in index order) that need only the request and the tool: all but
// the first stage's (left 0), and featBM25 as the raw score. It reads each expansion's postings once, galloping
// to the few tools it is asked about.
func (ix *index) rawFeatures(pq *parsedQuery, docs []uint32) []features {
	out := make([]features, len(docs))
	n := len(docs)
	mode := pq.mode()
	// Per tool, for the group being read.
	best := make([]float32, n) // the best expansion's value
	kind := make([]int8, n)    // its kind
	inField := make([][numFields]float32, n)
	inName := make([]bool, n)   // some full-weight-ish expansion is in the name
	surfName := make([]bool, n) // the word as written is in the name
	surfText := make([]bool, n) // ... in the label, source or description
	dl := make([]float32, n)    // each tool's length in words, for plain BM25
	for i, d := range docs {
		for _, x := range ix.lens[d] {
			dl[i] += float32(x)
		}
	}
	var at []int32    // positions of docs in the list being read
	var total float32 // of the content words' weights
	content := 0      // a content word no tool has still is part of the request
	for gi := range pq.groups {
		if !pq.groups[gi].hint {
			content++
		}
	}
	for gi := range pq.groups {
		g := &pq.groups[gi]
		if len(g.exps) == 0 {
			continue
		}
		stem, _ := ix.stemOfGroup(g)
		var qw float32 // the word's weight: its best expansion's idf
		for _, e := range g.exps {
			sure := e.w
			if g.corrected {
				sure = 1
			}
			qw = max(qw, ix.idf[e.term]*sure)
		}
		for i := range n {
			best[i], kind[i], inField[i], inName[i], surfName[i], surfText[i] = 0, 0, [numFields]float32{}, false, false, false
		}
		for _, e := range g.exps {
			k := int8(kindWord)
			if !g.pair {
				switch ix.how(g, e.term) {
				case "synonym":
					k = kindSynonym
				case "prefix":
					k = kindPrefix
				case "typo fix":
					k = kindTypo
				}
			}
			idf := ix.idf[e.term] * e.w
			l := ix.list(e.term)
			base := ix.start[e.term]
			ws := l.weights(mode)
			own := e.term == stem
			at = postingPlaces(l.doc, docs, at)
			for i, p32 := range at {
				if p32 < 0 {
					continue
				}
				p := int(p32)
				if v := idf * ws[p]; v > best[i] || v == best[i] && k < kind[i] {
					best[i], kind[i] = v, k
				}
				fields := ix.cols.fields[int(base)+p]
				for fi := range numFields {
					if fields&(1<<fi) != 0 {
						inField[i][fi] = max(inField[i][fi], idf)
					}
				}
				if fields&(1<<fieldName) != 0 && e.w >= 0.5 {
					inName[i] = true
				}
				if own && !g.pair {
					// Plain BM25 (k1 1.2, b 0.75) over all the tool's text, for the word itself.
					tf := float32(ix.cols.tf[int(base)+p])
					out[i][featBM25] += ix.idf[e.term] * tf * 2.2 / (tf + 1.2*(0.25+0.75*dl[i]/ix.avgLen))
					if ix.inlineName[e.term] != noTerm && g.hasSurf && ix.inlineName[e.term] == g.surface && l.name[p] > 0 {
						surfName[i] = true
					}
					if ix.inlineText[e.term] != noTerm && g.hasText && ix.inlineText[e.term] == g.textSurf && l.text[p] > 0 {
						surfText[i] = true
					}
				}
			}
		}
		if g.hasSurf && ix.inlineName[stem] != g.surface {
			at = postingPlaces(ix.list(g.surface).doc, docs, at)
			for i, p := range at {
				surfName[i] = surfName[i] || p >= 0
			}
		}
		if g.hasText && ix.inlineText[stem] != g.textSurf {
			at = postingPlaces(ix.list(g.textSurf).doc, docs, at)
			for i, p := range at {
				surfText[i] = surfText[i] || p >= 0
			}
		}
		for i := range n {
			x := &out[i]
			if best[i] == 0 {
				continue
			}
			switch {
			case g.pair:
				x[featPairs] += best[i]
				continue
			case g.hint:
				x[featHints] += best[i]
				continue
			}
			x[featCovAll] += qw
			x[featCovCount]++
			x[featWord+int(kind[i])] += qw
			for fi := range numFields {
				x[featCovName+fi] += min(qw, inField[i][fi])
			}
			if inName[i] {
				x[featNameCover]++
			}
			if surfName[i] {
				x[featNameSurface]++
			}
			if surfText[i] {
				x[featTextSurface]++
			}
		}
		if !g.pair && !g.hint {
			total += qw
		}
	}
	for i, d := range docs {
		x := &out[i]
		t := max(total, 1e-6)
		for fi := featCovName; fi <= featCovAll; fi++ {
			x[fi] /= t
		}
		for fi := featWord; fi <= featTypo; fi++ {
			x[fi] /= t
		}
		if content > 0 {
			x[featCovCount] /= float32(content)
			x[featNameSurface] /= float32(content)
			x[featTextSurface] /= float32(content)
		}
		if nt := ix.nameTerms[d]; nt > 0 {
			named := x[featNameCover]
			x[featNameCover] = min(1, named/float32(nt))
			if named >= float32(nt) {
				x[featNameAll] = 1
			}
		}
		if pq.actions != 0 && ix.actions[d]&pq.actions != 0 {
			x[featAction] = 1
		}
		lens := ix.lens[d]
		x[featNameLen] = float32(math.Log1p(float64(lens[fieldName])))
		x[featDescLen] = float32(math.Log1p(float64(lens[fieldDescription])))
		x[featParamsLen] = float32(math.Log1p(float64(lens[fieldParams])))
	}
	return out
}

// postingPlaces sets at[i] to the place of docs[i] (sorted) in list (sorted), or -1, and returns at (reused when
// it is long enough). It gallops: a few tools in a long list cost a few probes each, not the list.
func postingPlaces(list []uint32, docs []uint32, at []int32) []int32 {
	if cap(at) < len(docs) {
		at = make([]int32, len(docs))
	}
	at = at[:len(docs)]
	lo := 0
	for i, d := range docs {
		at[i] = -1
		if lo >= len(list) {
			continue
		}
		if list[lo] < d {
			step := 1
			k := lo
			for k+step < len(list) && list[k+step] < d {
				k += step
				step <<= 1
			}
			hi := min(k+step, len(list)-1) + 1
			lo = k + 1
			for lo < hi { // the first of list[lo:hi] not below d
				mid := int(uint(lo+hi) >> 1)
				if list[mid] < d {
					lo = mid + 1
				} else {
					hi = mid
				}
			}
			if lo >= len(list) {
				continue
			}
		}
		if list[lo] == d {
			at[i] = int32(lo)
			lo++
		}
	}
	return at
}
