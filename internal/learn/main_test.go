package main

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/internal/devset"
	"github.com/toolsearch/toolsearch/internal/ltr"
)

// On a set where the first stage ranks every gold tool second and one feature marks it, training finds that
// feature: hit@1 goes from 0 to 1, and a terse request keeps the first stage's order whatever the model.
func TestTrainFindsTheSignal(t *testing.T) {
	require.NotNil(t, ltr.Build, "package catalog sets the hooks")
	var file []byte
	file = append(file, '[')
	for i := range 5 {
		if i > 0 {
			file = append(file, ',')
		}
		file = append(file, fmt.Sprintf(`{"name":"tool_%d","description":"Tool number %d.","inputSchema":{"type":"object"}}`, i, i)...)
	}
	file = append(file, ']')
	r, err := ltr.Build(file)
	require.NoError(t, err)
	nf := len(ltr.FeatureNames)
	const signal = 7
	d := &setData{set: set{devset.Set{Name: "synthetic"}, true}, tools: 5, order: r}
	for q := range 40 {
		gold := 1 + q%4
		d.Queries = append(d.Queries, devset.Query{Text: fmt.Sprint("request ", q), Needs: []devset.Need{{Tools: []int{gold}}}})
		var cands []ltr.Candidate
		// The first stage's order: the first non-gold tool, then the gold one, then the rest.
		order := []int{0, gold}
		for i := 1; i < 5; i++ {
			if i != gold {
				order = append(order, i)
			}
		}
		for rank, doc := range order {
			x := make([]float32, nf)
			x[0] = 1 - float32(rank)*0.1 // the first stage's score over the best's
			if doc == gold {
				x[signal] = 1
			}
			cands = append(cands, ltr.Candidate{Doc: doc, First: x[0], X: x})
		}
		d.cands = append(d.cands, cands)
		d.long = append(d.long, q%2 == 0)
	}
	before := d.evaluate(nil, false)
	assert.Zero(t, before.Hit1)
	opt := trainOptions{lambda: 0.01, iters: 100}
	m := train([]*setData{d}, "", opt)
	w := m.raw()
	assert.Positive(t, w[signal])
	after := d.evaluate(w, false)
	assert.InDelta(t, 0.5, after.Hit1, 1e-9, "every long request first, no terse one")
	assert.Equal(t, m, train([]*setData{d}, "", opt), "deterministic")
	firstOnly := make([]float32, nf)
	firstOnly[0] = 1
	assert.Equal(t, firstOnly, train([]*setData{d}, "synthetic", opt).raw(),
		"left out, the set teaches nothing: the first stage's order")
	strong := train([]*setData{d}, "", trainOptions{lambda: 1e6, iters: 100})
	assert.Zero(t, d.evaluate(strong.raw(), false).Hit1, "a strong pull keeps the first stage's order")
	pairwise := train([]*setData{d}, "", trainOptions{lambda: 0.01, iters: 100, pairwise: true})
	assert.InDelta(t, 0.5, d.evaluate(pairwise.raw(), false).Hit1, 1e-9, "the pairwise loss finds it too")
	terse := train([]*setData{d}, "", trainOptions{lambda: 0.01, iters: 100, terse: true})
	assert.InDelta(t, 0.5, d.evaluate(terse.raw(), true).Hit1, 1e-9, "a terse model re-ranks terse requests only")
}
