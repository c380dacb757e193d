// Command learn trains the catalog's learned ranking and writes its weights to catalog/learned_weights.go.
//
//	go run ./internal/learn                  # from the module root; reads ../shared/corpora
//	go run ./internal/learn -corpora DIR -out catalog/learned_weights.go
//	go run ./internal/learn -toolbench StableToolBench/solvable_queries/test_instruction   # as shipped
//	go run ./internal/learn -scan -toolbench …   # what the sets offer a model; trains nothing
//
// Training data: the ToolLens training split (read from the corpora directory, never copied into the repository),
// and the development sets of catalog/testdata: dev, dev-fresh, metatool and bfcl-live (the halves kept here; the
// other halves are held out), multineed-dev. multineed-holdout is never trained on. Two models are fit, one for
// long requests and one for terse ones, each linear in the standardised features of catalog/rerank.go over the
// first stage's best tools of each request: listwise softmax cross-entropy (or -pairwise, RankNet), each training
// set weighing the same, with an L2 pull toward the first stage's own ranking whose strength is chosen from
// -lambdas by the mean leave-one-dataset-out hit@1 (see train). Everything is deterministic: the same data gives
// the same file.
//
// It prints, for every set, plain BM25, the first stage alone (the ranking before the learned one), the model
// trained on every other set (leave one dataset out: the honest figure for a set), and the final model, trained
// on every set, labelled "trained on". A class is re-ranked by default (learnedLong, learnedTerse in the
// generated file) only when, held out, it meets the rule of missesRule on every set: hit@1 at least the first
// stage's and plain BM25's + 0.05, hit@5 at least plain BM25's.
//
// -toolbench DIR (or TOOLSEARCH_TOOLBENCH) adds ToolBench's long requests (see loadToolBench) as one more training
// set; the generated file names every set it was fit on. -sets trains on some sets only, reporting the others as
// never trained on (an experiment: it writes no file).
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/format"
	"math"
	"os"
	"path/filepath"
	"strconv"
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
	toolbench := flag.String("toolbench", os.Getenv("TOOLSEARCH_TOOLBENCH"), "StableToolBench's solvable_queries/test_instruction directory (ToolBench's long requests); empty: not used")
	only := flag.String("sets", "", "train only on these sets (comma-separated names; the others are reported as never trained on); empty: every set but multineed-holdout")
	every := flag.Int("toollens-every", 4, "train on every n-th ToolLens query (all are evaluated)")
	lambdas := flag.String("lambdas", "0.1,0.3,1", "the regularisation strengths tried; leave-one-dataset-out picks one per class")
	iters := flag.Int("iters", 150, "gradient steps per fit")
	flag.Float64Var(&vagueOnly, "vague", 0, "re-rank only the long requests whose best candidate misses at least this share of them")
	doScan := flag.Bool("scan", false, "print what the sets' long requests offer a model (candidate recall, the first stage against plain BM25 by request length, each feature alone) and stop")
	pairwise := flag.Bool("pairwise", false, "fit a pairwise logistic loss instead of the listwise one")
	flag.Parse()

	if vagueOnly > 0 && *out != "" {
		fail(fmt.Errorf("-vague is an experiment the catalog cannot run: use it with -out ''"))
	}
	var grid []float64
	for _, f := range strings.Split(*lambdas, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || v < 0 {
			fail(fmt.Errorf("-lambdas: %q is not a non-negative number", f))
		}
		grid = append(grid, v)
	}
	sets, err := loadSets(root, *corpora, *toolbench)
	if err != nil {
		fail(err)
	}
	if *only != "" {
		if *out != "" {
			fail(fmt.Errorf("-sets is an experiment: use it with -out ''"))
		}
		keep := map[string]bool{}
		for _, n := range strings.Split(*only, ",") {
			keep[strings.TrimSpace(n)] = true
		}
		for i := range sets {
			sets[i].train = sets[i].train && keep[sets[i].Name]
			delete(keep, sets[i].Name)
		}
		if len(keep) > 0 {
			fail(fmt.Errorf("-sets: no training set %v", keep))
		}
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
	if *doScan {
		scan(os.Stdout, data)
		return
	}

	// Per class of request: for each strength, every training set's figures from the model trained on the
	// others; the strength with the best mean of held-out hit@1 over the sets wins, and the class is re-ranked
	// by default only when its held-out hit@1 is at least the first stage's on every set.
	finals := map[bool]model{}
	use := map[bool]bool{}
	for _, terse := range []bool{false, true} {
		class := "long"
		if terse {
			class = "terse"
		}
		bestMean, bestLambda := math.Inf(-1), grid[0]
		var bestLOO map[string]devset.Metrics
		for _, lambda := range grid {
			opt := trainOptions{toollensEvery: *every, lambda: lambda, iters: *iters, terse: terse, pairwise: *pairwise}
			loo := map[string]devset.Metrics{}
			var sum float64
			var n int
			for _, d := range data {
				if !d.train {
					continue
				}
				m := d.evaluate(train(data, d.set.Name, opt).raw(), terse)
				loo[d.set.Name] = m
				sum += m.Hit1
				n++
			}
			fmt.Fprintf(os.Stderr, "%s requests, lambda %g: mean held-out hit@1 %.4f (%s)\n", class, lambda, sum/float64(n), time.Since(start).Round(time.Millisecond))
			if sum/float64(n) > bestMean+1e-9 {
				bestMean, bestLambda, bestLOO = sum/float64(n), lambda, loo
			}
		}
		final := train(data, "", trainOptions{toollensEvery: *every, lambda: bestLambda, iters: *iters, terse: terse, pairwise: *pairwise})
		finals[terse] = final
		use[terse] = true
		fmt.Printf("\n%s requests re-ranked (lambda %g, chosen by mean held-out hit@1)\n", class, bestLambda)
		fmt.Printf("%-18s %-26s %6s %6s %6s %6s\n", "set", "ranking", "hit@1", "hit@5", "all@5", "MRR@10")
		for _, d := range data {
			row := func(name string, m devset.Metrics) {
				fmt.Printf("%-18s %-26s %6.3f %6.3f %6.3f %6.3f\n", d.set.Name, name, m.Hit1, m.Hit5, m.All5, m.MRR)
			}
			today := d.evaluate(nil, terse)
			row("plain BM25", d.bm25)
			row("first stage (today)", today)
			held := d.evaluate(final.raw(), terse) // a set never trained on is held out from the final model
			if d.train {
				held = bestLOO[d.set.Name]
				row("learned, held out (LOO)", held)
				row("learned, trained on", d.evaluate(final.raw(), terse))
			} else {
				row("learned, never trained on", held)
			}
			if why := missesRule(held, today, d.bm25); why != "" {
				use[terse] = false
				fmt.Printf("%-18s not the default: %s\n", d.set.Name, why)
			}
		}
		fmt.Printf("%s requests: learned ranking by default: %v\n", class, use[terse])
	}
	if *out == "" {
		return
	}
	src, err := generate(finals, use, data)
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

func loadSets(root, corpora, toolbench string) ([]set, error) {
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
	out = append(out, set{tl, true})
	if toolbench != "" {
		tb, err := loadToolBench(toolbench)
		if err != nil {
			return nil, err
		}
		out = append(out, set{tb, true})
	}
	return out, nil
}

// bm25Margin is how far above plain BM25's hit@1 the learned ranking must be, held out, on every set to be the
// default.
const bm25Margin = 0.05

// missesRule says why a learned ranking measured held out on a set (never trained on it) may not be the default,
// or "" when it may: its hit@1 must be at least the first stage's and plain BM25's + bm25Margin, and its hit@5 at
// least plain BM25's. A learned default must never lose to what it replaces, nor to the plain baseline.
func missesRule(held, today, bm25 devset.Metrics) string {
	const eps = 1e-9
	var why []string
	if held.Hit1 < today.Hit1-eps {
		why = append(why, fmt.Sprintf("hit@1 %.4f below the first stage's %.4f", held.Hit1, today.Hit1))
	}
	if held.Hit1 < bm25.Hit1+bm25Margin-eps {
		why = append(why, fmt.Sprintf("hit@1 %.3f below plain BM25's + %.2f (%.3f)", held.Hit1, bm25Margin, bm25.Hit1+bm25Margin))
	}
	if held.Hit5 < bm25.Hit5-eps {
		why = append(why, fmt.Sprintf("hit@5 %.3f below plain BM25's %.3f", held.Hit5, bm25.Hit5))
	}
	return strings.Join(why, "; ")
}

// setData is a set's requests with the first stage's candidates and their features, and plain BM25's figures.
type setData struct {
	set
	tools int
	cands [][]ltr.Candidate
	long  []bool // the request is long: only a long one is re-scored
	// missed is the share of the request's weighted words its best candidate does not have (a scene more than a
	// need when high).
	missed []float64
	order  ltr.Ranker
	bm25   devset.Metrics
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
		var covered float32
		for _, c := range cands {
			covered = max(covered, c.X[featureIndex("coverage: any field")])
		}
		d.missed = append(d.missed, float64(1-covered))
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

// vagueOnly: a long request is in the long class only when its best candidate misses at least this share of it.
var vagueOnly float64

// inClass reports whether request qi is of the class (terse, or long) a model is fit for and applied to.
func (d *setData) inClass(qi int, terse bool) bool {
	if terse {
		return !d.long[qi]
	}
	return d.long[qi] && (vagueOnly == 0 || d.missed[qi] >= vagueOnly)
}

// evaluate scores the set with the requests of one class (terse, or long) ranked by the model w, the others by
// the first stage (nil: every request by the first stage).
func (d *setData) evaluate(w []float32, terse bool) devset.Metrics {
	i := 0
	m, _ := devset.Score(d.Queries, func(string) []int {
		cands := append([]ltr.Candidate(nil), d.cands[i]...)
		i++
		if w != nil && d.inClass(i-1, terse) {
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
	toollensEvery int
	lambda        float64 // the L2 pull toward the first stage's own ranking
	iters         int     // gradient steps
	terse         bool    // learn from terse requests, not long ones
	pairwise      bool    // a pairwise logistic loss (gold over each other candidate) instead of the listwise one
}

// firstPrior is the model before any learning, on standardised features: the first stage's score over the best
// one alone, the ranking before the learned one. Regularisation pulls toward it, not toward zero, so a strong pull
// gives back the first stage's order and a weak one lets the data move away from it.
const firstPrior = 3

// query is one training request: its candidates' standardised features and the share of the target each gets
// (1/gold for a candidate meeting a need, else 0), and its weight in the loss.
type query struct {
	x      [][]float64
	target []float64
	weight float64
}

// model is a fitted model: its weights on standardised features, and the training candidates' mean and
// standard deviation of each feature.
type model struct {
	z, mean, std []float64
}

// raw is the model as weights on the raw features, as the catalog scores with them.
func (m model) raw() []float32 {
	out := make([]float32, len(m.z))
	for i := range m.z {
		if m.std[i] > 0 {
			out[i] = float32(m.z[i] / m.std[i])
		}
	}
	return out
}

// train fits the model on every training set but leave, on the requests of one class (long, or terse with
// opt.terse). The loss is listwise: softmax cross-entropy of each request's candidates (the first stage's best
// Depth) against its gold tools, each training set weighing the same in all, plus lambda/2 times the squared
// distance of the weights from firstPrior's. Features are standardised on the training candidates. Plain
// gradient descent, with the step halved when it raises the loss and grown a little when it does not: the loss
// is convex, and everything is deterministic.
func train(data []*setData, leave string, opt trainOptions) model {
	nf := len(ltr.FeatureNames)
	type raw struct {
		x      [][]float32
		target []float64
		set    int
	}
	var rs []raw
	var sizes []int
	for _, d := range data {
		if !d.train || d.set.Name == leave {
			continue
		}
		si := len(sizes)
		sizes = append(sizes, 0)
		for qi, q := range d.Queries {
			if d.set.Name == "toollens-train" && opt.toollensEvery > 1 && qi%opt.toollensEvery != 0 {
				continue
			}
			if !d.inClass(qi, opt.terse) {
				continue
			}
			cands := d.cands[qi]
			r := raw{set: si, target: make([]float64, len(cands))}
			gold := 0
			for c, cd := range cands {
				r.x = append(r.x, cd.X)
				for _, nd := range q.Needs {
					for _, t := range nd.Tools {
						if t == cd.Doc && r.target[c] == 0 {
							r.target[c] = 1
							gold++
						}
					}
				}
			}
			if gold == 0 || gold == len(cands) {
				continue // nothing to order
			}
			for c := range r.target {
				r.target[c] /= float64(gold)
			}
			sizes[si]++
			rs = append(rs, r)
		}
	}
	m := model{z: make([]float64, nf), mean: make([]float64, nf), std: make([]float64, nf)}
	m.z[0], m.std[0] = 1, 1
	if len(rs) == 0 { // nothing to learn from: the first stage's order
		return m
	}
	m.std[0] = 0
	var count float64
	for _, r := range rs {
		for _, x := range r.x {
			for i, v := range x {
				m.mean[i] += float64(v)
			}
			count++
		}
	}
	for i := range m.mean {
		m.mean[i] /= count
	}
	for _, r := range rs {
		for _, x := range r.x {
			for i, v := range x {
				m.std[i] += (float64(v) - m.mean[i]) * (float64(v) - m.mean[i])
			}
		}
	}
	for i := range m.std {
		if sd := math.Sqrt(m.std[i] / count); sd > 1e-6 {
			m.std[i] = sd
		} else {
			m.std[i] = 0
		}
	}
	qs := make([]query, len(rs))
	for qi, r := range rs {
		q := query{target: r.target, weight: 1 / float64(sizes[r.set]) / float64(len(sizes))}
		for _, x := range r.x {
			z := make([]float64, nf)
			for i, v := range x {
				if m.std[i] > 0 {
					z[i] = (float64(v) - m.mean[i]) / m.std[i]
				}
			}
			q.x = append(q.x, z)
		}
		qs[qi] = q
	}
	prior := make([]float64, nf)
	if m.std[0] > 0 {
		prior[0] = firstPrior
	}
	lossGrad := func(w []float64, grad []float64) float64 {
		for i := range grad {
			grad[i] = opt.lambda * (w[i] - prior[i])
		}
		var loss float64
		for i := range w {
			loss += opt.lambda / 2 * (w[i] - prior[i]) * (w[i] - prior[i])
		}
		s := make([]float64, 0, 64)
		for _, q := range qs {
			s = s[:0]
			top := math.Inf(-1)
			for _, x := range q.x {
				var v float64
				for i, xi := range x {
					v += w[i] * xi
				}
				s = append(s, v)
				top = max(top, v)
			}
			if opt.pairwise {
				// RankNet: log(1 + e^-(s_gold - s_other)) for every gold and other candidate, each request's
				// pairs weighing as one request.
				var pairs float64
				for c := range s {
					if q.target[c] > 0 {
						pairs += float64(len(s))
					}
				}
				g := make([]float64, len(s))
				for a := range s {
					if q.target[a] == 0 {
						continue
					}
					for b := range s {
						if q.target[b] > 0 {
							continue
						}
						d := s[a] - s[b]
						loss += q.weight / pairs * softplus(-d)
						p := q.weight / pairs / (1 + math.Exp(d))
						g[a] -= p
						g[b] += p
					}
				}
				for c, x := range q.x {
					if g[c] != 0 {
						for i, xi := range x {
							grad[i] += g[c] * xi
						}
					}
				}
				continue
			}
			var sum float64
			for c := range s {
				s[c] = math.Exp(s[c] - top)
				sum += s[c]
			}
			for c, x := range q.x {
				p := s[c] / sum
				if q.target[c] > 0 {
					loss -= q.weight * q.target[c] * math.Log(max(p, 1e-300))
				}
				if g := q.weight * (p - q.target[c]); g != 0 {
					for i, xi := range x {
						grad[i] += g * xi
					}
				}
			}
		}
		return loss
	}
	w := append([]float64(nil), prior...)
	grad := make([]float64, nf)
	next := make([]float64, nf)
	nextGrad := make([]float64, nf)
	loss := lossGrad(w, grad)
	step := 1.0
	for range opt.iters {
		for i := range w {
			next[i] = w[i] - step*grad[i]
			if m.std[i] == 0 {
				next[i] = 0
			}
		}
		l := lossGrad(next, nextGrad)
		if l > loss {
			step /= 2
			continue
		}
		w, next = next, w
		grad, nextGrad = nextGrad, grad
		loss = l
		step *= 1.2
	}
	m.z = w
	return m
}

// generate writes the models as Go source.
func generate(finals map[bool]model, use map[bool]bool, data []*setData) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("// Code generated by go run ./internal/learn; DO NOT EDIT.\n\n")
	b.WriteString("package catalog\n\n")
	b.WriteString("// The learned ranking's models (see rerank.go), one for long requests and one for terse ones, fit by\n")
	b.WriteString("// internal/learn on:\n")
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
`)
	for _, d := range data {
		if d.train && d.set.Name == "toolbench" {
			b.WriteString(`//
// ToolBench (toolbench): the solvable requests of StableToolBench (THUNLP-MT/StableToolBench, Apache-2.0, commit
// aa4ed9f4737ad98bd706663f01d63623c3427812, solvable_queries/test_instruction), which are ToolBench's requests
// and RapidAPI tools (OpenBMB/ToolBench, Apache-2.0). Read from outside the repository when training; only these
// weights are kept.
`)
		}
	}
	b.WriteString(`//
// Each model is weights on standardised features (minus the training candidates' mean, over their standard
// deviation; a feature with no spread has standard deviation 0 and no weight). learnedLong and learnedTerse: the
// class is re-ranked by default only when the model trained without a set ranks that set, for every set, at
// least as well as the first stage (hit@1) and plain BM25 + 0.05 (hit@1), and plain BM25 (hit@5).
`)
	fmt.Fprintf(&b, "const (\n\tlearnedLong = %v\n\tlearnedTerse = %v\n)\n\n", use[false], use[true])
	write := func(name string, v []float64) {
		fmt.Fprintf(&b, "var %s = [numFeatures]float32{\n", name)
		for i, x := range v {
			fmt.Fprintf(&b, "\t%s, // %s\n", formatFloat(float32(x)), ltr.FeatureNames[i])
		}
		b.WriteString("}\n\n")
	}
	write("learnedZWeights", finals[false].z)
	write("learnedMean", finals[false].mean)
	write("learnedStd", finals[false].std)
	write("learnedTerseZWeights", finals[true].z)
	write("learnedTerseMean", finals[true].mean)
	write("learnedTerseStd", finals[true].std)
	return format.Source(b.Bytes())
}

func formatFloat(v float32) string {
	s := fmt.Sprintf("%.6g", v)
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	return s
}

// softplus is log(1 + e^x), without overflow.
func softplus(x float64) float64 {
	if x > 30 {
		return x
	}
	return math.Log1p(math.Exp(x))
}
