package catalog

import (
	"context"
	"math"
	"strings"
)

// Explanation says why a tool ranked where it did for a query, in its two stages. The first stage: what each
// query word matched in the tool and what it added, and the factors applied to their sum (FirstStage = Sum ×
// CoverageFactor × ActionFactor). The learned ranking re-scores the first stage's best tools: Features are its
// inputs with their weights, and their contributions add up to Total. Score is the hit's score as Search reports
// it: Total rounded (plus the exact-match lift for an Exact tool).
type Explanation struct {
	Hit
	// Rank is the tool's place in the ranking, from 1; 0 when the query matches nothing of the tool.
	Rank  int  `json:"rank"`
	Exact bool `json:"exact,omitempty"` // the query names the tool, which ranks it first
	// Long: the query has more than six content words and was ranked as a request (its own field weights, the
	// action tie-break).
	Long  bool        `json:"long"`
	Words []WordMatch `json:"words"`
	Sum   float64     `json:"sum"` // of the words' Score and Bonus
	// Coverage is the share of the query's words (weighted as Weight says) the tool matches; the coverage
	// factor, 1 + strength × Coverage², rewards matching more of them.
	Coverage       float64 `json:"coverage"`
	CoverageFactor float64 `json:"coverageFactor"`
	ActionFactor   float64 `json:"actionFactor"` // above 1 when the tool's action is one the request asks for
	FirstStage     float64 `json:"firstStage"`   // the first stage's score
	// Features are the learned ranking's inputs for this tool, each with its weight and contribution; empty for
	// a tool the query matches nothing of.
	Features []FeatureContribution `json:"features,omitempty"`
	// Reranked: the request is long and the tool is among the first stage's best tools the learned score orders.
	// A tool below them keeps the first stage's order after them, whatever its Total. A terse query is ranked by
	// the first stage alone: it has no Features, and its Total is FirstStage.
	Reranked bool    `json:"reranked"`
	Total    float64 `json:"total"`
	// Tie: other tools have the same first-stage score, and the tie-break placed this one among them; nil when no
	// other tool has its score, or when the learned ranking orders the request.
	Tie *TieBreak `json:"tie,omitempty"`
}

// TieBreak says how tools with the same first-stage score were ordered: by the request's words past those the
// first stage reads that each tool's text has (each counted by its idf), then by the request's stop words its
// name has next to the same word as the request, then by id.
type TieBreak struct {
	Tools int      `json:"tools"` // how many tools have the score, this one included
	With  []string `json:"with"`  // the ids of the others, in rank order (the first 64)
	// By is what set this tool apart from the tied tool next to it in the ranking (the one above it, or for the
	// first of them the one below): "text", "name", "id" (the request tells them apart by neither), or "id, past
	// the tools of the tie the tie-break reads" (a tie of more tools than the tie-break reads: the others follow
	// in id order).
	By        string  `json:"by"`
	TextWords float64 `json:"textWords"` // the idf of the unread words of the request the tool's text has, summed
	NameWords int     `json:"nameWords"` // the request's stop words its name has beside the same word
}

// FeatureContribution is one input of the learned score: Contribution = Value × Weight.
type FeatureContribution struct {
	Name         string  `json:"name"`
	Value        float64 `json:"value"`
	Weight       float64 `json:"weight"`
	Contribution float64 `json:"contribution"`
}

// WordMatch is one query word in an explanation.
type WordMatch struct {
	Word string `json:"word"` // as written, lowercased; two words for a pair of adjacent words ("round trip")
	// Term is the index term that gave the word its score for this tool: the word's stem, or what it was
	// expanded to; How says which ("word", "synonym", "prefix", "typo fix", "abbreviation", and for a pair "pair"
	// when the tool has the two words side by side, "joined pair" when it has them as one word). Empty when the
	// tool does not have the word. A pair's Term is "+" and its two stems ("+round trip").
	Term string `json:"term,omitempty"`
	How  string `json:"how,omitempty"`
	// Fields are the tool's fields that hold Term: name, label, source, description, parameters. The score of a
	// term is computed over all its fields at once (BM25F: the field weights apply before saturation), so it is
	// not split by field.
	Fields []string `json:"fields,omitempty"`
	Score  float64  `json:"score"`           // the term's BM25F score, times its expansion weight
	Bonus  float64  `json:"bonus,omitempty"` // for the word written exactly as in the tool's name or text
	// Hint: a word that frames the request or carries a value (a light verb, "please", a number in a long
	// request), which counts little and not towards coverage.
	Hint   bool    `json:"hint,omitempty"`
	Weight float64 `json:"weight"` // how much the word counts towards coverage
}

var fieldNames = [numFields]string{fieldName: "name", fieldLabel: "label", fieldSource: "source",
	fieldDescription: "description", fieldParams: "parameters"}

// Explain ranks the catalog for query as Search does and explains each of the first limit hits, then each tool
// named in also (by id or name) that is not among them, so that a user can see why a tool missed. It scores with
// the same code as Search, one query word at a time; every explanation's Total is the tool's score. limit is
// clamped like Search's; an unknown name in also is an error. It does not count as a search.
func (c *Catalog) Explain(ctx context.Context, query string, limit int, also ...string) ([]Explanation, error) {
	limit, err := c.limit(limit)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	_, ranked := c.ix.ranked(query, c.ix.n)
	var first []scored // the first stage's ranking, when it is the ranking
	if ranked == nil { // a terse query: the first stage's ranking, as search's
		first = c.ix.search(query, c.ix.n)
		for _, r := range first {
			ranked = append(ranked, candidate{scored: r, first: r.score})
		}
	}
	rank := make(map[uint32]int, len(ranked))
	byDoc := make(map[uint32]*candidate, len(ranked))
	for i := range ranked {
		rank[ranked[i].doc] = i + 1
		byDoc[ranked[i].doc] = &ranked[i]
	}
	var docs []uint32
	for _, r := range ranked[:min(limit, len(ranked))] {
		docs = append(docs, r.doc)
	}
	for _, name := range also {
		e, err := c.lookup(name)
		if err != nil {
			return nil, err
		}
		d := c.docOf(e)
		if !containsID(docs, d) {
			docs = append(docs, d)
		}
	}
	pq, scores := c.ix.explain(query, docs)
	out := make([]Explanation, len(docs))
	for i, d := range docs {
		ds := scores[i]
		var total float64
		x := Explanation{
			Rank:           rank[d],
			Exact:          ds.exact,
			Long:           pq.long,
			Sum:            float64(ds.acc),
			Coverage:       float64(ds.coverage),
			CoverageFactor: float64(ds.coverageFactor),
			ActionFactor:   float64(ds.actionFactor),
			FirstStage:     float64(ds.score),
		}
		if cd := byDoc[d]; cd != nil {
			total = float64(cd.score)
			model := c.ix.learnedFor(&pq)
			learned := model != nil
			x.Reranked = learned && rank[d] <= rerankDepth
			if learned {
				for fi, v := range cd.x {
					w := model[fi]
					if v != 0 && w != 0 {
						x.Features = append(x.Features, FeatureContribution{Name: featureNames[fi], Value: float64(v),
							Weight: float64(w), Contribution: float64(v * w)})
					}
				}
			}
		}
		x.Total = total
		if tie, ok := c.ix.explainTie(&pq, first, d); ok {
			x.Tie = &TieBreak{Tools: tie.of, By: tie.by, TextWords: float64(tie.key.text), NameWords: tie.key.named}
			for _, o := range tie.with {
				x.Tie.With = append(x.Tie.With, c.entries[o].id)
			}
		}
		score := total
		if ds.exact {
			score += exactScoreBonus
		}
		x.Hit = Hit{Descriptor: c.descriptor(c.entries[d]), Score: math.Round(score*1e4) / 1e4}
		text := TextOf(&c.entries[d].tool)
		fields := [numFields]string{fieldName: text.Name, fieldLabel: text.Label, fieldSource: text.Source,
			fieldDescription: text.Description, fieldParams: text.Parameters}
		for gi, g := range pq.groups {
			w := WordMatch{Word: g.raw, Hint: g.hint, Weight: float64(ds.weights[gi]),
				Score: float64(ds.best[gi]), Bonus: float64(ds.value[gi] - ds.best[gi])}
			if e := ds.term[gi]; e >= 0 {
				term := g.exps[e].term
				w.Term, w.How = c.ix.vocab[term], c.ix.how(&g, term)
				for f := range fields {
					if hasTerm(fields[f], w.Term) || f == fieldName && c.ix.nameHasPart(fields[f], w.Term) {
						w.Fields = append(w.Fields, fieldNames[f])
					}
				}
			}
			x.Words = append(x.Words, w)
		}
		out[i] = x
	}
	return out, nil
}

// docOf is the index position of an entry.
func (c *Catalog) docOf(e *entry) uint32 {
	for i, x := range c.entries {
		if x == e {
			return uint32(i)
		}
	}
	return 0
}

// hasTerm reports whether text, analyzed as the index analyzes it, has term (a pair term: two adjacent words).
func hasTerm(text, term string) bool {
	found := false
	prev := ""
	splitWords(text, func(w string) {
		t := analyze(w)
		if found || t == "" {
			return
		}
		if t == term || prev != "" && pairKey(prev, t) == term {
			found = true
		}
		prev = ""
		if pairable(w) {
			prev = t
		}
	})
	return found
}

// nameHasPart reports whether a word of name written as one run of letters is split into a word with term
// (see segment).
func (ix *index) nameHasPart(name, term string) bool {
	found := false
	splitWords(name, func(w string) {
		if found || len(w) < minJoinedName || !isASCIILetters(w) {
			return
		}
		for _, p := range ix.splitName(w) {
			found = found || analyze(p) == term
		}
	})
	return found
}

// how names the kind of expansion term is of group g.
func (ix *index) how(g *queryGroup, term uint32) string {
	switch {
	case g.pair && ix.vocab[term] == g.word:
		return "pair"
	case g.pair:
		return "joined pair"
	case ix.vocab[term] == g.word:
		return "word"
	case g.corrected:
		return "typo fix"
	case containsID(ix.synonyms[g.word], term):
		return "synonym"
	case strings.HasPrefix(ix.vocab[term], g.raw):
		return "prefix"
	default:
		return "abbreviation"
	}
}

// docScore is the explanation of one tool's score, in the index's terms.
type docScore struct {
	score, acc               float32
	exact                    bool
	coverage, coverageFactor float32
	actionFactor             float32
	weights                  [maxQueryGroups]float32
	value, best              [maxQueryGroups]float32 // per group: what it added, and its best expansion alone
	term                     [maxQueryGroups]int     // per group: the expansion that gave best, or -1
}

// explain scores docs for q group by group with accumulate, the code search scores with: a group's value is what
// a one-group run adds to a tool's cell, the same float search adds for that group, so that their sum in group
// order is search's sum bit for bit and finalScore turns it into the same score.
func (ix *index) explain(q string, docs []uint32) (parsedQuery, []docScore) {
	pq := ix.parseQuery(q)
	out := make([]docScore, len(docs))
	s := ix.getScratch()
	defer ix.scratch.Put(s)
	weights, total, live := ix.accumulate(s, &pq, 0, 0, true)
	read := func(dst func(i int, v float32)) {
		for i, d := range docs {
			dst(i, s.cells[d].acc)
		}
		for _, d := range s.touched {
			s.cells[d] = cell{}
		}
		s.touched = s.touched[:0]
	}
	for i := range out {
		out[i].weights = weights
		for gi := range out[i].term {
			out[i].term[gi] = -1
		}
	}
	one := pq
	one.groups = append([]queryGroup(nil), pq.groups...)
	for gi := range pq.groups {
		ix.accumulate(s, &pq, gi, gi+1, true)
		read(func(i int, v float32) { out[i].value[gi] = v })
		ix.accumulate(s, &pq, gi, gi+1, false)
		read(func(i int, v float32) { out[i].best[gi] = v })
		for e := range pq.groups[gi].exps {
			one.groups[gi].exps = pq.groups[gi].exps[e : e+1]
			ix.accumulate(s, &one, gi, gi+1, false)
			read(func(i int, v float32) {
				if v > 0 && v == out[i].best[gi] && out[i].term[gi] < 0 {
					out[i].term[gi] = e
				}
			})
		}
		one.groups[gi] = pq.groups[gi]
	}
	ng := max(total, 1e-6)
	strength := ix.coverageStrength(live)
	actionBonus := float32(1)
	if pq.actions != 0 {
		actionBonus += ix.cfg.actionBonus
	}
	for i, d := range docs {
		o := &out[i]
		var mask uint32
		for gi := range pq.groups {
			if o.value[gi] > 0 {
				o.acc += o.value[gi]
				mask |= 1 << gi
			}
		}
		m := matchedWeight(mask, &weights)
		action := ix.actions[d]&pq.actions != 0
		o.coverage = m / ng
		o.coverageFactor = coverageFactor(m, ng, strength)
		o.actionFactor = 1
		if action {
			o.actionFactor = actionBonus
		}
		if mask != 0 {
			o.score = finalScore(o.acc, o.coverageFactor, action, actionBonus)
		}
		o.exact = containsID(pq.exact, d)
	}
	return pq, out
}
