package catalog

import (
	"cmp"
	"hash/maphash"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/sahilm/fuzzy"

	"github.com/toolsearch/toolsearch/internal/textcut"
)

// The fields of a tool the ranker reads. The name is split like any text ("browser_take_screenshot" → browser,
// take, screenshot), so it takes part in BM25F with the highest boost.
const (
	fieldName = iota
	fieldLabel
	fieldSource // sourceName: "github", "slack"; agents name the service they want
	fieldDescription
	fieldParams // parameter names and descriptions, bounded
	numFields
)

// Bounds on a query, so that a model pasting a page into search costs no more than a long question.
const (
	maxQueryBytes  = 2048
	maxQueryGroups = 32
	maxPrefixTerms = 8
	maxFuzzyTerms  = 4
)

// rankConfig holds the ranker's constants. It is a value, not package state, so that the quality test can
// measure variants side by side; New always uses defaultRankConfig.
type rankConfig struct {
	k1    float32
	boost [numFields]float32 // BM25F field weights
	b     [numFields]float32 // BM25F length normalisation per field

	synonymWeight float32 // a synonym counts this much of the word itself
	prefixWeight  float32 // a word the query word is a prefix of ("calend" → calendar), scaled by length ratio
	fuzzyWeight   float32 // a typo-corrected word ("sceenshot" → screenshot)

	coverage float32 // bonus for matching more of the query's distinct words
	// Extra weight when a query word appears as written, unstemmed, in the tool's name ("issues" in list_issues),
	// and in its label, source name or description: stemming joins "discounts" and "discounted", "results" and
	// "result", and among tools that share the stem, the one with the user's own word is likelier the one meant.
	// Parameter text is left out: its words follow the API's naming, not the tool's purpose.
	surface, textSurface float32

	lightVerb float32 // factor on light verbs of the query ("make", "take", "put")

	// coverageWords: a query with more matchable words than this gets a proportionally weaker coverage bonus, and
	// a request with more content words than this (matchable or not) weighs its words by idf for coverage.
	coverageWords float32
	idfCoverage   bool // words count towards coverage by their idf, not one each
	// proseByMatched is the earlier rule, kept as an ablation: a request is prose when more than coverageWords of
	// its words match some tool, so a long request to a catalog that knows few of its words counted as terse.
	proseByMatched bool

	// A request of more than longRequestWords content words is ranked as a request, not as keywords (see
	// parsedQuery.long): its field weights are longBoost, so that one of its many words found in a tool's name
	// does not outweigh a tool whose description and parameters match much more of it; numbers and quoted
	// values ("48.8567", 'Alice-One-one-One') count longHint of a word, as weak hints; and a tool whose name's
	// action (create, list, delete ...) is one the request asks for gets actionBonus more, which decides between
	// look-alikes such as create_pull_request and list_pull_requests.
	longBoost   [numFields]float32
	longHint    float32
	actionBonus float32
	// shortActions applies actionBonus to terse queries too.
	shortActions bool

	// pairWeight: adjacent content words of a tool's name, label, source name, description and parameter text are
	// indexed as pairs ("postal code", "round trip"), and two adjacent words of a request count as a weak bonus
	// term, this much of a word, towards the tools that have them side by side or joined ("roundtrip"); 0 indexes
	// no pairs. Pairs are read in long requests only, unless shortPairs.
	pairWeight float32
	shortPairs bool
	pairFields uint8 // bit f: field f's pairs are indexed
	noJoined   bool  // ablation: a request's pair does not match the two words joined

	noSynonyms, noPrefix, noFuzzy, noAbbreviations, noFraming bool // ablations for the quality test
	// noPrune scores every matched tool (see scoreQuery), for the pruning tests to compare with.
	noPrune bool
	// singleHint is how much a single letter or digit of a request counts, of a word, as a hint; 0 indexes none.
	singleHint float32
	// weights are the learned ranking's for long requests (see rerank), terseWeights for terse ones; nil ranks
	// that class by the first stage alone, as before it.
	weights, terseWeights *[numFeatures]float32
	// prunePostings: a query that reads fewer postings than this (any query of a small catalog) is scored in full;
	// looking for a cut would cost about what it saves. The pruning tests lower it.
	prunePostings int
	// features keeps what the learned ranking's features read (each posting's fields and count, each tool's field
	// lengths) even without weights, for the trainer; see keepsFeatures.
	features bool
	// blockDocs: a catalog of more than blockAbove tools is scored blockDocs tools at a time (see firstStage), so
	// that the running scores of a block, 12 bytes a tool, stay in a core's cache (0: all at once). Below
	// blockAbove the scores of every tool fit the shared cache, and a pass per block cost more than it saved
	// (BenchmarkSearchScale: 2.7× plain BM25 at 100,000 tools blocked, 2.45× not). The tests lower both.
	blockDocs, blockAbove int
}

// keepsFeatures reports whether the index keeps what the learned ranking's features read: only when some class of
// request is re-ranked, or for the trainer. Without, the index is 2 bytes a posting and 11 a tool smaller.
func (cfg *rankConfig) keepsFeatures() bool {
	return cfg.weights != nil || cfg.terseWeights != nil || cfg.features
}

func defaultRankConfig() rankConfig {
	return rankConfig{
		k1:            0.9,
		boost:         [numFields]float32{fieldName: 3, fieldLabel: 2, fieldSource: 1.5, fieldDescription: 1, fieldParams: 0.5},
		b:             [numFields]float32{fieldName: 0.5, fieldLabel: 0.5, fieldSource: 0, fieldDescription: 0.75, fieldParams: 0.75},
		synonymWeight: 0.5,
		prefixWeight:  0.6,
		fuzzyWeight:   0.7,
		coverage:      4,
		coverageWords: 3,
		idfCoverage:   true,
		surface:       0.25,
		textSurface:   0.25,
		lightVerb:     0.5,
		longBoost:     [numFields]float32{fieldName: 3, fieldLabel: 2, fieldSource: 1.5, fieldDescription: 1, fieldParams: 0.5},
		longHint:      1,
		actionBonus:   0.005,
		prunePostings: 4096,
		blockDocs:     1 << 15,
		blockAbove:    1 << 18,
		pairFields:    1<<numFields - 1,
		weights:       learnedDefault(learnedLong, &learnedZWeights, &learnedStd),
		terseWeights:  learnedDefault(learnedTerse, &learnedTerseZWeights, &learnedTerseStd),
		singleHint:    0.3,
	}
}

// noTerm is a term id no term has.
const noTerm = math.MaxUint32

// surfacePrefix marks the unstemmed name terms, textSurfacePrefix the unstemmed words of the label, source name
// and description, pairPrefix the pairs of adjacent stems ("+postal cod"); no analyzed word starts with any.
const (
	surfacePrefix     = "="
	textSurfacePrefix = "~"
	pairPrefix        = "+"
	// singlePrefix marks a single letter or digit of a tool's text ("#b"), which a request's single letter or
	// digit matches as a hint.
	singlePrefix = "#"
)

// pairKey is the term of two adjacent stems.
func pairKey(a, b string) string { return pairPrefix + a + " " + b }

// pairable reports a word that can be half of a pair: a word of letters. A number next to a word ("48 hours",
// an id in a tool name) is a value, not part of a phrase, and pairs of characters of unspaced scripts are
// already pairs.
func pairable(w string) bool {
	r, _ := utf8.DecodeRuneInString(w)
	return !isNumber(w) && !isUnspaced(r)
}

// docText is what the index reads of one tool.
type docText struct {
	fields [numFields]string
	name   string // exact-match keys, lowercased
	id     string
}

// index is immutable once built and safe for concurrent use; per-query buffers come from a pool.
type index struct {
	cfg      rankConfig
	n        int
	terms    termTable // term → id
	vocab    []string
	byString []uint32          // term ids sorted by term, for prefix expansion
	byFirst  map[byte][]string // surface words (unstemmed, as written in tools) by first letter, for typo fixes
	stemOf   map[string]uint32 // surface word → its term
	// cols holds every term's postings, term after term; term t's are cols[start[t]:start[t+1]].
	cols  columns
	start []uint32
	idf   []float32
	// maxW is the greatest posting.w of each term's list, for the bounds of pruning (see scoreQuery); a surface
	// term's is kept when its postings are folded into its stem's.
	maxW     [][2]float32
	synonyms map[string][]uint32 // stem → ids of its synonyms present in the vocabulary
	// exact holds every tool's lowercased name and id, sorted (by key, then tool): two keys a tool in 24 bytes
	// each, where a map of slices took 100 to 160 bytes a tool depending on how full its table happened to be.
	exact []exactKey
	// inlineName and inlineText give, for a stem, the "=word" and "~word" terms of its main form (the one most
	// tools write), whose postings are folded into the stem's (posting.name, posting.text) and are empty
	// themselves; noTerm where there is none. Most query words are written in the main form of their stem, and
	// reading their surface bonuses from the stem's list halves what such a word reads; other forms keep lists
	// of their own.
	inlineName, inlineText []uint32
	// firstPair is the id of the first pair term: pair terms come after every other, and their postings after
	// every other's in cols, which holds no name and text weights for them (a pair has no surface bonus).
	firstPair uint32
	actions   []uint16 // per tool, its toolAction
	// lens are each tool's field lengths in words, and nameTerms how many distinct terms its name has, for the
	// learned ranking's features; avgLen is the mean of a tool's total length.
	lens      [][numFields]uint16
	nameTerms []uint8
	avgLen    float32
	// For the tie-break (see tieKey): nameStops has bit d set when tool d's name has a stop word, and namePairs
	// are the pairs of adjacent words of those names one of which is a stop word, by tool; stopIDs numbers the
	// stop words names have (a pair's word is its term, or stopKey|its number).
	nameStops []uint64
	namePairs []namePair
	stopIDs   map[string]uint32
	scratch   sync.Pool
}

func buildIndex(docs []docText, cfg rankConfig) *index {
	ix := &index{
		cfg:       cfg,
		n:         len(docs),
		exact:     make([]exactKey, 0, 2*len(docs)),
		synonyms:  make(map[string][]uint32),
		byFirst:   make(map[byte][]string),
		stemOf:    make(map[string]uint32),
		nameStops: make([]uint64, (len(docs)+63)/64), // one bit a tool
		stopIDs:   make(map[string]uint32),
	}
	type entry struct {
		term uint32
		tf   [numFields]uint16
	}
	var (
		flat    = make([]entry, 0, 48*len(docs))       // about the terms of a tool with a one-paragraph description
		ends    = make([]int, len(docs))               // flat[ends[d-1]:ends[d]] are the entries of tool d
		lens    = make([][numFields]uint32, len(docs)) // in half words: see halfWords
		slot    []int32                                // term id → its entry in the current tool, or -1
		sumLens [numFields]float64
		// Pairs get ids of their own while building, marked with pairBit, and the ids after every other term's
		// once all are known (see index.firstPair).
		pairs     = make(map[string]uint32)
		pairVocab []string
		pairSlot  []int32
		joined    []joinedName // long name words of letters only, split once the vocabulary is known
	)
	const pairBit = 1 << 31
	// The closures are made once, not per field: f is the field being read. A term looked up with a prefix is
	// spelled in buf, and made a string only when it is new.
	var (
		f   int
		buf []byte
	)
	count := func(prefix, w string) uint32 {
		var id uint32
		var ok bool
		if prefix == "" {
			id, ok = ix.term(w)
		} else {
			buf = append(append(buf[:0], prefix...), w...)
			id, ok = ix.terms.findBytes(ix.vocab, buf)
		}
		if !ok {
			t := w
			if prefix != "" {
				t = string(buf)
			}
			id = ix.addTerm(t)
			slot = append(slot, -1)
		}
		if slot[id] < 0 {
			slot[id] = int32(len(flat))
			flat = append(flat, entry{term: id})
		}
		if e := &flat[slot[id]]; e.tf[f] < math.MaxUint16 {
			e.tf[f]++
		}
		return id
	}
	countPair := func(a, b string) {
		buf = append(append(append(append(buf[:0], pairPrefix...), a...), ' '), b...) // pairKey(a, b)
		local, ok := pairs[string(buf)]
		if !ok {
			key := string(buf)
			local = uint32(len(pairVocab))
			pairs[key] = local
			pairVocab = append(pairVocab, key)
			pairSlot = append(pairSlot, -1)
		}
		if pairSlot[local] < 0 {
			pairSlot[local] = int32(len(flat))
			flat = append(flat, entry{term: local | pairBit})
		}
		if e := &flat[pairSlot[local]]; e.tf[f] < math.MaxUint16 {
			e.tf[f]++
		}
	}
	for d := range docs {
		start := len(flat)
		for f = 0; f < numFields; f++ {
			// Besides its stem, a word of the name, label, source name or description is indexed as written
			// ("=word" in the name, "~word" elsewhere; see rankConfig.surface).
			var prefix string
			switch f {
			case fieldName:
				prefix = surfacePrefix
			case fieldLabel, fieldSource, fieldDescription:
				prefix = textSurfacePrefix
			}
			prev := ""
			var inName nameWord // the name's word before, for namePairs
			splitTokens(docs[d].fields[f], 1, func(w string) {
				if len(w) == 1 {
					// A single letter or digit ("b" of add(a, b), "3" of "3 days") is indexed on its own, for the
					// requests that name it (see singlePrefix); it is no word, pair or length of the field.
					if singleHint(w) && cfg.singleHint > 0 {
						count(singlePrefix, w)
					}
					return
				}
				t := analyze(w)
				if t == "" {
					if f == fieldName && isStopWord(w) {
						ix.nameStops[d/64] |= 1 << (d % 64)
						ix.addNameWord(uint32(d), &inName, ix.stopKey(w), true)
					}
					return
				}
				if cfg.pairWeight > 0 && cfg.pairFields&(1<<f) != 0 {
					switch {
					case !pairable(w):
						prev = ""
					default:
						if prev != "" {
							countPair(prev, t)
						}
						prev = t
					}
				}
				id := count("", t)
				if f == fieldName {
					ix.addNameWord(uint32(d), &inName, id, false)
				}
				if _, ok := ix.stemOf[w]; !ok && len(w) >= 3 && isASCIILetters(w) {
					ix.stemOf[w] = id
					ix.byFirst[w[0]] = append(ix.byFirst[w[0]], w)
				}
				if prefix != "" {
					count(prefix, w)
				}
				lens[d][f] += halfWords(w)
				if f == fieldName && len(w) >= minJoinedName && isASCIILetters(w) {
					joined = append(joined, joinedName{uint32(d), w})
				}
			})
		}
		for i := start; i < len(flat); i++ {
			if t := flat[i].term; t&pairBit != 0 {
				pairSlot[t&^pairBit] = -1
			} else {
				slot[t] = -1
			}
		}
		ends[d] = len(flat)
		for f := range sumLens {
			sumLens[f] += float64(lens[d][f]) / 2
		}
		ix.actions = append(ix.actions, toolAction(docs[d].fields[fieldName]))
		ix.exact = append(ix.exact, exactKey{docs[d].name, uint32(d)})
		if docs[d].id != docs[d].name {
			ix.exact = append(ix.exact, exactKey{docs[d].id, uint32(d)})
		}
	}

	slices.SortFunc(ix.exact, func(a, b exactKey) int {
		if c := strings.Compare(a.key, b.key); c != 0 {
			return c
		}
		return cmp.Compare(a.doc, b.doc)
	})

	// A name written as one run of letters ("getplatformlist") is also indexed by the words it is made of, as the
	// catalog's own text spells them (get, platform, list), so that a request in words finds it.
	var extra [][]entry // by tool
	for _, j := range joined {
		parts := ix.splitName(j.word)
		if len(parts) < 2 {
			continue
		}
		if extra == nil {
			extra = make([][]entry, len(docs))
		}
		lo := 0
		if j.doc > 0 {
			lo = ends[j.doc-1]
		}
	parts:
		for _, p := range parts {
			t := analyze(p)
			if t == "" {
				continue
			}
			id, ok := ix.term(t)
			if !ok {
				id = ix.addTerm(t)
			}
			for i := lo; i < ends[j.doc]; i++ {
				if flat[i].term == id {
					if flat[i].tf[fieldName] < math.MaxUint16 {
						flat[i].tf[fieldName]++
					}
					continue parts
				}
			}
			for i := range extra[j.doc] {
				if extra[j.doc][i].term == id {
					continue parts
				}
			}
			e := entry{term: id}
			e.tf[fieldName] = 1
			extra[j.doc] = append(extra[j.doc], e)
		}
	}
	if extra != nil {
		// The split words join their tools' entries, which stay contiguous per tool.
		merged := make([]entry, 0, len(flat)+len(joined))
		start := 0
		for d := range docs {
			merged = append(merged, flat[start:ends[d]]...)
			merged = append(merged, extra[d]...)
			start = ends[d]
			ends[d] = len(merged)
		}
		flat = merged
	}

	ix.firstPair = uint32(len(ix.vocab))
	for _, key := range pairVocab {
		ix.addTerm(key)
	}
	for i := range flat {
		if t := flat[i].term; t&pairBit != 0 {
			flat[i].term = ix.firstPair + t&^pairBit
		}
	}
	df := make([]uint32, len(ix.vocab))
	for _, e := range flat {
		df[e.term]++
	}
	ix.idf = make([]float32, len(ix.vocab))
	n := float64(len(docs))
	for t, c := range df {
		// The BM25 idf with +1 inside the log: never negative, so a word in every tool still counts a little.
		ix.idf[t] = float32(math.Log(1 + (n-float64(c)+0.5)/(float64(c)+0.5)))
	}
	var avg [numFields]float32
	for f := range avg {
		avg[f] = float32(sumLens[f] / math.Max(n, 1))
		if avg[f] == 0 {
			avg[f] = 1
		}
	}
	feats := cfg.keepsFeatures()
	if feats {
		ix.lens = make([][numFields]uint16, len(docs))
		ix.nameTerms = make([]uint8, len(docs))
		var sumAll float64
		for d := range docs {
			for f := range lens[d] {
				ix.lens[d][f] = uint16(min(lens[d][f]/2, math.MaxUint16))
				sumAll += float64(ix.lens[d][f])
			}
		}
		ix.avgLen = float32(max(sumAll/math.Max(n, 1), 1))
	}

	// The postings go straight into their columns, each term's at its place, counted above: a folded surface
	// term (see inlineSurfaces) has no list, its weights go into its stem's name or text column instead.
	folded := ix.inlineSurfaces(df)
	ix.start = make([]uint32, len(ix.vocab)+1)
	total := uint32(0)
	for t, c := range df {
		ix.start[t] = total
		if folded[t] == noTerm {
			total += c
		}
	}
	ix.start[len(ix.vocab)] = total
	words := ix.start[ix.firstPair] // the postings of the terms before the pairs, the only ones with name and text
	same := cfg.longBoost == cfg.boost
	cols := columns{doc: make([]uint32, total), w: make([]float32, total), name: make([]float32, words),
		text: make([]float32, words)}
	cols.long = cols.w
	if !same {
		cols.long = make([]float32, total)
	}
	if feats {
		cols.fields, cols.tf = make([]uint8, total), make([]uint8, total)
	}
	next := df // reused: term → where its next posting goes
	for t := range next {
		next[t] = ix.start[t]
	}
	ix.maxW = make([][2]float32, len(ix.vocab))
	weigh := func(d int, e *entry) (w [2]float32, fields uint8, all int) {
		var tf, tfLong float32
		for f := 0; f < numFields; f++ {
			if e.tf[f] == 0 {
				continue
			}
			fields |= 1 << f
			all += int(e.tf[f])
			norm := 1 - cfg.b[f] + cfg.b[f]*(float32(lens[d][f])/2)/avg[f]
			tf += cfg.boost[f] * float32(e.tf[f]) / norm
			tfLong += cfg.longBoost[f] * float32(e.tf[f]) / norm
		}
		w = [2]float32{tf * (cfg.k1 + 1) / (cfg.k1 + tf), tfLong * (cfg.k1 + 1) / (cfg.k1 + tfLong)}
		ix.maxW[e.term][0] = max(ix.maxW[e.term][0], w[0])
		ix.maxW[e.term][1] = max(ix.maxW[e.term][1], w[1])
		return w, fields, all
	}
	start := 0
	for d := range docs {
		// The tool's own terms first, then its folded surface terms into their stems' postings of this tool,
		// just written (a word indexed as written is indexed by its stem too).
		for i := range flat[start:ends[d]] {
			e := &flat[start+i]
			if feats && e.tf[fieldName] > 0 && e.term < ix.firstPair && !isSurfaceTerm(ix.vocab[e.term]) && ix.nameTerms[d] < math.MaxUint8 {
				ix.nameTerms[d]++
			}
			if folded[e.term] != noTerm {
				continue
			}
			w, fields, all := weigh(d, e)
			at := next[e.term]
			next[e.term]++
			cols.doc[at], cols.w[at] = uint32(d), w[0]
			if !same {
				cols.long[at] = w[1]
			}
			if feats {
				cols.fields[at], cols.tf[at] = fields, uint8(min(all, math.MaxUint8))
			}
		}
		for i := range flat[start:ends[d]] {
			e := &flat[start+i]
			stem := folded[e.term]
			if stem == noTerm {
				continue
			}
			w, _, _ := weigh(d, e)
			at := next[stem] - 1
			if next[stem] == ix.start[stem] || cols.doc[at] != uint32(d) {
				panic("catalog: a surface term's tool lacks its stem") // the invariant above; never reached
			}
			if ix.vocab[e.term][0] == surfacePrefix[0] {
				cols.name[at] = w[0]
			} else {
				cols.text[at] = w[0]
			}
		}
		start = ends[d]
	}
	ix.cols = cols

	ix.byString = make([]uint32, len(ix.vocab))
	for i := range ix.byString {
		ix.byString[i] = uint32(i)
	}
	sort.Slice(ix.byString, func(i, j int) bool { return ix.vocab[ix.byString[i]] < ix.vocab[ix.byString[j]] })
	for _, words := range ix.byFirst {
		// By length, then as strings: typo fixes read only the lengths within k of the query word's
		// (byLength), and map iteration and tool order must not change which fix wins a tie.
		slices.SortFunc(words, func(a, b string) int { return cmp.Or(cmp.Compare(len(a), len(b)), strings.Compare(a, b)) })
	}
	for _, line := range strings.Split(synonymGroups, "\n") {
		group := tokenize(line)
		for _, s := range group {
			for _, o := range group {
				if id, ok := ix.term(o); ok && o != s && !containsID(ix.synonyms[s], id) {
					ix.synonyms[s] = append(ix.synonyms[s], id)
				}
			}
		}
	}
	return ix
}

// minJoinedName is the shortest name word that is looked at as words written together: shorter ones are mostly
// words of their own.
const minJoinedName = 8

// joinedName is a long name word of a tool.
type joinedName struct {
	doc  uint32
	word string
}

// splitName returns the words a long name word is made of (see segment), or nil for a word some tool's label,
// source name or description writes as it is ("screenshot", "database"): that is a word, not words run together.
func (ix *index) splitName(w string) []string {
	if _, prose := ix.term(textSurfacePrefix + w); prose {
		return nil
	}
	return ix.segment(w)
}

// segment splits w into words of at least three letters that the catalog's text has as words of their own, the
// fewest such words, or returns nil when it cannot (or w is one of them itself). Among splits of as many words it
// keeps the one whose first word is longest, so that the choice does not depend on the order of anything.
func (ix *index) segment(w string) []string {
	known := func(p string) bool {
		_, ok := ix.stemOf[p]
		return ok && p != w
	}
	n := len(w)
	// best[i]: the fewest words w[i:] splits into (0: none), next[i] where the first of them ends.
	best := make([]int, n+1)
	next := make([]int, n+1)
	for i := n - 3; i >= 0; i-- {
		for j := n; j >= i+3; j-- { // the longest first word first: ties keep it
			if j < n && best[j] == 0 || !known(w[i:j]) {
				continue
			}
			if c := 1 + best[j]; best[i] == 0 || c < best[i] {
				best[i], next[i] = c, j
			}
		}
	}
	if best[0] < 2 {
		return nil
	}
	var out []string
	for i := 0; i < n; i = next[i] {
		out = append(out, w[i:next[i]])
	}
	return out
}

// inlineSurfaces picks the main form of every stem (the one most tools write, see index.inlineName) from the
// terms' counts, and returns, for each term, the stem it is folded into, or noTerm.
func (ix *index) inlineSurfaces(df []uint32) []uint32 {
	ix.inlineName = make([]uint32, len(ix.vocab))
	ix.inlineText = make([]uint32, len(ix.vocab))
	folded := make([]uint32, len(ix.vocab))
	for i := range ix.inlineName {
		ix.inlineName[i], ix.inlineText[i], folded[i] = noTerm, noTerm, noTerm
	}
	type form struct {
		word  string
		count uint32
	}
	best := make(map[uint32]form)
	for id, v := range ix.vocab {
		if !isSurfaceTerm(v) {
			continue
		}
		w := v[1:]
		stem, ok := ix.term(analyze(w))
		if !ok {
			continue
		}
		count := df[id]
		if other, ok := ix.term(otherSurface(v)); ok {
			count += df[other]
		}
		if b, ok := best[stem]; !ok || count > b.count || count == b.count && w < b.word {
			best[stem] = form{w, count}
		}
	}
	for stem, f := range best {
		if id, ok := ix.term(surfacePrefix + f.word); ok {
			ix.inlineName[stem], folded[id] = id, stem
		}
		if id, ok := ix.term(textSurfacePrefix + f.word); ok {
			ix.inlineText[stem], folded[id] = id, stem
		}
	}
	return folded
}

// columns are the postings, one (term, tool) pair each, as parallel arrays, so that a pass over a list reads
// only what it uses: a pass that looks for tools found before reads only doc, and a word with no folded bonus
// reads doc and w. w is the query-independent part of BM25F, the saturated weighted term frequency tf/(k1+tf),
// computed once at build time so that a query only multiplies and adds; long is the same for a long request
// (rankConfig.longBoost), and is w itself when the long-request weights are the terse ones. In a stem's list,
// name and text are the w of the tool's postings of the stem's main form as written ("=word" and "~word", see
// index.inlineName), so that a query word written in that form reads one list instead of three.
type columns struct {
	doc        []uint32
	w, long    []float32
	name, text []float32
	// fields (bit f: the term is in field f) and tf (its count over all fields, at most 255) are read only by
	// the learned ranking's features, and kept only when it is on (see rankConfig.keepsFeatures).
	fields, tf []uint8
}

// plist is one term's postings.
type plist columns

// weights are the weights a query of mode reads (see parsedQuery.mode).
func (l *plist) weights(mode int) []float32 {
	if mode == 1 {
		return l.long[:len(l.doc)]
	}
	return l.w[:len(l.doc)]
}

// list returns term t's postings.
func (ix *index) list(t uint32) plist {
	lo, hi := ix.start[t], ix.start[t+1]
	c := &ix.cols
	l := plist{doc: c.doc[lo:hi:hi], w: c.w[lo:hi:hi], long: c.long[lo:hi:hi]}
	if t < ix.firstPair {
		l.name, l.text = c.name[lo:hi:hi], c.text[lo:hi:hi]
	}
	return l
}

// termTable finds a term's id: open addressing over 8-byte slots (the id, and half of the term's hash to compare
// first), the terms themselves being the vocabulary's strings. A map[string]uint32 takes 24 bytes a slot, holds
// no pointers the collector need not scan, and at a million tools had grown to two slots a term.
type termTable struct {
	seed  maphash.Seed
	slots []uint64 // id+1 in the low half (0: empty), the hash's high half in the high one
	used  int
}

func (tt *termTable) find(vocab []string, key string) (uint32, bool) {
	if len(tt.slots) == 0 {
		return 0, false
	}
	h := maphash.String(tt.seed, key)
	mask := uint64(len(tt.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		sl := tt.slots[i]
		if sl == 0 {
			return 0, false
		}
		if sl>>32 == h>>32 && vocab[uint32(sl)-1] == key {
			return uint32(sl) - 1, true
		}
	}
}

// findBytes is find of a term spelled in a buffer, without making it a string.
func (tt *termTable) findBytes(vocab []string, key []byte) (uint32, bool) {
	if len(tt.slots) == 0 {
		return 0, false
	}
	h := maphash.Bytes(tt.seed, key)
	mask := uint64(len(tt.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		sl := tt.slots[i]
		if sl == 0 {
			return 0, false
		}
		if sl>>32 == h>>32 && vocab[uint32(sl)-1] == string(key) {
			return uint32(sl) - 1, true
		}
	}
}

// put adds term id, which find does not have; the table doubles past three quarters full.
func (tt *termTable) put(vocab []string, id uint32) {
	if 4*(tt.used+1) > 3*len(tt.slots) {
		old := tt.slots
		if len(old) == 0 {
			tt.seed = maphash.MakeSeed()
		}
		tt.slots = make([]uint64, max(16, 2*len(old)))
		for _, sl := range old {
			if sl != 0 {
				tt.place(maphash.String(tt.seed, vocab[uint32(sl)-1]), uint32(sl)-1)
			}
		}
	}
	tt.place(maphash.String(tt.seed, vocab[id]), id)
	tt.used++
}

func (tt *termTable) place(h uint64, id uint32) {
	mask := uint64(len(tt.slots) - 1)
	i := h & mask
	for tt.slots[i] != 0 {
		i = (i + 1) & mask
	}
	tt.slots[i] = h>>32<<32 | uint64(id+1)
}

// term returns the id of term t.
func (ix *index) term(t string) (uint32, bool) { return ix.terms.find(ix.vocab, t) }

// addTerm gives term t, which the index does not have yet, the next id.
func (ix *index) addTerm(t string) uint32 {
	id := uint32(len(ix.vocab))
	ix.vocab = append(ix.vocab, t)
	ix.terms.put(ix.vocab, id)
	return id
}

// exactKey is a lowercased name or id of a tool.
type exactKey struct {
	key string
	doc uint32
}

// named returns the tools whose lowercased name or id is key, in index order.
func (ix *index) named(key string) []exactKey {
	i := sort.Search(len(ix.exact), func(i int) bool { return ix.exact[i].key >= key })
	j := i
	for j < len(ix.exact) && ix.exact[j].key == key {
		j++
	}
	return ix.exact[i:j]
}

// listIn returns term t's postings of the tools [lo, hi) (hi 0: all of them).
func (ix *index) listIn(t, lo, hi uint32) plist {
	l := ix.list(t)
	if hi == 0 {
		return l
	}
	i, _ := slices.BinarySearch(l.doc, lo)
	j, _ := slices.BinarySearch(l.doc[i:], hi)
	j += i
	out := plist{doc: l.doc[i:j:j], w: l.w[i:j:j], long: l.long[i:j:j]}
	if l.name != nil {
		out.name, out.text = l.name[i:j:j], l.text[i:j:j]
	}
	return out
}

// listLen is how many tools term t has.
func (ix *index) listLen(t uint32) int { return int(ix.start[t+1] - ix.start[t]) }

// isSurfaceTerm reports a term of a word as written ("=word", "~word"), not a stem.
func isSurfaceTerm(v string) bool {
	return strings.HasPrefix(v, surfacePrefix) || strings.HasPrefix(v, textSurfacePrefix)
}

// otherSurface turns "=word" into "~word" and back.
func otherSurface(v string) string {
	if strings.HasPrefix(v, surfacePrefix) {
		return textSurfacePrefix + v[1:]
	}
	return surfacePrefix + v[1:]
}

// halfWords is how much a token adds to its field's length, in half words: a word counts one, a pair of
// characters of an unspaced script half, since a run of n characters gives n-1 pairs but holds about n/2 words
// (most Chinese and Japanese words have two characters). Counting every pair in full would make a Chinese
// description look twice as long as it is, and shift the length normalisation of every other tool.
func halfWords(w string) uint32 {
	if r, _ := utf8.DecodeRuneInString(w); isUnspaced(r) {
		return 1
	}
	return 2
}

func containsID(ids []uint32, id uint32) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// expansion is one index term a query word stands for, with how much it counts.
type expansion struct {
	term uint32
	w    float32
}

// queryGroup is one distinct query word and everything it expands to. A tool scores the best expansion of each
// group, never the sum, so a word with many synonyms does not outweigh a word with none.
type queryGroup struct {
	word      string // analyzed
	raw       string // as written, lowercased
	exps      []expansion
	hint      bool   // a weak signal that neither counts as a matched word nor as a word to match
	corrected bool   // exps are typo fixes
	surface   uint32 // the "=word" term of the unstemmed query word, when some tool name has it
	hasSurf   bool
	textSurf  uint32 // the "~word" term, when some label, source name or description has it
	hasText   bool
	pair      bool // two adjacent words of the request (raw "round trip"), a hint; word is their pair term
	// wordTerm and wordKnown are word's term, once wordDone (see stemOfGroup).
	wordTerm            uint32
	wordKnown, wordDone bool
}

// parsedQuery is a query analyzed against the index.
type parsedQuery struct {
	text string // the query as read (its first maxQueryBytes), for the tie-break
	// truncated: the query has more words than the maxQueryGroups groups it is scored by.
	truncated bool
	groups    []queryGroup
	exact     []uint32 // tools the query names exactly
	// long: the query has more than longRequestWords content words, and is ranked as a request.
	long bool
	// actions are the action classes the request's words ask for (bit i: actionClasses[i]), in a long request.
	actions uint16
}

// mode is the index of the posting weights the query reads (posting.w).
func (pq *parsedQuery) mode() int {
	if pq.long {
		return 1
	}
	return 0
}

// parseQuery analyzes a query into groups, and finds the tools it names exactly.
func (ix *index) parseQuery(q string) parsedQuery {
	q = textcut.Prefix(q, maxQueryBytes)
	pq := parsedQuery{text: q}
	pq.exact = ix.exactMatches(q)
	seen := make(map[string]bool)
	splitTokens(q, 1, func(w string) {
		pq.truncated = pq.truncated || len(pq.groups) == maxQueryGroups
		if len(w) > 1 {
			ix.addGroup(&pq.groups, seen, w)
			return
		}
		ix.addSingle(&pq.groups, seen, w)
	})
	content := 0
	for _, g := range pq.groups {
		if !g.hint {
			content++
		}
	}
	if content <= longRequestWords {
		if ix.cfg.shortActions {
			for _, g := range pq.groups {
				pq.actions |= actionOf(g.word)
			}
		}
		if ix.cfg.shortPairs {
			ix.addPairs(&pq, q)
		}
		return pq // a terse query ranks as keywords, exactly as before long requests had rules of their own
	}
	pq.long = true
	quoted := quotedWords(q)
	for i := range pq.groups {
		g := &pq.groups[i]
		pq.actions |= actionOf(g.word)
		if g.hint || ix.cfg.longHint >= 1 || !(isNumber(g.raw) || quoted[g.raw]) {
			continue
		}
		for j := range g.exps {
			g.exps[j].w *= ix.cfg.longHint
		}
		g.hint = true
	}
	ix.addPairs(&pq, q) // after the hints of numbers and quoted values: a pair is a hint already
	return pq
}

// addPairs adds a group for each distinct pair of adjacent words of the request that some tool has side by side
// (its pair term) or joined into one word ("round trip" → roundtrip), after the words' groups and within
// maxQueryGroups. Adjacent means as the index reads a tool's text: stop words between them are skipped, a number
// breaks the run. A pair is a hint: a weak bonus that does not count towards coverage, so a tool is not asked to
// match the request's pairs as well as its words, and what a pair adds tells apart tools that match the same
// words ("round trip flights" against SearchOnewayFlight and SearchRoundtripFlights).
func (ix *index) addPairs(pq *parsedQuery, q string) {
	if ix.cfg.pairWeight <= 0 {
		return
	}
	var prevRaw, prev string
	seen := make(map[string]bool)
	splitWords(q, func(w string) {
		t := analyze(w)
		if t == "" || len(pq.groups) >= maxQueryGroups {
			return
		}
		if !pairable(w) {
			prev = ""
			return
		}
		a, aRaw := prev, prevRaw
		prev, prevRaw = t, w
		if a == "" || a == t {
			return
		}
		key := pairKey(a, t)
		if seen[key] {
			return
		}
		seen[key] = true
		g := queryGroup{word: key, raw: aRaw + " " + w, hint: true, pair: true}
		if id, ok := ix.term(key); ok {
			g.exps = append(g.exps, expansion{id, ix.cfg.pairWeight})
		}
		if j := analyze(aRaw + w); !ix.cfg.noJoined && j != "" && j != a && j != t && len(aRaw)+len(w) <= maxTokenBytes {
			if id, ok := ix.term(j); ok {
				g.exps = append(g.exps, expansion{id, ix.cfg.pairWeight})
			}
		}
		if len(g.exps) > 0 {
			pq.groups = append(pq.groups, g)
		}
	})
}

// isNumber reports a word of digits only: a quantity, a date, a coordinate or an id in a request ("the 48 of
// 48.8567"), which says little about which tool is meant.
func isNumber(w string) bool {
	for i := 0; i < len(w); i++ {
		if w[i] < '0' || w[i] > '9' {
			return false
		}
	}
	return w != ""
}

// maxQuotedRunes bounds a quoted value: a quote that closes further on is taken for a stray one, and the search
// for its end stays linear in the query.
const maxQuotedRunes = 200

// quotedWords returns the words of q written between quotes ('…', "…", `…`, “…”, ‘…’, 「…」): values a request
// carries (a name, a title, a message), not words of its need. A quote must open at the start of a word and
// close at its end, so the apostrophes of "don't" and "users'" open nothing.
func quotedWords(q string) map[string]bool {
	out := map[string]bool{}
	pairs := map[rune]rune{'\'': '\'', '"': '"', '`': '`', '“': '”', '‘': '’', '「': '」'}
	runes := []rune(q)
	for i := 0; i < len(runes); i++ {
		closeR, ok := pairs[runes[i]]
		if !ok || i > 0 && (unicode.IsLetter(runes[i-1]) || unicode.IsDigit(runes[i-1])) {
			continue
		}
		for j := i + 1; j < len(runes) && j-i <= maxQuotedRunes; j++ {
			if runes[j] != closeR {
				continue
			}
			if j+1 < len(runes) && (unicode.IsLetter(runes[j+1]) || unicode.IsDigit(runes[j+1])) {
				continue // an apostrophe inside a word
			}
			splitWords(string(runes[i+1:j]), func(w string) { out[w] = true })
			i = j
			break
		}
	}
	return out
}

// actionClasses are the actions tool names start with, each with the words (stemmed) a request asks for it by.
var actionClasses = [][]string{
	{"creat", "add", "new", "insert", "generat", "build", "mak", "register", "post"},
	{"list", "enumerat", "brows"},
	{"get", "fetch", "retriev", "read", "show", "view", "load", "obtain", "detail"},
	{"delet", "remov", "destroy", "eras", "drop", "purg", "trash"},
	{"updat", "edit", "modify", "chang", "patch", "set", "renam", "alter", "reschedul"},
	{"search", "find", "query", "lookup", "locat", "discover", "look"},
	{"send", "publish", "deliver", "notify", "email", "messag"},
	{"cancel", "stop", "kill", "terminat", "halt", "abort"},
	{"upload", "attach"},
	{"download", "export", "sav"},
}

// actionOf returns the bit of the action class a stem asks for, or 0.
func actionOf(stem string) uint16 {
	for i, words := range actionClasses {
		for _, w := range words {
			if w == stem {
				return 1 << i
			}
		}
	}
	return 0
}

// toolAction is the action class of a tool: that of the first word of its name that has one.
func toolAction(name string) uint16 {
	var a uint16
	splitWords(name, func(w string) {
		if a == 0 {
			a = actionOf(stem(w))
		}
	})
	return a
}

// singleHint reports a single letter or digit that can be a hint: not a stop word ("a", "i"), nor the letter
// after an apostrophe ("what's", "don't", "I'd", "I'm"), which names nothing.
func singleHint(w string) bool {
	switch w {
	case "s", "t", "d", "m":
		return false
	}
	return !isStopWord(w)
}

// addSingle adds a hint group for a single letter or digit of a request ("3 months", "what is b") that some
// tool has: a weak signal, singleHint of a word, that counts nothing towards coverage.
func (ix *index) addSingle(groups *[]queryGroup, seen map[string]bool, w string) {
	key := singlePrefix + w
	if ix.cfg.singleHint <= 0 || !singleHint(w) || seen[key] || len(*groups) >= maxQueryGroups {
		return
	}
	id, ok := ix.term(key)
	if !ok {
		return
	}
	seen[key] = true
	*groups = append(*groups, queryGroup{word: key, raw: w, hint: true, exps: []expansion{{id, ix.cfg.singleHint}}})
}

func (ix *index) addGroup(groups *[]queryGroup, seen map[string]bool, w string) {
	t := analyze(w)
	if t == "" || seen[t] || len(*groups) >= maxQueryGroups {
		return
	}
	seen[t] = true
	g := queryGroup{word: t, raw: w}
	g.exps, g.corrected = ix.expand(w, t)
	if ix.cfg.lightVerb < 1 && (isLightVerb(t) || !ix.cfg.noFraming && isFramingWord(t)) {
		for i := range g.exps {
			g.exps[i].w *= ix.cfg.lightVerb
		}
		g.hint = true // nor does it count as a matched word
	}
	g.surface, g.hasSurf = ix.term(surfacePrefix + w)
	g.textSurf, g.hasText = ix.term(textSurfacePrefix + w)
	*groups = append(*groups, g)
}

// expand maps one query word (raw and stemmed) to index terms; corrected reports that they are typo fixes.
func (ix *index) expand(raw, t string) (exps []expansion, corrected bool) {
	add := func(id uint32, w float32) {
		for i := range exps {
			if exps[i].term == id {
				exps[i].w = max(exps[i].w, w)
				return
			}
		}
		exps = append(exps, expansion{id, w})
	}
	id, known := ix.term(t)
	if known {
		add(id, 1)
	}
	if long := abbreviation(raw); long != "" && !ix.cfg.noAbbreviations {
		// The spelled-out words stand for the same single concept, so they join this word's group.
		splitWords(long, func(x string) {
			if id, ok := ix.term(analyze(x)); ok {
				add(id, 1)
				known = true
			}
		})
	}
	if !ix.cfg.noSynonyms {
		for _, s := range ix.synonyms[t] {
			add(s, ix.cfg.synonymWeight)
		}
	}
	if !ix.cfg.noPrefix && len(raw) >= 3 {
		ix.prefixes(raw, func(id uint32) {
			add(id, ix.cfg.prefixWeight*float32(len(raw))/float32(len(ix.vocab[id])))
		})
	}
	if !ix.cfg.noFuzzy && !known && len(exps) == 0 {
		for _, id := range ix.typoFixes(raw) {
			add(id, ix.cfg.fuzzyWeight)
			corrected = true
		}
	}
	return exps, corrected
}

// prefixes calls fn with up to maxPrefixTerms of the shortest vocabulary terms that strictly extend p: an agent
// cut short ("screensh", "calend") or wrote the short form of a longer word ("repo", "config").
func (ix *index) prefixes(p string, fn func(uint32)) {
	i := sort.Search(len(ix.byString), func(i int) bool { return ix.vocab[ix.byString[i]] >= p })
	var found []uint32
	for ; i < len(ix.byString) && len(found) < 8*maxPrefixTerms; i++ {
		id := ix.byString[i]
		v := ix.vocab[id]
		if !strings.HasPrefix(v, p) {
			break
		}
		if len(v) > len(p) {
			found = append(found, id)
		}
	}
	sort.SliceStable(found, func(a, b int) bool { return len(ix.vocab[found[a]]) < len(ix.vocab[found[b]]) })
	for _, id := range found[:min(len(found), maxPrefixTerms)] {
		fn(id)
	}
}

// maxEdits is how many typos a word of this length may carry and still be corrected: short words have too many
// neighbours to guess from.
func maxEdits(n int) int {
	switch {
	case n < 4:
		return 0
	case n < 8:
		return 1
	default:
		return 2
	}
}

// typoFixes returns the terms of words one or two typos away from the query word w, compared as written (a
// typo is made in "issue", not in its stem "issu"). Dropped letters ("sceenshot") are found with sahilm/fuzzy,
// which matches w as a subsequence, keeping only candidates at most maxEdits letters longer; swapped and wrong
// letters with a bounded Damerau–Levenshtein distance. Candidates share w's first or second letter, which keeps
// this cheap on large vocabularies and avoids wild guesses. Only the closest candidates are returned.
func (ix *index) typoFixes(w string) []uint32 {
	k := maxEdits(len(w))
	if k == 0 || !isASCIILetters(w) {
		return nil
	}
	type fix struct {
		word string
		dist int
	}
	var fixes []fix
	seen := make(map[string]bool)
	buckets := []byte{w[0]}
	if w[1] != w[0] {
		buckets = append(buckets, w[1])
	}
	var cands, longer []string
	var hist [256]int16 // w's bytes, for letterGap
	for i := 0; i < len(w); i++ {
		hist[w[i]]++
	}
	for _, first := range buckets {
		cands, longer = cands[:0], longer[:0]
		for _, v := range byLength(ix.byFirst[first], len(w)-k, len(w)+k) {
			if v != w {
				cands = append(cands, v)
				if isSubsequence(w, v) {
					longer = append(longer, v)
				}
			}
		}
		// fuzzy matches w only in words that have its letters in order (see isSubsequence); it is given those
		// alone, most often none, and finds the same matches among them as among all.
		for _, m := range fuzzyMatches(w, longer) {
			if d := len(m.Str) - len(w); d <= k && !seen[m.Str] {
				seen[m.Str] = true
				fixes = append(fixes, fix{m.Str, d})
			}
		}
		for _, v := range cands {
			if seen[v] || letterGap(&hist, len(w), v) > 2*k {
				continue // a gap over 2k is over k edits: editDistance would say so, at several times the cost
			}
			if d := editDistance(w, v, k); d <= k {
				seen[v] = true
				fixes = append(fixes, fix{v, d})
			}
		}
	}
	sort.Slice(fixes, func(i, j int) bool {
		if fixes[i].dist != fixes[j].dist {
			return fixes[i].dist < fixes[j].dist
		}
		return fixes[i].word < fixes[j].word
	})
	var out []uint32
	for i := 0; i < len(fixes) && len(out) < maxFuzzyTerms && fixes[i].dist == fixes[0].dist; i++ {
		if id := ix.stemOf[fixes[i].word]; !containsID(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// byLength returns the words of lengths lo to hi of words sorted by length: a typo fix's candidates, found by two
// binary searches instead of a pass over every word of a letter (tens of thousands in a large catalog).
func byLength(words []string, lo, hi int) []string {
	i := sort.Search(len(words), func(i int) bool { return len(words[i]) >= lo })
	j := i + sort.Search(len(words)-i, func(j int) bool { return len(words[i+j]) > hi })
	return words[i:j]
}

// fuzzyMatches is fuzzy.Find of w in words, without a call for none.
func fuzzyMatches(w string, words []string) fuzzy.Matches {
	if len(words) == 0 {
		return nil
	}
	return fuzzy.Find(w, words)
}

// isSubsequence reports whether the letters of w are in v in order (both lowercase ASCII letters, as typo fixes
// compare them): a word fuzzy.Find matches w in always has them (TestSubsequenceFiltersAsFuzzy).
func isSubsequence(w, v string) bool {
	i := 0
	for j := 0; j < len(v) && i < len(w); j++ {
		if v[j] == w[i] {
			i++
		}
	}
	return i == len(w)
}

// letterGap is how many bytes of w and v are unpaired when their bytes are compared as multisets, given w's
// counts (hist, which it leaves as it found it) and length n. An edit unpairs at most two bytes (a substitution;
// an insertion or a deletion one, an adjacent transposition none), so a gap over 2k means more than k edits.
func letterGap(hist *[256]int16, n int, v string) int {
	gap := n
	for i := 0; i < len(v); i++ {
		if hist[v[i]] > 0 {
			gap--
		} else {
			gap++
		}
		hist[v[i]]--
	}
	for i := 0; i < len(v); i++ {
		hist[v[i]]++
	}
	return gap
}

// editDistance is the optimal-string-alignment distance between a and b (insertions, deletions, substitutions
// and adjacent transpositions), or limit+1 as soon as it must exceed limit.
func editDistance(a, b string, limit int) int {
	if d := len(a) - len(b); d > limit || -d > limit {
		return limit + 1
	}
	// Three rows of len(b)+1, on the stack for the words typo fixes compare: it runs for every candidate.
	var buf [3 * 48]int
	rows := buf[:]
	if 3*(len(b)+1) > len(buf) {
		rows = make([]int, 3*(len(b)+1))
	}
	n := len(b) + 1
	prev2, prev, cur := rows[:n:n], rows[n:2*n:2*n], rows[2*n:3*n]
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		best := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			v := min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				v = min(v, prev2[j-2]+1)
			}
			cur[j] = v
			best = min(best, v)
		}
		if best > limit {
			return limit + 1
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

// exactMatches returns the tools a query names exactly: the whole query is a tool's name or id, or one of its
// words is a tool id, an identifier-shaped name ("browser_take_screenshot", "createIssue", "web-search") or a
// name written in backticks or double quotes.
// A plain word that happens to be a tool's name ("read", "message") inside a sentence is not taken as naming
// that tool; the ranking still weighs it through the name field.
func (ix *index) exactMatches(q string) []uint32 {
	q = strings.TrimSpace(q)
	if q == "" {
		return nil
	}
	var out []uint32
	for _, e := range ix.named(strings.ToLower(strings.Trim(q, "`'\"“”‘’"))) {
		out = append(out, e.doc)
	}
	for _, field := range strings.Fields(q) {
		w := strings.Trim(field, "`'\"“”‘’()[]{}<>,;!?.:")
		quoted := isQuoted(strings.TrimRight(field, ",;!?.:)"))
		if w == "" || !(quoted || identifierShaped(w)) {
			continue
		}
		for _, e := range ix.named(strings.ToLower(w)) {
			if !containsID(out, e.doc) {
				out = append(out, e.doc)
			}
		}
	}
	return out
}

// isQuoted reports a word written between quotes or backticks: "name", `name`, “name”. A quote on one side only
// is punctuation of the sentence ("… into a PDF now!" closing a quoted request), not a name.
func isQuoted(field string) bool {
	if len(field) < 2 {
		return false
	}
	first, _ := utf8.DecodeRuneInString(field)
	last, _ := utf8.DecodeLastRuneInString(field)
	return strings.ContainsRune("`\"“", first) && strings.ContainsRune("`\"”", last)
}

func identifierShaped(w string) bool {
	if strings.ContainsAny(w, "_-:.") {
		return true
	}
	for i := 1; i < len(w); i++ {
		if w[i] >= 'A' && w[i] <= 'Z' && w[i-1] >= 'a' && w[i-1] <= 'z' {
			return true
		}
	}
	return false
}

// scored is one ranked tool.
type scored struct {
	doc   uint32
	score float32
	exact bool
}

// better orders results: exact names first, then score, then id (tools are indexed in id order). The first stage
// then orders the ties by what the request says (see breakTies), and by id only where that says nothing.
func better(a, b scored) bool {
	if a.exact != b.exact {
		return a.exact
	}
	if a.score != b.score {
		return a.score > b.score
	}
	return a.doc < b.doc
}

// coverageWeights says how much each query word counts towards coverage: nothing for a word no tool has or a
// hint. In a terse query (up to coverageWords content words) every word is part of the need and counts 1. In a
// longer request the distinctive words carry the need ("sake", "sudoku") and the everyday ones ("new", "day")
// mostly tell the story around it, so each word counts by its idf (of its best expansion; a corrected typo as
// the word itself).
// Which of the two a request is depends on how many content words it has, whether or not the catalog knows
// them: "Can I choose the difficulty level of the AI opponent in checkers?" is prose even when only "level",
// "AI" and "checkers" match a tool, and a tool matching "level" and "AI" must not beat the one for checkers.
func (ix *index) coverageWeights(groups []queryGroup) (w [maxQueryGroups]float32) {
	matched, content := 0, 0
	for i, g := range groups {
		if g.hint {
			continue
		}
		content++
		if len(g.exps) > 0 {
			w[i] = 1
			matched++
		}
	}
	if ix.cfg.proseByMatched {
		content = matched
	}
	if !ix.cfg.idfCoverage || float32(content) <= ix.cfg.coverageWords {
		return w
	}
	for i, g := range groups {
		if w[i] == 0 {
			continue
		}
		w[i] = 0
		for _, e := range g.exps {
			sure := e.w
			if g.corrected {
				sure = 1 // a fixed typo is the word the user meant; a synonym is a guess at another word
			}
			w[i] = max(w[i], ix.idf[e.term]*sure)
		}
	}
	return w
}

// coverageStrength is the coverage bonus for a query with n matchable words. In a short query every word is
// part of the need, and a tool that misses one misses part of it; a long request is mostly context (who asks,
// why, what happened before), and matching more of its words is weaker evidence. So past coverageWords words the
// bonus shrinks in proportion.
func (ix *index) coverageStrength(n int) float32 {
	if c := ix.cfg.coverageWords; c > 0 && float32(n) > c {
		return ix.cfg.coverage * c / float32(n)
	}
	return ix.cfg.coverage
}

// topK keeps the best k results seen, as a min-heap on better, and beside them in tied, of the results left out
// with the rank of the worst kept (sameRank), the maxTied with the lowest ids: which of the tools tied across
// the k-th place are in the ranking is the tie-break's to decide (see breakTies), not their ids'.
type topK struct {
	k    int
	h    []scored
	tied []scored // a max-heap on doc
}

func newTopK(k int) *topK { return &topK{k: k, h: make([]scored, 0, min(k, 64))} }

func (t *topK) has(d uint32) bool {
	for _, r := range t.h {
		if r.doc == d {
			return true
		}
	}
	return false
}

func (t *topK) push(r scored) {
	if len(t.h) < t.k {
		t.h = append(t.h, r)
		for i := len(t.h) - 1; i > 0; {
			p := (i - 1) / 2
			if !better(t.h[p], t.h[i]) {
				break
			}
			t.h[p], t.h[i] = t.h[i], t.h[p]
			i = p
		}
		return
	}
	if !better(r, t.h[0]) {
		if sameRank(r, t.h[0]) {
			t.addTied(r)
		}
		return
	}
	out := t.h[0]
	t.h[0] = r
	for i := 0; ; {
		l, rr, w := 2*i+1, 2*i+2, i
		if l < len(t.h) && better(t.h[w], t.h[l]) {
			w = l
		}
		if rr < len(t.h) && better(t.h[w], t.h[rr]) {
			w = rr
		}
		if w == i {
			break
		}
		t.h[i], t.h[w] = t.h[w], t.h[i]
		i = w
	}
	// The worst kept is now another: when it ranks with the one pushed out, the tools tied with that one still
	// are with it; when above, none left out is.
	if sameRank(out, t.h[0]) {
		t.addTied(out)
	} else {
		t.tied = t.tied[:0]
	}
}

// addTied adds r to tied, keeping the maxTied with the lowest ids.
func (t *topK) addTied(r scored) {
	h := t.tied
	if h == nil {
		h = make([]scored, 0, maxTied)
	}
	if len(h) < maxTied {
		h = append(h, r)
		for i := len(h) - 1; i > 0 && h[(i-1)/2].doc < h[i].doc; i = (i - 1) / 2 {
			h[(i-1)/2], h[i] = h[i], h[(i-1)/2]
		}
		t.tied = h
		return
	}
	if r.doc >= h[0].doc {
		return
	}
	h[0] = r
	for i := 0; ; {
		l, rr, w := 2*i+1, 2*i+2, i
		if l < len(h) && h[l].doc > h[w].doc {
			w = l
		}
		if rr < len(h) && h[rr].doc > h[w].doc {
			w = rr
		}
		if w == i {
			break
		}
		h[i], h[w] = h[w], h[i]
		i = w
	}
}

func (t *topK) sorted() []scored {
	sort.Slice(t.h, func(i, j int) bool { return better(t.h[i], t.h[j]) })
	return t.h
}
