package catalog

import (
	"context"
	"encoding/json"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/internal/corpus"
	"github.com/toolsearch/toolsearch/signatures"
)

// corpusTools returns the 644 real tool definitions as the mcp package catalogs them: source mcp, the server's
// name and the tool names made safe per server. With trusted set they are OpenClaw tools instead, so that their
// schemas are rendered into hints too.
func corpusTools(t testing.TB, trusted bool) []Tool {
	t.Helper()
	tools, err := ParseFile(corpus.CatalogFile())
	require.NoError(t, err)
	for i := range tools {
		require.Equal(t, SourceMCP, tools[i].Source)
		if trusted {
			tools[i].Source = SourceOpenClaw
		}
	}
	return tools
}

// Every real tool definition is cataloged, described and found by its exact name and id; its hit is bounded and
// its hint renders. The runtime's own corpus test takes each tool on through schema compilation and a call.
func TestCorpusEveryTool(t *testing.T) {
	for _, trusted := range []bool{false, true} {
		tools := corpusTools(t, trusted)
		require.Len(t, tools, 644)
		c, err := New(tools, nil)
		require.NoError(t, err)
		require.Empty(t, c.Rejected())
		require.Equal(t, len(tools), c.Len())
		ctx := context.Background()
		for i := range tools {
			tool := &tools[i]
			id := tool.ID()
			d, err := c.Describe(id)
			require.NoError(t, err, id)
			assert.Equal(t, tool.Description, d.Description, "describe has the full description: %s", id)
			assert.JSONEq(t, string(tool.Parameters), string(d.Parameters), id)

			hits, err := c.Search(ctx, id, 1)
			require.NoError(t, err)
			require.NotEmpty(t, hits, id)
			assert.Equal(t, id, hits[0].ID, "an id ranks its tool first")

			// A name several servers share ("search", "read_file") is an exact match for each of them; they come
			// first, ahead of every other tool.
			same := 0
			for j := range tools {
				if strings.EqualFold(tools[j].Name, tool.Name) {
					same++
				}
			}
			hits, err = c.Search(ctx, tool.Name, DefaultMaxSearch)
			require.NoError(t, err)
			rank := -1
			for r, h := range hits {
				if h.ID == id {
					rank = r
				}
			}
			assert.True(t, rank >= 0 && rank < same, "%s: rank %d for its exact name, %d tools have it", id, rank, same)

			h := hits[max(rank, 0)]
			assert.LessOrEqual(t, len(h.Description), MaxHitDescriptionBytes, id)
			assert.True(t, utf8.ValidString(h.Description), id)
			if !trusted {
				assert.Equal(t, signatures.Unknown, h.Input, "an untrusted schema is never rendered")
				continue
			}
			assert.NotEqual(t, signatures.Unknown, h.Input, id)
			assert.LessOrEqual(t, utf8.RuneCountInString(h.Input), 300, id)
			assert.Equal(t, h.Input, signatures.Input(tool.Parameters, nil), "deterministic: %s", id)
		}
	}
}

// The corpus as one catalog: what BenchmarkNewCorpus measures is a complete build of all 644 tools.
func TestNewCorpusTwin(t *testing.T) {
	tools := corpusTools(t, false)
	a, err := New(tools, nil)
	require.NoError(t, err)
	b, err := New(tools, nil)
	require.NoError(t, err)
	require.Equal(t, 644, a.Len())
	assert.Equal(t, a.Fingerprint(), b.Fingerprint())
	for _, q := range []string{"take a screenshot of the page", "create a pull request", "stock price history"} {
		ha, err := a.Search(context.Background(), q, 8)
		require.NoError(t, err)
		hb, err := b.Search(context.Background(), q, 8)
		require.NoError(t, err)
		require.Len(t, ha, 8, q)
		assert.Equal(t, ha, hb, q)
	}
}

// BenchmarkNewCorpus builds one catalog of the 644 real tools (promise: well under a second).
func BenchmarkNewCorpus(b *testing.B) {
	tools := corpusTools(b, false)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := New(tools, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// One tool with 100 KB of parameter text and one with a 2 MiB description, in a catalog of real tools: the build
// neither fails nor copies them, hits stay bounded, and describe has the (bounded) full text.
func TestHugeToolsNeitherCrashNorBloat(t *testing.T) {
	props := map[string]any{}
	for i := range 200 {
		props["Größe_"+strings.Repeat("x", i%40)+string(rune('a'+i%26))+string(rune('0'+i/26))] = map[string]any{
			"type": "string", "description": strings.Repeat("Beschreibung der Größe — 説明 ", 18),
		}
	}
	params, err := json.Marshal(map[string]any{"type": "object", "properties": props})
	require.NoError(t, err)
	require.Greater(t, len(params), 100_000)
	wide := Tool{Source: SourceMCP, SourceName: "wide", Name: "wide_params", Description: "A tool with very many documented parameters.",
		Parameters: params}
	require.Greater(t, len(paramText(params)), 0)
	assert.LessOrEqual(t, len(paramText(params)), maxParamText)
	assert.True(t, utf8.ValidString(paramText(params)), "no multi-byte character is split")

	long := Tool{Source: SourceOpenClaw, SourceName: "long", Name: "long_description",
		Description: "Summarize a document. " + strings.Repeat("Dies ist eine sehr lange Beschreibung — とても長い説明。 ", 2<<20/64)}
	require.Greater(t, len(long.Description), 2<<20)

	base := corpusTools(t, false)
	tools := append(append([]Tool(nil), base...), wide, long)
	var c *Catalog
	extra := allocatedBy(func() { c, err = New(tools, nil) }) - allocatedBy(func() { _, _ = New(base, nil) })
	require.NoError(t, err)
	// The schema is copied once (a catalog is immutable) and decoded once for the index; the description is read
	// in place, never copied.
	assert.Less(t, extra, uint64(len(long.Description))/2,
		"building does not copy the huge description: %d more bytes allocated for the two tools", extra)
	t.Logf("the two huge tools cost %d bytes of allocation", extra)
	require.Equal(t, 646, c.Len())
	require.Empty(t, c.Rejected())

	for _, q := range []string{"wide_params", "long_description", "Größe Beschreibung", "lange Beschreibung summarize document"} {
		hits, err := c.Search(context.Background(), q, 8)
		require.NoError(t, err)
		require.NotEmpty(t, hits, q)
		raw, err := json.Marshal(hits)
		require.NoError(t, err)
		assert.Less(t, len(raw), 6<<10, "an 8-hit search stays a few KB: %q", q)
		for _, h := range hits {
			assert.LessOrEqual(t, len(h.Description), MaxHitDescriptionBytes)
		}
	}
	d, err := c.Describe("long_description")
	require.NoError(t, err)
	assert.LessOrEqual(t, len(d.Description), MaxDescribeDescriptionBytes)
	assert.True(t, strings.HasSuffix(d.Description, CutMarker))
	assert.True(t, strings.HasPrefix(d.Description, "Summarize a document. Dies ist"))
	d, err = c.Describe("wide_params")
	require.NoError(t, err)
	assert.Equal(t, string(params), string(d.Parameters))
}

// allocatedBy is how many bytes f allocated.
func allocatedBy(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
