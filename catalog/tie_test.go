package catalog

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/internal/boundsdoc"
)

// TestShippedBounds: the bounds of this package are the ones docs/bounds.md states.
func TestShippedBounds(t *testing.T) {
	boundsdoc.Check(t, "catalog", map[string]any{"maxTied": maxTied})
}

func searchIDs(t *testing.T, c *Catalog, q string, limit int) []string {
	t.Helper()
	hits, err := c.Search(context.Background(), q, limit)
	require.NoError(t, err)
	var ids []string
	for _, h := range hits {
		ids = append(ids, h.ID)
	}
	return ids
}

// firstScores are the first stage's scores of ids for q.
func firstScores(t *testing.T, c *Catalog, q string, ids ...string) []float64 {
	t.Helper()
	xs, err := c.Explain(context.Background(), q, 1, ids...)
	require.NoError(t, err)
	var out []float64
	for _, id := range ids {
		for _, x := range xs {
			if x.ID == id {
				out = append(out, x.FirstStage)
			}
		}
	}
	require.Len(t, out, len(ids))
	return out
}

// Two endpoints of one converter differ only in "to" and "from", stop words the first stage does not read: it
// scores them exactly alike, and id order put convert_from_pdf first whatever the request said. The request's
// "to pdf" or "from pdf", next to the same word in one name, decides, both ways.
func TestTieBreakNamedStopWords(t *testing.T) {
	tools := []Tool{
		{Source: SourceMCP, SourceName: "docs", Name: "convert_from_pdf", Description: "Convert between a PDF file and a Word document."},
		{Source: SourceMCP, SourceName: "docs", Name: "convert_to_pdf", Description: "Convert between a PDF file and a Word document."},
	}
	c, err := New(tools, nil)
	require.NoError(t, err)
	from, to := tools[0].ID(), tools[1].ID()

	q := "convert my word document to pdf"
	s := firstScores(t, c, q, from, to)
	require.Equal(t, s[0], s[1], "the first stage cannot tell them apart")
	assert.Equal(t, []string{to, from}, searchIDs(t, c, q, 2))
	assert.Equal(t, []string{to}, searchIDs(t, c, q, 1), "the tie is decided across the cut too")

	q = "convert this from pdf to a word document"
	s = firstScores(t, c, q, from, to)
	require.Equal(t, s[0], s[1])
	assert.Equal(t, []string{from, to}, searchIDs(t, c, q, 2))

	// A stop word anywhere in the request is no sign: "the" in both names' places would be.
	q = "convert the word document into pdf"
	assert.Equal(t, []string{from, to}, searchIDs(t, c, q, 2), "nothing tells them apart: id order")

	xs, err := c.Explain(context.Background(), "convert my word document to pdf", 2)
	require.NoError(t, err)
	require.Len(t, xs, 2)
	require.NotNil(t, xs[0].Tie)
	assert.Equal(t, to, xs[0].ID)
	assert.Equal(t, []string{from}, xs[0].Tie.With)
	assert.Equal(t, 2, xs[0].Tie.Tools)
	assert.Equal(t, tieByName, xs[0].Tie.By)
	assert.Equal(t, 1, xs[0].Tie.NameWords, "to, before pdf")
	assert.Equal(t, 0, xs[1].Tie.NameWords)
	assert.Equal(t, xs[0].Tie.TextWords, xs[1].Tie.TextWords)

	xs, err = c.Explain(context.Background(), "convert the word document into pdf", 2)
	require.NoError(t, err)
	require.NotNil(t, xs[0].Tie)
	assert.Equal(t, tieByID, xs[0].Tie.By, "explain says when only the id decided")
}

// Copies of one tool on two servers score alike on a short request, and the first stage reads only the first
// maxQueryGroups words of a long one. A word of the request past those that one copy's text has decides.
func TestTieBreakTextWords(t *testing.T) {
	tools := []Tool{
		{Source: SourceMCP, SourceName: "alpha", Name: "send_message", Description: "Send a chat message. Hosted in Europe."},
		{Source: SourceMCP, SourceName: "beta", Name: "send_message", Description: "Send a chat message. Hosted in Canada."},
	}
	c, err := New(tools, nil)
	require.NoError(t, err)
	alpha, beta := tools[0].ID(), tools[1].ID()
	q := "send a chat message"
	for i := range maxQueryGroups {
		q += fmt.Sprintf(" filler%c%c", 'a'+i/26, 'a'+i%26) // words no tool has still take a group each
	}
	q += " through the canada host"
	s := firstScores(t, c, q, alpha, beta)
	require.Equal(t, s[0], s[1], "canada is past the words the first stage reads")
	assert.Equal(t, []string{beta, alpha}, searchIDs(t, c, q, 2))
	xs, err := c.Explain(context.Background(), q, 1)
	require.NoError(t, err)
	require.NotNil(t, xs[0].Tie)
	assert.Equal(t, tieByText, xs[0].Tie.By)
	assert.Greater(t, xs[0].Tie.TextWords, float64(0))
}

// Of a tie of more than maxTied tools, the tie-break reads the maxTied with the lowest ids: the right tool among
// them comes first, one past them keeps its place in id order; the same at any limit.
func TestTieBreakReadsAtMostMaxTied(t *testing.T) {
	n := maxTied + 8
	var tools []Tool
	for i := range n {
		tools = append(tools, Tool{Source: SourceMCP, SourceName: fmt.Sprintf("s%03d", i), Name: "events_after",
			Description: "List the events of a calendar."})
	}
	// One of the first maxTied by id, and one past them, say what the request asks.
	in, past := maxTied-1, maxTied+3
	tools[in].Name, tools[past].Name = "events_before", "events_before"
	c, err := New(tools, nil)
	require.NoError(t, err)
	q := "list calendar events before friday"
	s := firstScores(t, c, q, tools[0].ID(), tools[in].ID(), tools[past].ID())
	require.Equal(t, s[0], s[1])
	require.Equal(t, s[0], s[2])
	for _, limit := range []int{1, 3, 20} {
		ids := searchIDs(t, c, q, limit)
		assert.Equal(t, tools[in].ID(), ids[0], "limit %d", limit)
		if limit > 1 {
			assert.Equal(t, tools[0].ID(), ids[1], "then id order")
			assert.NotContains(t, ids, tools[past].ID(), "past the tools read: id order")
		}
	}
	xs, err := c.Explain(context.Background(), q, 1, tools[past].ID())
	require.NoError(t, err)
	require.Len(t, xs, 2)
	assert.Equal(t, tieByName, xs[0].Tie.By)
	assert.Equal(t, n, xs[0].Tie.Tools)
	assert.Len(t, xs[0].Tie.With, maxTied, "the first maxTied of the others")
	assert.Equal(t, tieByUnread, xs[1].Tie.By)
	assert.Equal(t, past+1, xs[1].Rank, "in id order after the tools read")
}

// BenchmarkSearchTie is the tie-break's worst case: a tie of maxTied look-alike tools at the first place, every
// name with a stop word the request has beside the same word ("read"), against the same catalog whose names have
// none, where the tie costs one bit a tool ("unread").
func BenchmarkSearchTie(b *testing.B) {
	for _, kind := range []struct{ name, word string }{{"read", "before"}, {"unread", "prior"}} {
		b.Run(kind.name, func(b *testing.B) {
			tools := synthTools(1000)
			for i := range maxTied {
				tools = append(tools, Tool{Source: SourceMCP, SourceName: fmt.Sprintf("cal%03d", i),
					Name: "events_" + kind.word, Description: "List the events of a calendar."})
			}
			c, err := New(tools, nil)
			require.NoError(b, err)
			q := "list calendar events " + kind.word + " friday"
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Search(ctx, q, 10); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
