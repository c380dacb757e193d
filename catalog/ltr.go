package catalog

import (
	"sort"

	"github.com/toolsearch/toolsearch/internal/ltr"
)

// The trainer of the learned ranking (internal/learn) reaches the index through internal/ltr's hooks.
func init() {
	ltr.Build = buildForTraining
	ltr.FeatureNames = featureNames[:]
	ltr.Depth = rerankDepth
}

// trainingView is a catalog indexed without its learned weights: the trainer reads the first stage's candidates
// and their features, which do not depend on the weights.
type trainingView struct {
	c   *Catalog
	pos []int    // index position → position in the file
	doc []uint32 // and back
}

func buildForTraining(file []byte) (ltr.Ranker, error) {
	tools, err := ParseFile(file)
	if err != nil {
		return nil, err
	}
	cfg := defaultRankConfig()
	cfg.weights = nil
	cfg.features = true
	c, err := newCatalog(tools, &Options{MaxSearchLimit: 10}, "", &counters{}, cfg)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]int, len(tools))
	for i := range tools {
		byID[tools[i].ID()] = i
	}
	pos := make([]int, len(c.entries))
	for d, e := range c.entries {
		pos[d] = byID[e.tool.ID()]
	}
	doc := make([]uint32, len(pos))
	for d, p := range pos {
		doc[p] = uint32(d)
	}
	return trainingView{c, pos, doc}, nil
}

func (v trainingView) Candidates(q string) ([]ltr.Candidate, bool) {
	ix := v.c.ix
	pq := ix.parseQuery(q)
	cands := ix.candidates(&pq, ix.firstStage(&pq, rerankDepth))
	out := make([]ltr.Candidate, len(cands))
	for i, c := range cands {
		out[i] = ltr.Candidate{Doc: v.pos[c.doc], Exact: c.exact, First: c.first, X: append([]float32(nil), c.x[:]...)}
	}
	return out, pq.long
}

func (v trainingView) Order(cands []ltr.Candidate, w []float32) {
	var weights [numFeatures]float32
	copy(weights[:], w)
	cs := make([]candidate, len(cands))
	for i, c := range cands {
		cs[i] = candidate{scored: scored{doc: v.doc[c.Doc], exact: c.Exact}, first: c.First}
		copy(cs[i].x[:], c.X)
		cs[i].score = learnedScore(&cs[i].x, &weights)
	}
	idx := make([]int, len(cs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return betterCandidate(&cs[idx[a]], &cs[idx[b]]) })
	sorted := make([]ltr.Candidate, len(cands))
	for i, j := range idx {
		sorted[i] = cands[j]
	}
	copy(cands, sorted)
}
