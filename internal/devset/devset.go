// Package devset loads the search development sets kept under catalog/testdata (the multi-need sets' catalog is
// internal/corpus) and scores a ranking on them, so
// that the catalog's quality test and the benchmark peers count hits the same way. It does not import the
// catalog (the catalog's own tests use it): a set is a catalog file plus queries, and the caller parses the file
// and resolves the queries against the tools' ids.
package devset

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/toolsearch/toolsearch/internal/corpus"
)

// Set is one catalog with its queries.
type Set struct {
	Name    string
	About   string // what the queries are like, for the report
	Tuned   bool   // the ranker was tuned on these queries
	Catalog []byte // a catalog file (catalog.ParseFile)
	Queries []Query

	keys []string // the key of each catalog entry, in file order: its name as written in the source data
}

// Query is one request and the distinct needs it expresses. A need is met by any one of its tools.
type Query struct {
	Text  string
	Kind  string
	Needs []Need
}

// Need is one tool the request needs: the gold key and any alternatives that serve equally well. After
// Set.Resolve, Tools holds the catalog positions they resolve to.
type Need struct {
	Keys  []string
	Tools []int
}

// line is one query line of any of the sets' formats.
type line struct {
	Query  string   `json:"query"`
	Kind   string   `json:"kind"`
	Expect []string `json:"expect"` // our dev set: any of these ids
	Gold   []string `json:"gold"`   // MetaTool: any of these names; BFCL (goldNeeds): every one a need
	Needs  []struct {
		Gold string   `json:"gold"`
		Alt  []string `json:"alt"`
	} `json:"needs"` // multi-need sets: every need, each met by gold or an alternative
}

// Load reads the sets under dir (catalog/testdata). A set whose files are missing is skipped, so the holdout
// set can be absent; a malformed one is an error. includeHoldout adds the multi-need holdout queries, which are
// reported once, after the ranker is final.
func Load(dir string, includeHoldout bool) ([]Set, error) {
	var sets []Set
	add := func(s Set, err error) error {
		if err != nil {
			if os.IsNotExist(err) {
				return nil
			}
			return fmt.Errorf("devset %s: %w", s.Name, err)
		}
		sets = append(sets, s)
		return nil
	}
	devCatalog := filepath.Join(dir, "devset", "catalog.json")
	type spec struct {
		name, about, catalog, queries string
		tuned, mcp                    bool // mcp: the catalog is internal/corpus's MCP tools
		goldNeeds                     bool // each "gold" name is a need of its own, not an alternative
	}
	specs := []spec{
		{"dev", "350 tools written here, 271 short agent-phrased queries", devCatalog,
			"devset/queries.jsonl", true, false, false},
		{"dev-fresh", "the same tools, 48 queries written after its first tuning, printed in every round since", devCatalog,
			"devset/queries_fresh.jsonl", true, false, false},
		{"metatool", "199 ChatGPT plugins, 1,000 real user requests, one gold tool", filepath.Join(dir, "metatool", "catalog.json"),
			"metatool/queries.jsonl", true, false, false},
		{"multineed-dev", "644 real MCP tools, long requests with 1-3 needs", "",
			"multineed/multineed-dev.jsonl", true, true, false},
		{"bfcl-live", "528 user-contributed functions, 661 requests carrying their arguments (BFCL live, even half)",
			filepath.Join(dir, "bfcl_live", "catalog.json"), "bfcl_live/queries.jsonl", true, false, true},
	}
	if includeHoldout {
		specs = append(specs, spec{"multineed-holdout", "644 real MCP tools, long requests with 1-3 needs, printed while tuning issue 22",
			"", "multineed/multineed-holdout.jsonl", true, true, false})
	}
	for _, sp := range specs {
		s := Set{Name: sp.name, About: sp.about, Tuned: sp.tuned}
		err := func() error {
			var err error
			if sp.mcp {
				s.Catalog, s.keys = mcpCatalog()
			} else {
				s.Catalog, s.keys, err = fileCatalog(sp.catalog)
			}
			if err != nil {
				return err
			}
			s.Queries, err = loadQueries(filepath.Join(dir, sp.queries), sp.goldNeeds)
			return err
		}()
		if err := add(s, err); err != nil {
			return nil, err
		}
	}
	return sets, nil
}

// fileCatalog reads a catalog file as it is; an entry's key is its name.
func fileCatalog(path string) ([]byte, []string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	var entries []struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(data, &entries); err != nil {
		return nil, nil, err
	}
	keys := make([]string, len(entries))
	for i, e := range entries {
		keys[i] = e.Name
	}
	return data, keys, nil
}

// mcpCatalog is the 644 real MCP tools of internal/corpus as a catalog file; an entry's key is its name as the
// corpus writes it, "<server>.<tool>".
func mcpCatalog() ([]byte, []string) {
	tools := corpus.MCPTools()
	keys := make([]string, len(tools))
	for i, t := range tools {
		keys[i] = t.Server + "." + t.Name
	}
	return corpus.CatalogFile(), keys
}

func loadQueries(path string, goldNeeds bool) ([]Query, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var qs []Query
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		raw := bytes.TrimSpace(sc.Bytes())
		if len(raw) == 0 {
			continue
		}
		var l line
		if err := json.Unmarshal(raw, &l); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		q := Query{Text: l.Query, Kind: l.Kind}
		switch {
		case len(l.Needs) > 0:
			for _, nd := range l.Needs {
				q.Needs = append(q.Needs, Need{Keys: append([]string{nd.Gold}, nd.Alt...)})
			}
		case len(l.Expect) > 0:
			q.Needs = []Need{{Keys: l.Expect}}
		case len(l.Gold) > 0 && goldNeeds:
			for _, g := range l.Gold {
				q.Needs = append(q.Needs, Need{Keys: []string{g}})
			}
		case len(l.Gold) > 0:
			q.Needs = []Need{{Keys: l.Gold}}
		}
		if strings.TrimSpace(q.Text) == "" || len(q.Needs) == 0 {
			return nil, fmt.Errorf("%s:%d: a query needs text and at least one gold tool", path, n)
		}
		qs = append(qs, q)
	}
	return qs, sc.Err()
}

// Resolve maps every need's keys to catalog positions, given the ids of the parsed catalog's tools in file
// order. A key is a tool id or an entry's name as written in the set (unique names only). A key that names no
// tool is an error: a typo in a gold label must not quietly count as a miss.
func (s *Set) Resolve(ids []string) error {
	if len(ids) != len(s.keys) {
		return fmt.Errorf("devset %s: %d tools parsed from %d entries", s.Name, len(ids), len(s.keys))
	}
	pos := make(map[string]int, 2*len(ids))
	count := make(map[string]int, len(ids))
	for _, k := range s.keys {
		count[k]++
	}
	for i, k := range s.keys {
		if count[k] == 1 {
			pos[k] = i
		}
	}
	for i, id := range ids {
		pos[id] = i
	}
	for qi := range s.Queries {
		for ni := range s.Queries[qi].Needs {
			nd := &s.Queries[qi].Needs[ni]
			nd.Tools = nd.Tools[:0]
			for _, k := range nd.Keys {
				i, ok := pos[k]
				if !ok {
					return fmt.Errorf("devset %s: query %q: no tool %q", s.Name, s.Queries[qi].Text, k)
				}
				nd.Tools = append(nd.Tools, i)
			}
		}
	}
	return nil
}

// Metrics are a ranking's scores on a set. With one need per query, Hit5 and All5 are the usual hit@5.
//   - Hit1: the first result meets some need of the request.
//   - Hit5: the share of the request's needs met within the first five results (need recall@5).
//   - All5: every need of the request is met within the first five.
//   - MRR: the reciprocal rank of the first result that meets some need, 0 past the tenth.
//
// Each is a mean over the queries.
type Metrics struct {
	N                     int
	Hit1, Hit5, All5, MRR float64
}

// Score ranks every query (rank returns catalog positions, best first) and averages the metrics.
func Score(qs []Query, rank func(q string) []int) (Metrics, []Miss) {
	var m Metrics
	var misses []Miss
	for _, q := range qs {
		got := rank(q.Text)
		first := 0 // rank of the first result meeting any need
		met := 0   // needs met in the top five
		for _, nd := range q.Needs {
			for r, doc := range got[:min(len(got), 10)] {
				if !slices.Contains(nd.Tools, doc) {
					continue
				}
				if first == 0 || r+1 < first {
					first = r + 1
				}
				if r < 5 {
					met++
				}
				break
			}
		}
		m.N++
		if first == 1 {
			m.Hit1++
		}
		m.Hit5 += float64(met) / float64(len(q.Needs))
		if met == len(q.Needs) {
			m.All5++
		}
		if first > 0 {
			m.MRR += 1 / float64(first)
		}
		if first != 1 {
			misses = append(misses, Miss{Query: q, Got: got, FirstRank: first})
		}
	}
	if m.N > 0 {
		n := float64(m.N)
		m.Hit1, m.Hit5, m.All5, m.MRR = m.Hit1/n, m.Hit5/n, m.All5/n, m.MRR/n
	}
	return m, misses
}

// Miss is a query whose first result met no need.
type Miss struct {
	Query     Query
	Got       []int
	FirstRank int // 0: no need met in the first ten
}

// LoadCorpus reads a set kept outside the repository as a directory of catalog.json and queries.jsonl
// (../shared/corpora's format, as the trainer of the learned ranking reads it): every gold name of a query is a
// need of its own when goldNeeds, else any of them meets its one need.
func LoadCorpus(name, about, dir string, goldNeeds bool) (Set, error) {
	s := Set{Name: name, About: about}
	var err error
	s.Catalog, s.keys, err = fileCatalog(filepath.Join(dir, "catalog.json"))
	if err != nil {
		return s, fmt.Errorf("devset %s: %w", name, err)
	}
	s.Queries, err = loadQueries(filepath.Join(dir, "queries.jsonl"), goldNeeds)
	if err != nil {
		return s, fmt.Errorf("devset %s: %w", name, err)
	}
	return s, nil
}

// New makes a set of a catalog file built in memory (by a reader of some other data's format) and its queries;
// an entry's key is its name.
func New(name, about string, catalogFile []byte, queries []Query) (Set, error) {
	var entries []struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(catalogFile, &entries); err != nil {
		return Set{}, fmt.Errorf("devset %s: %w", name, err)
	}
	s := Set{Name: name, About: about, Catalog: catalogFile, Queries: queries, keys: make([]string, len(entries))}
	for i, e := range entries {
		s.keys[i] = e.Name
	}
	return s, nil
}
