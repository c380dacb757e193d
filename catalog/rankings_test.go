package catalog

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/internal/devset"
)

// The rankings goldens hold the full top ten of every query of every development set, holdout included: a change
// meant to be a pure speed-up must leave them as they are, and a ranking change shows in their diff query by
// query. The short golden keeps only the requests of at most longRequestWords content words, which the
// long-request ranking must leave alone; it is rewritten only by -update-short.
var (
	updateRankings = flag.Bool("update", false, "rewrite testdata/rankings.golden")
	updateShort    = flag.Bool("update-short", false, "rewrite testdata/rankings-short.golden")
)

const (
	rankingsGolden      = "testdata/rankings.golden"
	shortRankingsGolden = "testdata/rankings-short.golden"
)

// rankingLines ranks every query of every set and writes one line per query: set, the query, and the top ten as
// catalog positions with their scores. Scores are written to six significant digits so that a pure speed change
// that adds the same floats in another order still compares equal, and a change of order does not.
func rankingLines(t *testing.T, shortOnly bool) []string {
	t.Helper()
	sets, err := devset.Load("testdata", true)
	require.NoError(t, err)
	var lines []string
	for _, s := range sets {
		tools, err := ParseFile(s.Catalog)
		require.NoError(t, err, s.Name)
		c, err := newCatalog(tools, &Options{MaxSearchLimit: 10}, "", &counters{}, defaultRankConfig())
		require.NoError(t, err)
		pos := make(map[string]int, len(tools))
		for i := range tools {
			pos[tools[i].ID()] = i
		}
		for _, q := range s.Queries {
			if shortOnly && contentWords(q.Text) > longRequestWords {
				continue
			}
			var b strings.Builder
			fmt.Fprintf(&b, "%s\t%q\t", s.Name, q.Text)
			for i, r := range c.ix.search(q.Text, 10) {
				if i > 0 {
					b.WriteByte(' ')
				}
				fmt.Fprintf(&b, "%d:%.6g", pos[c.entries[r.doc].tool.ID()], r.score)
			}
			lines = append(lines, b.String())
		}
	}
	return lines
}

func checkRankings(t *testing.T, path string, shortOnly, update bool) {
	got := rankingLines(t, shortOnly)
	if update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(strings.Join(got, "\n")+"\n"), 0o644))
	}
	data, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./catalog -run Rankings -update (or -update-short) to create it")
	want := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	require.Len(t, got, len(want), "one line per query")
	changed := 0
	for i := range want {
		if got[i] != want[i] {
			changed++
			if changed <= 10 {
				assert.Equal(t, want[i], got[i], "ranking of line %d", i+1)
			}
		}
	}
	assert.Zero(t, changed, "queries ranked differently from %s", path)
}

// TestRankings: every query of every set ranks as recorded.
func TestRankings(t *testing.T) { checkRankings(t, rankingsGolden, false, *updateRankings) }

// TestShortRankings: requests of at most longRequestWords content words rank as recorded, whatever the
// long-request ranking does.
func TestShortRankings(t *testing.T) { checkRankings(t, shortRankingsGolden, true, *updateShort) }
