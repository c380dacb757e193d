package catalog

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSearchEdgeCases(t *testing.T) {
	c := mustNew(t, sampleTools(), nil)
	ctx := context.Background()
	tests := []struct {
		name, query string
		wantFirst   string // "" means no hits at all
	}{
		{"empty", "", ""},
		{"blank", "   \t\n", ""},
		{"stop words only", "please could you do it for me", ""},
		{"unmatched", "zebra quantum harmonica", ""},
		{"punctuation only", "?!... --- ::", ""},
		{"exact id", "mcp:jira:create_issue", "mcp:jira:create_issue"},
		{"exact name", "exec", "openclaw:core:exec"},
		{"exact name inside a sentence", "use web_fetch to read https://example.com", "openclaw:core:web_fetch"},
		{"typo", "sceenshot", "mcp:playwright:browser_take_screenshot"},
		{"typo in a sentence", "take a screnshot of the page", "mcp:playwright:browser_take_screenshot"},
		{"partial word", "screensh", "mcp:playwright:browser_take_screenshot"},
		{"camelCase query", "takeScreenshot", "mcp:playwright:browser_take_screenshot"},
		{"stemming", "searching the web", "openclaw:core:web_search"},
		{"synonym", "retrieve a web page", "openclaw:core:web_fetch"},
		{"source name", "github issue", "mcp:github:create_issue"},
		{"parameter names", "owner repo title", "mcp:github:create_issue"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			hits, err := c.Search(ctx, tc.query, 0)
			require.NoError(t, err)
			if tc.wantFirst == "" {
				assert.Empty(t, hits, "never the first N tools")
				return
			}
			require.NotEmpty(t, hits)
			assert.Equal(t, tc.wantFirst, hits[0].ID, "hits: %v", ids(hits))
		})
	}
}

// TestExactNameAlwaysFirst pits an exact name against tools whose text matches the query far better.
func TestExactNameAlwaysFirst(t *testing.T) {
	var tools []Tool
	for i := range 30 {
		tools = append(tools, Tool{Source: SourceMCP, SourceName: "s", Name: fmt.Sprintf("status_report_%d", i),
			Description: "Status status status: report the status of the status page."})
	}
	tools = append(tools, Tool{Source: SourceMCP, SourceName: "z", Name: "status", Description: "Unrelated words only."},
		Tool{Source: SourceMCP, SourceName: "z", Name: "get_state", Description: "Unrelated words only."})
	c := mustNew(t, tools, nil)
	for _, q := range []string{"status", "mcp:z:status", "`status`", "get_state `status`", "call \"status\" now"} {
		hits, err := c.Search(context.Background(), q, 5)
		require.NoError(t, err)
		require.NotEmpty(t, hits)
		assert.Contains(t, []string{"mcp:z:status", "mcp:z:get_state"}, hits[0].ID, q)
		assert.Greater(t, hits[0].Score, hits[len(hits)-1].Score)
	}
	hits, err := c.Search(context.Background(), "get_state `status`", 5)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"mcp:z:status", "mcp:z:get_state"}, ids(hits[:2]), "a query may name several tools")
}

// A closing quote at the end of a quoted request is punctuation, not a quoted tool name.
func TestOneSidedQuoteNamesNoTool(t *testing.T) {
	tools := []Tool{
		{Source: SourceMCP, SourceName: "trends", Name: "Now", Description: "Get Google Trends."},
		{Source: SourceMCP, SourceName: "pdf", Name: "pdf_exporter", Description: "Export a chat into a PDF document."},
	}
	c := mustNew(t, tools, nil)
	hits, err := c.Search(context.Background(), `"I need a way to turn this chat into a PDF document now!"`, 5)
	require.NoError(t, err)
	require.NotEmpty(t, hits)
	assert.Equal(t, "mcp:pdf:pdf_exporter", hits[0].ID)
	for _, q := range []string{`export it "Now"`, "`Now`", `“Now”,`} {
		hits, err = c.Search(context.Background(), q, 5)
		require.NoError(t, err)
		require.NotEmpty(t, hits, q)
		assert.Equal(t, "mcp:trends:Now", hits[0].ID, "a name between quotes is still a name: %s", q)
	}
}

func TestSearchTiesByID(t *testing.T) {
	var tools []Tool
	for _, n := range []string{"delta", "alpha", "charlie", "bravo"} {
		tools = append(tools, Tool{Source: SourceMCP, SourceName: n, Name: "thing_" + n, Description: "Frobnicate the widget."})
	}
	c := mustNew(t, tools, nil)
	for range 5 {
		hits, err := c.Search(context.Background(), "frobnicate widget", 10)
		require.NoError(t, err)
		require.Len(t, hits, 4)
		assert.Equal(t, []string{"mcp:alpha:thing_alpha", "mcp:bravo:thing_bravo", "mcp:charlie:thing_charlie", "mcp:delta:thing_delta"}, ids(hits))
		for _, h := range hits {
			assert.Equal(t, hits[0].Score, h.Score)
		}
	}
}

func TestSearchLimit(t *testing.T) {
	c := mustNew(t, synthTools(200), &Options{SearchDefaultLimit: 5, MaxSearchLimit: 12})
	ctx := context.Background()
	tests := []struct {
		limit, want int
		err         error
	}{
		{0, 5, nil},
		{3, 3, nil},
		{12, 12, nil},
		{100, 12, nil},
		{-1, 0, ErrInvalidLimit},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.limit), func(t *testing.T) {
			hits, err := c.Search(ctx, "create list get update invoice customer", tc.limit)
			if tc.err != nil {
				require.ErrorIs(t, err, tc.err)
				assert.Equal(t, "limit must be a positive integer.", err.Error())
				return
			}
			require.NoError(t, err)
			assert.Len(t, hits, tc.want)
		})
	}
	d := mustNew(t, synthTools(200), nil)
	hits, err := d.Search(ctx, "create list get update invoice customer", 0)
	require.NoError(t, err)
	assert.Len(t, hits, DefaultSearchLimit)
	hits, err = d.Search(ctx, "create list get update invoice customer", 1000)
	require.NoError(t, err)
	assert.Len(t, hits, DefaultMaxSearch)
}

func TestSearchBatch(t *testing.T) {
	c := mustNew(t, sampleTools(), nil)
	ctx := context.Background()
	hits, err := c.SearchBatch(ctx, []string{"web search", "screenshot", "search the web", ""}, 2)
	require.NoError(t, err)
	got := ids(hits)
	assert.Equal(t, "openclaw:core:web_search", got[0], "first query's best")
	assert.Equal(t, "mcp:playwright:browser_take_screenshot", got[1], "then the second query's best")
	seen := map[string]bool{}
	for _, id := range got {
		assert.False(t, seen[id], "duplicate %s", id)
		seen[id] = true
	}
	assert.Len(t, got, 2, "limit bounds the whole answer, not each query's share")

	// Enough room: every query's best hits, interleaved by rank, still without duplicates and within limit.
	hits, err = c.SearchBatch(ctx, []string{"web search", "screenshot", "github issue"}, 5)
	require.NoError(t, err)
	got = ids(hits)
	require.Len(t, got, 5)
	assert.Equal(t, []string{"openclaw:core:web_search", "mcp:playwright:browser_take_screenshot", "mcp:github:create_issue"}, got[:3])
	hits, err = c.SearchBatch(ctx, []string{"web search", "screenshot"}, 0)
	require.NoError(t, err)
	assert.LessOrEqual(t, len(hits), DefaultSearchLimit, "no limit means the default limit for the whole answer")

	_, err = c.SearchBatch(ctx, make([]string, MaxBatchQueries+1), 0)
	require.ErrorIs(t, err, ErrTooManyQueries)
	_, err = c.SearchBatch(ctx, make([]string, MaxBatchQueries), 0)
	require.NoError(t, err)
	_, err = c.SearchBatch(ctx, []string{"x"}, -1)
	require.ErrorIs(t, err, ErrInvalidLimit)
	hits, err = c.SearchBatch(ctx, nil, 0)
	require.NoError(t, err)
	assert.Empty(t, hits)
}

func TestUnmatched(t *testing.T) {
	c := mustNew(t, sampleTools(), nil)
	assert.Equal(t, []string{"zebra", "harmonica"}, c.Unmatched("Zebra screenshot harmonica"))
	assert.Equal(t, []string{"zebra", "quantum", "harmonica"}, c.Unmatched("please zebra quantum harmonica"))
	assert.Empty(t, c.Unmatched("please could you do it for me"), "stop words are not words to match")
	assert.Empty(t, c.Unmatched("take a screnshot"), "a typo that is fixed matches")
	assert.Empty(t, c.Unmatched(""))
}

func TestSearchCanceled(t *testing.T) {
	c := mustNew(t, sampleTools(), nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := c.Search(ctx, "web", 0)
	require.ErrorIs(t, err, context.Canceled)
	_, err = c.SearchBatch(ctx, []string{"web"}, 0)
	require.ErrorIs(t, err, context.Canceled)
}

func TestSearchHitsCarryDescriptors(t *testing.T) {
	c := mustNew(t, sampleTools(), nil)
	hits, err := c.Search(context.Background(), "web_search", 1)
	require.NoError(t, err)
	require.Len(t, hits, 1)
	tool, err := c.Lookup("web_search")
	require.NoError(t, err)
	assert.Equal(t, c.Descriptor(tool), hits[0].Descriptor)
	assert.Equal(t, "Web Search", hits[0].Label)
}

func TestHugeQueryIsBounded(t *testing.T) {
	c := mustNew(t, sampleTools(), nil)
	q := ""
	for i := range 5000 {
		q += fmt.Sprintf("word%d ", i)
	}
	hits, err := c.Search(context.Background(), q+" screenshot", 0)
	require.NoError(t, err)
	assert.Empty(t, hits, "words past the query bound are not read")
}

func TestStem(t *testing.T) {
	same := [][]string{
		{"create", "creates", "created", "creating", "creation"},
		{"list", "lists", "listed", "listing"},
		{"repository", "repositories"},
		{"notify", "notifies", "notified", "notification", "notifications"},
		{"run", "running", "runs"},
		{"stop", "stopped", "stopping"},
		{"schedule", "scheduled", "scheduling", "schedules"},
		{"address", "addresses"},
		{"box", "boxes"},
		{"id", "ids"},
		{"movie", "movies"},
		{"cookie", "cookies"},
		{"category", "categories"},
	}
	for _, group := range same {
		for _, w := range group[1:] {
			assert.Equal(t, stem(group[0]), stem(w), "%s vs %s", group[0], w)
		}
	}
	for _, w := range []string{"status", "string", "news", "add", "embed", "s3", "ec2"} {
		assert.NotEmpty(t, stem(w))
	}
	assert.Equal(t, "status", stem("status"))
	assert.Equal(t, "string", stem("string"))
	assert.Equal(t, "add", stem("added"))
}

// TestStemJoinsPluralsOfRealCatalogs checks the stemmer against every word of the development sets' catalogs and
// requests: a word of four letters or more and its plural, when both occur, share a stem. "movie" and "movies"
// once did not, and every request for a movie missed the tools that find movies.
func TestStemJoinsPluralsOfRealCatalogs(t *testing.T) {
	// Plurals that stay apart: different words (news, series, https, invitees), and plurals of words in -i and
	// -u, which the rule that keeps "analysis" and "status" whole keeps whole too.
	apart := map[string]bool{"news": true, "series": true, "https": true, "invitees": true, "emojis": true, "menus": true}
	vocab := map[string]bool{}
	for _, s := range loadQualitySets(t) {
		for i := range s.tools {
			splitWords(TextOf(&s.tools[i]).String(), func(w string) { vocab[w] = true })
		}
		for _, q := range s.Queries {
			splitWords(q.Text, func(w string) { vocab[w] = true })
		}
	}
	require.Greater(t, len(vocab), 10000)
	checked := 0
	for w := range vocab {
		if len(w) < 4 || !isASCIILetters(w) || isStopWord(w) {
			continue
		}
		plurals := []string{w + "s", w + "es"}
		if strings.HasSuffix(w, "y") {
			plurals = append(plurals, w[:len(w)-1]+"ies")
		}
		for _, p := range plurals {
			if !vocab[p] || apart[p] {
				continue
			}
			checked++
			assert.Equal(t, stem(w), stem(p), "%s and %s", w, p)
		}
	}
	assert.Greater(t, checked, 500, "plural pairs checked")
}

func TestSplitWords(t *testing.T) {
	tests := map[string][]string{
		"browser_take_screenshot":  {"browser", "take", "screenshot"},
		"getHTTPResponseCode":      {"get", "http", "response", "code"},
		"web-search":               {"web", "search"},
		"mcp:github:create_issue":  {"mcp", "github", "create", "issue"},
		"s3_put_object EC2 oauth2": {"s3", "put", "object", "ec2", "oauth2"},
		"a b c":                    nil,
		"Überprüfen Straße":        {"überprüfen", "straße"},
		"searchJiraIssuesUsingJql": {"search", "jira", "issues", "using", "jql"},
	}
	for in, want := range tests {
		var got []string
		splitWords(in, func(w string) { got = append(got, w) })
		assert.Equal(t, want, got, in)
	}
}
