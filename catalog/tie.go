package catalog

import (
	"cmp"
	"slices"
)

// maxTied bounds the tools of one tie (equal first-stage scores) that the tie-break reads: those with the lowest
// ids. The others of a larger tie follow them in id order. A tie that large is a word every tool of a server or
// catalog matches alike, where reading each tool's name pairs and postings would cost more than the query.
const maxTied = 64

// tieKey orders tools the first stage scores equally, by what the request says that the first stage does not
// read. Look-alike tools (endpoints of one API, copies of one tool on several servers) often score exactly alike:
// the first stage reads the same words in the same fields of the same lengths. What can still tell them apart is
// a word of the request one of them has and the others do not, among those it leaves out: in order,
//   - text: the request's words past the first maxQueryGroups, which the first stage does not read, that the
//     tool's text has (any field), each counted once by its idf (a rare word is the stronger sign);
//   - named: the request's stop words its name has next to the same word as the request: the first stage reads
//     no stop word, but in a name a stop word beside another is there on purpose ("to pdf" in convert_to_pdf
//     against convert_from_pdf, "events before" against events_after), where the "the" of retrieve_the_zone is
//     no sign of a request with "the" somewhere;
//   - and last the id, as before.
//
// Nothing else: a shorter text or name is no sign the request asked for it, and ordering ties by length moved
// six right tools out of the top five and one in (see docs/search.md). A word the first stage reads counts the
// same in every tool of a tie, or they would hardly be tied to the last bit.
type tieKey struct {
	text  float32
	named int
}

// tieBy names the keys for explain, in order.
const (
	tieByText   = "text"
	tieByName   = "name"
	tieByID     = "id"
	tieByUnread = "id, past the tools of the tie the tie-break reads"
)

// compare orders two keys: negative when a ranks first; 0 leaves it to the id.
func (a tieKey) compare(b tieKey) (int, string) {
	if a.text != b.text {
		return cmp.Compare(b.text, a.text), tieByText
	}
	if a.named != b.named {
		return cmp.Compare(b.named, a.named), tieByName
	}
	return 0, tieByID
}

// tieRequest is what the tie-break reads of a request, made once per ranking that has a tie it can split.
type tieRequest struct {
	unread []uint32 // the request's content words the first stage did not read and the catalog has, each once
	// pairs are the request's adjacent words one of which is a stop word, as namePair has them: only those some
	// name has words of.
	pairs   [][2]uint32
	counted []uint32 // while reading one name
}

// namePair is two adjacent words of tool doc's name, one of them a stop word (see index.namePairs).
type namePair struct {
	doc  uint32
	a, b uint32
}

// stopKey marks a stop word's number in a namePair.
const stopKey = 1 << 31

// nameWord is the word before while a name is read.
type nameWord struct {
	key      uint32
	stop, ok bool
}

// stopKey gives stop word w its number, for namePairs.
func (ix *index) stopKey(w string) uint32 {
	id, ok := ix.stopIDs[w]
	if !ok {
		id = stopKey | uint32(len(ix.stopIDs))
		ix.stopIDs[w] = id
	}
	return id
}

// addNameWord adds the pair of the word before and key, when one is a stop word, to tool d's namePairs.
func (ix *index) addNameWord(d uint32, prev *nameWord, key uint32, stop bool) {
	if prev.ok && (prev.stop || stop) {
		ix.namePairs = append(ix.namePairs, namePair{d, prev.key, key})
	}
	*prev = nameWord{key, stop, true}
}

func (ix *index) tieRequest(pq *parsedQuery) *tieRequest {
	r := &tieRequest{}
	var prev nameWord
	splitWords(pq.text, func(w string) {
		stop := isStopWord(w)
		var key uint32
		var ok bool
		if stop {
			key, ok = ix.stopIDs[w]
		} else {
			t := stem(w)
			key, ok = ix.term(t)
			if ok && pq.truncated && !slices.Contains(r.unread, key) &&
				!slices.ContainsFunc(pq.groups, func(g queryGroup) bool { return !g.pair && g.word == t }) {
				r.unread = append(r.unread, key)
			}
		}
		if ok && prev.ok && (stop || prev.stop) {
			r.pairs = append(r.pairs, [2]uint32{prev.key, key})
		}
		prev = nameWord{key, stop, ok}
	})
	return r
}

// empty reports a request that tells no tied tools apart: no word past those read, no stop word beside a word
// that some name has beside it.
func (r *tieRequest) empty() bool { return len(r.unread) == 0 && len(r.pairs) == 0 }

// textKey is the idf of the unread words tool d's text has, from the words' postings.
func (ix *index) textKey(r *tieRequest, d uint32) float32 {
	var sum float32
	for _, t := range r.unread {
		if _, ok := slices.BinarySearch(ix.list(t).doc, d); ok {
			sum += ix.idf[t]
		}
	}
	return sum
}

// namedKey counts the request's stop words tool d's name has beside the same word (see tieKey).
func (ix *index) namedKey(r *tieRequest, d uint32) int {
	if !ix.nameHasStop(d) || len(r.pairs) == 0 {
		return 0
	}
	at, _ := slices.BinarySearchFunc(ix.namePairs, d, func(p namePair, d uint32) int { return cmp.Compare(p.doc, d) })
	r.counted = r.counted[:0]
	for _, p := range ix.namePairs[at:] {
		if p.doc != d {
			break
		}
		if !slices.Contains(r.pairs, [2]uint32{p.a, p.b}) {
			continue
		}
		for _, k := range [2]uint32{p.a, p.b} {
			if k&stopKey != 0 && !slices.Contains(r.counted, k) {
				r.counted = append(r.counted, k)
			}
		}
	}
	return len(r.counted)
}

// nameHasStop reports whether tool d's name has a stop word.
func (ix *index) nameHasStop(d uint32) bool { return ix.nameStops[d/64]&(1<<(d%64)) != 0 }

func (ix *index) tieKey(r *tieRequest, d uint32) tieKey {
	return tieKey{text: ix.textKey(r, d), named: ix.namedKey(r, d)}
}

// sameRank reports two results the first stage cannot tell apart: both exact or neither, and the same score.
func sameRank(a, b scored) bool { return a.exact == b.exact && a.score == b.score }

// canSplit reports whether the tie-break could tell some of tied apart: only a request with words the first
// stage did not read, or a name with a stop word, can. Most ties cost a look at one bit a tool.
func (ix *index) canSplit(pq *parsedQuery, tied []scored) bool {
	return pq.truncated || slices.ContainsFunc(tied, func(x scored) bool { return ix.nameHasStop(x.doc) })
}

// tiedTool is one tool of a tie while the tie-break orders it.
type tiedTool struct {
	scored
	key tieKey
}

// breakTies orders the ties of a first-stage ranking (sorted by better, ties in id order) by tieKey and keeps
// the first limit. tied are the tools topK left out with the score of its last (see topK.tied): a tie across
// the cut is decided like any other. Only the ties among the first limit are read, at most maxTied tools each;
// a ranking without a tie costs one pass of comparisons.
func (ix *index) breakTies(pq *parsedQuery, ranked, tied []scored, limit int) []scored {
	if len(tied) > 0 && ix.canSplit(pq, tied) {
		slices.SortFunc(tied, func(a, b scored) int { return cmp.Compare(a.doc, b.doc) })
		ranked = append(ranked, tied...)
	}
	var r *tieRequest
	var tools []tiedTool
	for i := 0; i < len(ranked) && i < limit; {
		j := i + 1
		for j < len(ranked) && sameRank(ranked[i], ranked[j]) {
			j++
		}
		run := ranked[i:min(j, i+maxTied)]
		if len(run) > 1 && ix.canSplit(pq, run) {
			if r == nil {
				r = ix.tieRequest(pq)
				if r.empty() {
					break // nothing in the request tells any tied tools apart: id order
				}
			}
			tools = tools[:0]
			for _, x := range run {
				tools = append(tools, tiedTool{scored: x, key: ix.tieKey(r, x.doc)})
			}
			// run is in id order, and a stable sort leaves equal keys so: the id decides last.
			slices.SortStableFunc(tools, func(a, b tiedTool) int { c, _ := a.key.compare(b.key); return c })
			for o := range tools {
				run[o] = tools[o].scored
			}
		}
		i = j
	}
	return ranked[:min(limit, len(ranked))]
}

// tieExplained is how the tie-break placed one tool, for explain.
type tieExplained struct {
	with []uint32 // the other tools of its tie, in rank order: the first maxTied
	of   int      // the tools of the tie
	by   string   // the key that set it apart from its neighbour in the tie (see tieKey.compare)
	key  tieKey
	read bool // among the tools of the tie the tie-break read
}

// explainTie says how the tie-break placed tool d in ranked, a first-stage ranking as breakTies returns it; ok
// false when no other tool has its score.
func (ix *index) explainTie(pq *parsedQuery, ranked []scored, d uint32) (x tieExplained, ok bool) {
	at := slices.IndexFunc(ranked, func(s scored) bool { return s.doc == d })
	if at < 0 {
		return x, false
	}
	i, j := at, at+1
	for i > 0 && sameRank(ranked[i-1], ranked[at]) {
		i--
	}
	for j < len(ranked) && sameRank(ranked[j], ranked[at]) {
		j++
	}
	if j-i < 2 {
		return x, false
	}
	x.of = j - i
	for _, s := range ranked[i:j] {
		if s.doc != d && len(x.with) < maxTied {
			x.with = append(x.with, s.doc)
		}
	}
	// The tie-break read the tools of the tie with the lowest ids, and placed them first.
	read := min(j-i, maxTied)
	x.read = at-i < read
	r := ix.tieRequest(pq)
	x.key = ix.tieKey(r, d)
	if !x.read {
		x.by = tieByUnread
		return x, true
	}
	next := at - 1
	if at == i {
		next = at + 1
	}
	if next-i >= read {
		x.by = tieByID
		return x, true
	}
	_, x.by = x.key.compare(ix.tieKey(r, ranked[next].doc))
	return x, true
}
