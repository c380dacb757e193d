// Command learn trains the catalog's learned ranking and writes its weights to catalog/learned_weights.go.
//
//	go run ./internal/learn                  # from the module root; reads ../shared/corpora
//	go run ./internal/learn -corpora DIR -out catalog/learned_weights.go
//
// Training data: the ToolLens training split (read from the corpora directory, never copied into the repository),
// and the development sets of catalog/testdata: dev, dev-fresh, metatool and bfcl-live (the halves kept here; the
// other halves are held out), multineed-dev. multineed-holdout is never trained on. The model is linear in the
// features of catalog/rerank.go, fit by coordinate ascent on hit@1 and MRR@10 over the first stage's best tools
// of each request, from the first stage's own ranking, each training set weighing the same
// in all (see train). Everything is deterministic: the same data gives the same file.
//
// It prints, for every set, plain BM25, the first stage alone (the ranking before the learned one), the model
// trained on every other set (leave one dataset out: the honest figure for a set), and the final model, trained
// on every set, labelled "trained on".
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/format"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/internal/bm25"
	"github.com/toolsearch/toolsearch/internal/devset"
	"github.com/toolsearch/toolsearch/internal/ltr"
)

func main() {
	root, err := moduleRoot()
	if err != nil {
		fail(err)
	}
	corpora := flag.String("corpora", filepath.Join(root, "..", "shared", "corpora"), "the directory holding toollens_train/")
	out := flag.String("out", filepath.Join(root, "catalog", "learned_weights.go"), "the generated Go file; empty: write nothing")
	every := flag.Int("toollens-every", 4, "train on every n-th ToolLens query (all are evaluated)")
	rounds := flag.Int("rounds", 6, "rounds of coordinate ascent (each tries every feature)")
	loo := flag.Bool("loo", true, "report leave-one-dataset-out figures")
	flag.Parse()

	sets, err := loadSets(root, *corpora)
	if err != nil {
		fail(err)
	}
	start := time.Now()
	var data []*setData
	for _, s := range sets {
		d, err := prepare(s)
		if err != nil {
			fail(err)
		}
		data = append(data, d)
		fmt.Fprintf(os.Stderr, "%s: %d tools, %d queries (%s)\n", s.Name, d.tools, len(s.Queries), time.Since(start).Round(time.Millisecond))
	}
	opt := trainOptions{rounds: *rounds, toollensEvery: *every}

	fmt.Printf("%-18s %-26s %6s %6s %6s %6s\n", "set", "ranking", "hit@1", "hit@5", "all@5", "MRR@10")
	final := train(data, "", opt)
	for _, d := range data {
		row := func(name string, m devset.Metrics) {
			fmt.Printf("%-18s %-26s %6.3f %6.3f %6.3f %6.3f\n", d.set.Name, name, m.Hit1, m.Hit5, m.All5, m.MRR)
		}
		row("plain BM25", d.bm25)
		row("first stage (before)", d.evaluate(nil))
		if d.train && *loo {
			row("learned, held out (LOO)", d.evaluate(train(data, d.set.Name, opt)))
		}
		label := "learned, trained on"
		if !d.train {
			label = "learned, never trained on"
		}
		row(label, d.evaluate(final))
	}
	if *out == "" {
		return
	}
	src, err := generate(final, data)
	if err != nil {
		fail(err)
	}
	if err := os.WriteFile(*out, src, 0o644); err != nil {
		fail(err)
	}
	fmt.Fprintf(os.Stderr, "wrote %s (%s)\n", *out, time.Since(start).Round(time.Millisecond))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "learn:", err)
	os.Exit(1)
}

// moduleRoot is the nearest directory up from the working directory with a go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the working directory")
		}
		dir = parent
	}
}

// set is a development or training set, and whether the model trains on it.
type set struct {
	devset.Set
	train bool
}

func loadSets(root, corpora string) ([]set, error) {
	dev, err := devset.Load(filepath.Join(root, "catalog", "testdata"), true)
	if err != nil {
		return nil, err
	}
	tl, err := devset.LoadCorpus("toollens-train", "464 RapidAPI tools, 16,893 long scene requests with 1-3 needs (ToolLens train split)",
		filepath.Join(corpora, "toollens_train"), true)
	if err != nil {
		return nil, fmt.Errorf("%w (point -corpora at the directory holding toollens_train/)", err)
	}
	var out []set
	for _, s := range dev {
		out = append(out, set{s, s.Name != "multineed-holdout"})
	}
	return append(out, set{tl, true}), nil
}

// setData is a set's requests with the first stage's candidates and their features, and plain BM25's figures.
type setData struct {
	set
	tools int
	cands [][]ltr.Candidate
	long  []bool // the request is long: only a long one is re-scored
	order ltr.Ranker
	bm25  devset.Metrics
}

func prepare(s set) (*setData, error) {
	tools, err := catalog.ParseFile(s.Catalog)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.Name, err)
	}
	ids := make([]string, len(tools))
	docs := make([]bm25.Doc, len(tools))
	pos := make(map[string]int, len(tools))
	for i := range tools {
		ids[i] = tools[i].ID()
		pos[ids[i]] = i
		docs[i] = bm25.Doc{ID: ids[i], Text: catalog.TextOf(&tools[i]).String()}
	}
	if err := s.Resolve(ids); err != nil {
		return nil, err
	}
	r, err := ltr.Build(s.Catalog)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.Name, err)
	}
	d := &setData{set: s, tools: len(tools), order: r}
	for _, q := range s.Queries {
		cands, long := r.Candidates(q.Text)
		d.cands = append(d.cands, cands)
		d.long = append(d.long, long)
	}
	plain := bm25.New(docs, catalog.Words)
	d.bm25, _ = devset.Score(s.Queries, func(q string) []int {
		var out []int
		for _, h := range plain.Search(q, 10) {
			out = append(out, pos[h.ID])
		}
		return out
	})
	return d, nil
}

// evaluate scores the set ranked by the model w (nil: the first stage's order).
func (d *setData) evaluate(w []float32) devset.Metrics {
	i := 0
	m, _ := devset.Score(d.Queries, func(string) []int {
		cands := append([]ltr.Candidate(nil), d.cands[i]...)
		i++
		if w != nil && d.long[i-1] {
			d.order.Order(cands, w)
		}
		out := make([]int, 0, 10)
		for _, c := range cands[:min(10, len(cands))] {
			out = append(out, c.Doc)
		}
		return out
	})
	return m
}

type trainOptions struct {
	rounds        int
	toollensEvery int
}

// query is one training request: its candidates' features (each scaled by its spread over the training
// candidates) and which of them meet a need.
type query struct {
	x     [][]float64 // by candidate
	first []float64   // the first stage's scores, for ties
	pos   []bool
	set   int
}

// train fits the model on every training set but leave, and returns its weights on the raw features. It is a
// coordinate ascent on the training sets' mean of (hit@1 + MRR@10) / 2, each set weighing the same, from the
// first stage's own ranking (all weight on its score): a step is kept only when it raises that mean, so the
// model never ranks the sets it learns from worse than the first stage did. The score is linear, so a step on
// one weight moves each candidate's score by step × its feature and costs one pass over the candidates.
func train(data []*setData, leave string, opt trainOptions) []float32 {
	nf := len(ltr.FeatureNames)
	var qs []query
	var sizes []int
	var fixed []float64 // per set, what its terse queries score: the first stage's
	for _, d := range data {
		if !d.train || d.set.Name == leave {
			continue
		}
		si := len(sizes)
		sizes = append(sizes, 0)
		fixed = append(fixed, 0)
		for qi, q := range d.Queries {
			if d.set.Name == "toollens-train" && opt.toollensEvery > 1 && qi%opt.toollensEvery != 0 {
				continue
			}
			sizes[si]++ // a terse query counts in its set's mean, but nothing the model does changes it
			if !d.long[qi] {
				fixed[si] += firstStageCredit(d.cands[qi], q)
				continue
			}
			cands := d.cands[qi]
			tq := query{set: si}
			for _, c := range cands {
				meets := false
				for _, nd := range q.Needs {
					for _, t := range nd.Tools {
						meets = meets || t == c.Doc
					}
				}
				x := make([]float64, nf)
				for i, v := range c.X {
					x[i] = float64(v)
				}
				tq.x = append(tq.x, x)
				tq.first = append(tq.first, float64(c.First))
				tq.pos = append(tq.pos, meets)
			}
			qs = append(qs, tq)
		}
	}
	if len(qs) == 0 { // nothing to learn from: the first stage's order
		out := make([]float32, nf)
		out[0] = 1
		return out
	}
	// Scale every feature by its spread, so that one set of step sizes suits all.
	scale := make([]float64, nf)
	var count float64
	mean := make([]float64, nf)
	for _, q := range qs {
		for _, x := range q.x {
			for i, v := range x {
				mean[i] += v
			}
			count++
		}
	}
	for i := range mean {
		mean[i] /= max(count, 1)
	}
	for _, q := range qs {
		for _, x := range q.x {
			for i, v := range x {
				scale[i] += (v - mean[i]) * (v - mean[i])
			}
		}
	}
	for i := range scale {
		if sd := math.Sqrt(scale[i] / max(count, 1)); sd > 1e-9 {
			scale[i] = 1 / sd
		} else {
			scale[i] = 0
		}
	}
	for _, q := range qs {
		for _, x := range q.x {
			for i := range x {
				x[i] *= scale[i]
			}
		}
	}
	w := make([]float64, nf)
	firstFeature := 0 // the first stage's score over the best's: the ranking before the learned one
	w[firstFeature] = 1
	scores := make([][]float64, len(qs))
	for qi, q := range qs {
		scores[qi] = make([]float64, len(q.x))
		for c, x := range q.x {
			for i, v := range x {
				scores[qi][c] += w[i] * v
			}
		}
	}
	objective := func(feature int, step float64) float64 {
		per := append([]float64(nil), fixed...)
		for qi, q := range qs {
			s := scores[qi]
			best := -1
			for c := range q.x {
				if q.pos[c] && (best < 0 || s[c]+step*q.x[c][feature] > s[best]+step*q.x[best][feature]) {
					best = c
				}
			}
			if best < 0 {
				continue
			}
			bs := s[best] + step*q.x[best][feature]
			rank := 1
			for c := range q.x {
				v := s[c] + step*q.x[c][feature]
				if !q.pos[c] && (v > bs || v == bs && q.first[c] > q.first[best]) {
					rank++
				}
			}
			if rank == 1 {
				per[q.set] += 1
			}
			if rank <= 10 {
				per[q.set] += 1 / float64(rank)
			}
		}
		var sum float64
		for i, n := range sizes {
			sum += per[i] / 2 / float64(max(n, 1))
		}
		return sum / float64(max(len(sizes), 1))
	}
	cur := objective(0, 0)
	steps := []float64{0.5, -0.5, 0.2, -0.2, 0.1, -0.1, 0.05, -0.05, 0.02, -0.02}
	for round := 0; round < opt.rounds; round++ {
		improved := false
		for f := 0; f < nf; f++ {
			if scale[f] == 0 {
				continue
			}
			bestStep, bestObj := 0.0, cur
			for _, st := range steps {
				if o := objective(f, st); o > bestObj+1e-6 {
					bestStep, bestObj = st, o
				}
			}
			if bestStep == 0 {
				continue
			}
			w[f] += bestStep
			for qi, q := range qs {
				for c := range q.x {
					scores[qi][c] += bestStep * q.x[c][f]
				}
			}
			cur, improved = bestObj, true
		}
		if !improved {
			break
		}
	}
	out := make([]float32, nf)
	for i := range w {
		out[i] = float32(w[i] * scale[i])
	}
	return out
}

// firstStageCredit is hit@1 + reciprocal rank (to 10) of the first stage's order of cands, as objective counts.
func firstStageCredit(cands []ltr.Candidate, q devset.Query) float64 {
	for r, c := range cands[:min(10, len(cands))] {
		for _, nd := range q.Needs {
			for _, t := range nd.Tools {
				if t == c.Doc {
					if r == 0 {
						return 2
					}
					return 1 / float64(r+1)
				}
			}
		}
	}
	return 0
}

// generate writes the weights as Go source.
func generate(w []float32, data []*setData) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("// Code generated by go run ./internal/learn; DO NOT EDIT.\n\n")
	b.WriteString("package catalog\n\n")
	b.WriteString("// learnedWeights are the learned ranking's weights, one per feature (see rerank.go), fit by internal/learn on:\n")
	for _, d := range data {
		if d.train {
			fmt.Fprintf(&b, "//   - %s: %s\n", d.set.Name, d.About)
		}
	}
	b.WriteString(`//
// ToolLens (toollens-train): the training split of ToolLens from quchangle1/COLT ("Towards Completeness-Oriented
// Tool Retrieval for LLMs", CIKM 2024), commit bbec292c38cabe3fbae098f50cc31b2e9f7e8fca; its tools are RapidAPI
// endpoints from OpenBMB/ToolBench (Apache-2.0), its requests were written by the COLT authors. Research data: it
// is read from outside the repository when training, and only these weights are kept. MetaTool (MIT, Yue Huang)
// and BFCL live (Apache-2.0, ShishirPatil/gorilla): see catalog/testdata.
var learnedWeights = [numFeatures]float32{
`)
	for i, v := range w {
		fmt.Fprintf(&b, "\t%s, // %s\n", formatFloat(v), ltr.FeatureNames[i])
	}
	b.WriteString("}\n")
	return format.Source(b.Bytes())
}

func formatFloat(v float32) string {
	s := fmt.Sprintf("%.6g", v)
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	return s
}
