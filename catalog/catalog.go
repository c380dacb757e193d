package catalog

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/toolsearch/toolsearch/internal/textcut"
	"github.com/toolsearch/toolsearch/signatures"
)

// Defaults of Options: a search returns 8 hits unless it asks for more, and never more than 20 (the
// runtime's maxSearchLimit may raise that cap to 50).
const (
	DefaultSearchLimit = 8
	DefaultMaxSearch   = 20
)

// Options configure New. A nil *Options and zero fields mean the defaults.
type Options struct {
	// Policy filters the tools; nil allows all. A denied tool is not in the catalog at all.
	Policy *Policy
	// SearchDefaultLimit is the limit of a search that asks for none (0 → 8).
	SearchDefaultLimit int
	// MaxSearchLimit caps every search (0 → 20). Larger limits are clamped, not refused.
	MaxSearchLimit int
	// Signatures bounds the input and output hints of descriptors; nil means the signatures package's
	// defaults (depth 4, 16 properties, 300 characters).
	Signatures *signatures.Options
	// ReservedNames are names no cataloged tool may have (the runtime's control tools): a tool named so is left
	// out with a *ToolError.
	ReservedNames []string
	// CheckSchema, when set, is asked about the input schema of every tool about to be cataloged; a tool whose
	// schema it refuses is left out with a *ToolError wrapping its error. The runtime compiles the schema here,
	// so that a tool nobody could call never shows up in search. A Cache assumes one CheckSchema per cache.
	CheckSchema func(toolID string, schema json.RawMessage) error
}

func (o *Options) limits() (def, maxLimit int) {
	def, maxLimit = DefaultSearchLimit, DefaultMaxSearch
	if o != nil && o.MaxSearchLimit > 0 {
		maxLimit = o.MaxSearchLimit
	}
	if o != nil && o.SearchDefaultLimit > 0 {
		def = o.SearchDefaultLimit
	}
	return min(def, maxLimit), maxLimit
}

// Stats are the catalog's counters. They belong to the run or session, so a catalog reused by a Cache keeps them.
type Stats struct {
	Searches  int64 `json:"searches"`
	Describes int64 `json:"describes"`
	Calls     int64 `json:"calls"`
}

type counters struct {
	searches, describes, calls atomic.Int64
}

// entry is one cataloged tool with its lazily rendered descriptor.
type entry struct {
	tool Tool
	id   string
	desc atomic.Pointer[Descriptor]
}

// Catalog is the effective, searchable tool set of one run or session. It is immutable once built apart from its
// counters, and safe for concurrent use by any number of goroutines.
type Catalog struct {
	entries      []*entry // sorted by id; the index refers to tools by position
	byID         map[string]*entry
	byName       map[string][]*entry
	sources      map[Source]int
	ix           *index
	stats        *counters
	fingerprint  string
	rejected     []*ToolError
	defaultLimit int
	maxLimit     int
	sigOpts      *signatures.Options
}

// New builds the catalog of tools that survive opts.Policy. Direct-only tools are left out: they stay directly
// visible to the model and are never searched. A tool that cannot be cataloged (no name or source name, an
// unknown source, a name too long or with control characters, a reserved name, an input schema that is not a
// JSON object of at most MaxSchemaBytes or that opts.CheckSchema refuses) is left out and reported by
// Rejected, and the rest of the catalog is built. Two tools with one id are an error (ErrDuplicateTool),
// whether or not the policy would drop them: no lookup could tell them apart.
func New(tools []Tool, opts *Options) (*Catalog, error) {
	return newCatalog(tools, opts, fingerprintOf(tools, opts), &counters{}, defaultRankConfig())
}

func newCatalog(tools []Tool, opts *Options, fp string, stats *counters, cfg rankConfig) (*Catalog, error) {
	def, maxLimit := opts.limits()
	c := &Catalog{
		byID:         make(map[string]*entry, len(tools)),
		byName:       make(map[string][]*entry, len(tools)),
		sources:      make(map[Source]int),
		stats:        stats,
		fingerprint:  fp,
		defaultLimit: def,
		maxLimit:     maxLimit,
	}
	var policy *Policy
	if opts != nil {
		policy = opts.Policy
		c.sigOpts = opts.Signatures
	}
	seen := make(map[string]bool, len(tools))
	for i := range tools {
		t := &tools[i]
		if bad := checkIdentity(t); bad != nil {
			c.rejected = append(c.rejected, bad)
			continue
		}
		id := t.ID()
		if seen[id] {
			return nil, fmt.Errorf("%w: %s", ErrDuplicateTool, id)
		}
		seen[id] = true
		if t.CatalogMode == CatalogModeDirectOnly || !policy.Allows(t) {
			continue
		}
		if bad := checkContent(t, opts); bad != nil {
			c.rejected = append(c.rejected, bad)
			continue
		}
		c.entries = append(c.entries, &entry{tool: cloneTool(t), id: id})
	}
	sort.Slice(c.entries, func(i, j int) bool { return c.entries[i].id < c.entries[j].id })
	docs := make([]docText, len(c.entries))
	for i, e := range c.entries {
		t := &e.tool
		c.byID[e.id] = e
		c.byName[t.Name] = append(c.byName[t.Name], e)
		c.sources[t.Source]++
		text := TextOf(t)
		docs[i] = docText{
			fields: [numFields]string{
				fieldName:        text.Name,
				fieldLabel:       text.Label,
				fieldSource:      text.Source,
				fieldDescription: text.Description,
				fieldParams:      text.Parameters,
			},
			name: strings.ToLower(t.Name),
			id:   strings.ToLower(e.id),
		}
	}
	c.ix = buildIndex(docs, cfg)
	return c, nil
}

// cloneTool copies the slices a caller could change after New returns, so the catalog stays immutable.
func cloneTool(t *Tool) Tool {
	c := *t
	c.Parameters = append([]byte(nil), t.Parameters...)
	if len(c.Parameters) == 0 {
		c.Parameters = []byte(`{"type":"object","properties":{}}`)
	}
	if t.OutputSchema != nil {
		c.OutputSchema = append([]byte(nil), t.OutputSchema...)
	}
	c.Groups = append([]string(nil), t.Groups...)
	c.Annotations = t.Annotations.clone()
	return c
}

// Rejected returns the tools New left out because they cannot be cataloged, in input order, each with its
// reason. It is empty when every tool was fine.
func (c *Catalog) Rejected() []*ToolError {
	return append([]*ToolError(nil), c.rejected...)
}

// Len is the number of cataloged tools.
func (c *Catalog) Len() int { return len(c.entries) }

// Tools returns the cataloged tools sorted by id. The pointers are the catalog's own: do not modify them.
func (c *Catalog) Tools() []*Tool {
	out := make([]*Tool, len(c.entries))
	for i, e := range c.entries {
		out[i] = &e.tool
	}
	return out
}

// Sources returns how many cataloged tools each source contributes.
func (c *Catalog) Sources() map[Source]int {
	out := make(map[Source]int, len(c.sources))
	for s, n := range c.sources {
		out[s] = n
	}
	return out
}

// Fingerprint identifies the tool set and options the catalog was built from: ids, labels, descriptions,
// schemas, groups, catalog modes, handler identity and options. Equal fingerprints mean an equal catalog.
func (c *Catalog) Fingerprint() string { return c.fingerprint }

// Stats returns a snapshot of the counters.
func (c *Catalog) Stats() Stats {
	return Stats{
		Searches:  c.stats.searches.Load(),
		Describes: c.stats.describes.Load(),
		Calls:     c.stats.calls.Load(),
	}
}

// RecordCall counts one tool call; the runtime calls it, since the catalog does not run tools.
func (c *Catalog) RecordCall() { c.stats.calls.Add(1) }

// Lookup resolves an exact id or a unique name. A name shared by several tools is an *AmbiguousToolError; no
// match is an *UnknownToolError without suggestions (Suggest adds them). Ids and names are matched exactly
// first, then ignoring case if that is unambiguous. Lookup does constant work whatever the catalog's size.
func (c *Catalog) Lookup(idOrName string) (*Tool, error) {
	e, err := c.lookup(idOrName)
	if err != nil {
		return nil, err
	}
	return &e.tool, nil
}

func (c *Catalog) lookup(q string) (*entry, error) {
	q = strings.TrimSpace(q)
	if e, ok := c.byID[q]; ok {
		return e, nil
	}
	if es := c.byName[q]; len(es) > 0 {
		if len(es) > 1 {
			return nil, ambiguous(q, es)
		}
		return es[0], nil
	}
	if q != "" && len(q) <= maxQueryBytes {
		// The index keeps every lowercased name and id, so matching without case costs one binary search (longer
		// queries are no name; lowercasing a megabyte would cost more than the lookup is worth).
		var folded []*entry
		for _, k := range c.ix.named(strings.ToLower(q)) {
			e := c.entries[k.doc]
			if strings.EqualFold(e.id, q) {
				return e, nil
			}
			if strings.EqualFold(e.tool.Name, q) {
				folded = append(folded, e)
			}
		}
		if len(folded) == 1 {
			return folded[0], nil
		}
		if len(folded) > 1 {
			return nil, ambiguous(q, folded)
		}
	}
	return nil, &UnknownToolError{Query: q}
}

func ambiguous(name string, es []*entry) error {
	ids := make([]string, len(es))
	for i, e := range es {
		ids[i] = e.id
	}
	sort.Strings(ids)
	return &AmbiguousToolError{Name: name, IDs: ids}
}

// maxSuggestions is how many ids an unknown-tool error offers.
const maxSuggestions = 3

// suggestCandidates is how many ranked tools Suggest considers, so that a few the caller's filter refuses do not
// leave it with nothing to offer.
const suggestCandidates = 20

// Suggest proposes up to three ids for a query Lookup did not resolve, best first: a tool whose name is the
// query's name part (an id with the wrong source), then the best ranked tools for the query, which the index
// finds typo-tolerantly. Only tools allow accepts are offered (nil accepts all): the policy of a run can change
// after its catalog was built, and a denied tool must not be named. The work is one bounded search of the index
// whatever the catalog's size, never a scan of every name; an ended ctx returns nothing.
func (c *Catalog) Suggest(ctx context.Context, query string, allow func(*Tool) bool) []string {
	query = strings.TrimSpace(textcut.Prefix(query, maxQueryBytes)) // all of a query the index would read
	if query == "" || len(c.entries) == 0 || ctx.Err() != nil {
		return nil
	}
	var out []string
	add := func(d uint32) {
		e := c.entries[d]
		if len(out) >= maxSuggestions || (allow != nil && !allow(&e.tool)) {
			return
		}
		for _, x := range out {
			if x == e.id {
				return
			}
		}
		out = append(out, e.id)
	}
	name := strings.ToLower(query)
	if i := strings.LastIndexByte(name, ':'); i >= 0 {
		name = name[i+1:]
	}
	for _, k := range c.ix.named(name) {
		add(k.doc)
	}
	for _, r := range c.ix.search(query, suggestCandidates) {
		add(r.doc)
	}
	return out
}

// Describe returns the descriptor, the full description and the full schemas of an exact id or unique name, and
// counts one describe.
func (c *Catalog) Describe(idOrName string) (*Description, error) {
	e, err := c.lookup(idOrName)
	if err != nil {
		return nil, err
	}
	c.stats.describes.Add(1)
	d := c.descriptor(e)
	// In full, line breaks kept, but no character that hides or reorders what a person or the model reads.
	d.Description = textcut.Visible(e.tool.Description)
	if len(d.Description) > MaxDescribeDescriptionBytes {
		d.Description = textcut.Prefix(d.Description, MaxDescribeDescriptionBytes-len(CutMarker)) + CutMarker
	}
	return &Description{
		Descriptor:   d,
		Parameters:   append([]byte(nil), e.tool.Parameters...),
		OutputSchema: append([]byte(nil), e.tool.OutputSchema...),
	}, nil
}

// Descriptor returns the compact descriptor of t. Hints of cataloged tools are rendered once.
func (c *Catalog) Descriptor(t *Tool) Descriptor {
	if e, ok := c.byID[t.ID()]; ok && &e.tool == t {
		return c.descriptor(e)
	}
	return render(t, c.sigOpts)
}

func (c *Catalog) descriptor(e *entry) Descriptor {
	if d := e.desc.Load(); d != nil {
		return *d
	}
	d := render(&e.tool, c.sigOpts)
	e.desc.CompareAndSwap(nil, &d)
	return d
}

// Bounds of the text in a descriptor. The model pays for every byte of every hit, and servers write
// descriptions of any length (real ones reach 90 KB), so a hit carries the description's start, white space
// collapsed and cut after a whole word with CutMarker. Describe returns the description as written, up to
// MaxDescribeDescriptionBytes: only a description that is no description (megabytes of it) is cut there too.
const (
	MaxHitDescriptionBytes      = 200
	MaxLabelBytes               = 80
	MaxDescribeDescriptionBytes = 128 << 10
	CutMarker                   = "…"
)

func render(t *Tool, opts *signatures.Options) Descriptor {
	d := Descriptor{
		ID:          t.ID(),
		Source:      t.Source,
		SourceName:  t.SourceName,
		Name:        t.Name,
		Label:       textcut.Words(t.Label, MaxLabelBytes, CutMarker),
		Description: textcut.Words(t.Description, MaxHitDescriptionBytes, CutMarker),
		Input:       signatures.Unknown,
	}
	if d.Label == d.Name {
		d.Label = "" // said once is enough
	}
	if t.Trusted() {
		d.Input = signatures.Input(t.Parameters, opts)
		if len(t.OutputSchema) > 0 {
			if hint, ok := signatures.Output(t.OutputSchema, opts); ok {
				d.Output = hint
			}
		}
	}
	return d
}

// Search ranks the catalog for query (BM25 over names, labels, descriptions and parameters, with an exact name
// or id first) and counts one search. limit 0 means the default limit, a limit
// above the maximum is clamped, a negative one is ErrInvalidLimit. An empty query, or one none of whose words
// match, returns no hits.
func (c *Catalog) Search(ctx context.Context, query string, limit int) ([]Hit, error) {
	limit, err := c.limit(limit)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c.stats.searches.Add(1)
	return c.hits(c.ix.search(query, limit)), nil
}

// Unmatched returns the words of query that no cataloged tool has (after stemming, synonyms, prefixes and typo
// fixes), lowercased, in query order: what a caller can tell the model when a search finds nothing. Stop words
// and words past the query's bound are not words to match, so a query of stop words only has none.
func (c *Catalog) Unmatched(query string) []string {
	var out []string
	for _, g := range c.ix.parseQuery(query).groups {
		if len(g.exps) == 0 {
			out = append(out, g.raw)
		}
	}
	return out
}

func (c *Catalog) limit(limit int) (int, error) {
	switch {
	case limit < 0:
		return 0, ErrInvalidLimit
	case limit == 0:
		return c.defaultLimit, nil
	default:
		return min(limit, c.maxLimit), nil
	}
}

// exactScoreBonus lifts exact name or id matches above any ranked score in the reported numbers, matching the
// order they are sorted in.
const exactScoreBonus = 1000

func (c *Catalog) hits(rs []scored) []Hit {
	if len(rs) == 0 {
		return nil
	}
	out := make([]Hit, len(rs))
	for i, r := range rs {
		score := float64(r.score)
		if r.exact {
			score += exactScoreBonus
		}
		out[i] = Hit{Descriptor: c.descriptor(c.entries[r.doc]), Score: math.Round(score*1e4) / 1e4}
	}
	return out
}

// SearchBatch runs up to MaxBatchQueries searches and merges their hits without duplicates, round-robin by rank
// (every query's best hit comes before any query's second; a tool found by several queries keeps its first
// place), and returns at most limit hits in all: limit bounds the answer, as it does for one query. limit 0 means
// the default limit. Each query counts as one search.
func (c *Catalog) SearchBatch(ctx context.Context, queries []string, limit int) ([]Hit, error) {
	if len(queries) > MaxBatchQueries {
		return nil, ErrTooManyQueries
	}
	limit, err := c.limit(limit)
	if err != nil {
		return nil, err
	}
	per := make([][]scored, len(queries))
	for i, q := range queries {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		c.stats.searches.Add(1)
		per[i] = c.ix.search(q, limit)
	}
	var merged []scored
	seen := make(map[uint32]bool)
	for rank := 0; rank < limit && len(merged) < limit; rank++ {
		for _, rs := range per {
			if rank < len(rs) && !seen[rs[rank].doc] && len(merged) < limit {
				seen[rs[rank].doc] = true
				merged = append(merged, rs[rank])
			}
		}
	}
	return c.hits(merged), nil
}
