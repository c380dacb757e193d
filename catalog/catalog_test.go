package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/signatures"
)

// sampleTools is a small catalog with the shapes lookup and policy care about: a name shared by two sources,
// groups, a direct-only tool, trusted and untrusted tools.
func sampleTools() []Tool {
	obj := json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","description":"Search terms"}},"required":["query"]}`)
	return []Tool{
		{Source: SourceOpenClaw, SourceName: "core", Name: "web_search", Label: "Web Search",
			Description: "Search the web and return titles, URLs and snippets.", Parameters: obj, Groups: []string{"web"}},
		{Source: SourceOpenClaw, SourceName: "core", Name: "web_fetch", Description: "Fetch a URL and return its text.",
			Groups:       []string{"web"},
			OutputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}`)},
		{Source: SourceOpenClaw, SourceName: "core", Name: "exec", Description: "Run a shell command.", Groups: []string{"runtime"}},
		{Source: SourceMCP, SourceName: "github", Name: "create_issue", Description: "Create a new issue in a GitHub repository.",
			Parameters: json.RawMessage(`{"type":"object","properties":{"owner":{"type":"string"},"repo":{"type":"string"},"title":{"type":"string"}}}`)},
		{Source: SourceMCP, SourceName: "jira", Name: "create_issue", Description: "Create a Jira issue in a project."},
		{Source: SourceMCP, SourceName: "playwright", Name: "browser_take_screenshot", Description: "Take a screenshot of the current page."},
		{Source: SourceClient, SourceName: "client", Name: "pick_file", Description: "Ask the user to pick a file."},
		{Source: SourceOpenClaw, SourceName: "core", Name: "tool_search_code", Description: "Search and call tools from code.",
			CatalogMode: CatalogModeDirectOnly},
	}
}

func mustNew(t testing.TB, tools []Tool, opts *Options) *Catalog {
	t.Helper()
	c, err := New(tools, opts)
	require.NoError(t, err)
	return c
}

func ids(hits []Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.ID
	}
	return out
}

func TestNew(t *testing.T) {
	c := mustNew(t, sampleTools(), nil)
	assert.Equal(t, 7, c.Len(), "the direct-only tool is not cataloged")
	var got []string
	for _, tool := range c.Tools() {
		got = append(got, tool.ID())
	}
	assert.Equal(t, []string{
		"client:client:pick_file", "mcp:github:create_issue", "mcp:jira:create_issue",
		"mcp:playwright:browser_take_screenshot", "openclaw:core:exec", "openclaw:core:web_fetch", "openclaw:core:web_search",
	}, got, "sorted by id")
	assert.Equal(t, map[Source]int{SourceOpenClaw: 3, SourceMCP: 3, SourceClient: 1}, c.Sources())
	assert.Len(t, c.Fingerprint(), 64)
}

func TestNewErrors(t *testing.T) {
	tests := []struct {
		name  string
		tools []Tool
	}{
		{"duplicate id", []Tool{{Source: SourceMCP, SourceName: "s", Name: "a"}, {Source: SourceMCP, SourceName: "s", Name: "a"}}},
		{"duplicate id even if direct-only", []Tool{{Source: SourceMCP, SourceName: "s", Name: "a"},
			{Source: SourceMCP, SourceName: "s", Name: "a", CatalogMode: CatalogModeDirectOnly}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.tools, nil)
			require.ErrorIs(t, err, ErrDuplicateTool)
		})
	}
}

// A tool that cannot be cataloged is left out with its own error; the others are cataloged.
func TestNewRejectsBadToolsOneByOne(t *testing.T) {
	good := Tool{Source: SourceMCP, SourceName: "s", Name: "good"}
	tests := []struct {
		name   string
		tool   Tool
		opts   *Options
		reason string
	}{
		{"no name", Tool{Source: SourceMCP, SourceName: "s"}, nil, "a tool needs a name and a source name"},
		{"blank name", Tool{Source: SourceMCP, SourceName: "s", Name: " \t"}, nil, "a tool needs a name and a source name"},
		{"no source name", Tool{Source: SourceMCP, Name: "a"}, nil, "a tool needs a name and a source name"},
		{"unknown source", Tool{Source: "plugin", SourceName: "s", Name: "a"}, nil, `unknown source "plugin"`},
		{"long name", Tool{Source: SourceMCP, SourceName: "s", Name: strings.Repeat("n", MaxNameBytes+1)}, nil, "its name is 129 bytes long, over 128"},
		{"control character", Tool{Source: SourceMCP, SourceName: "s", Name: "a\nb"}, nil, "its name has control characters"},
		{"white space around", Tool{Source: SourceMCP, SourceName: "s", Name: "a "}, nil, "its name starts or ends with white space"},
		{"bad UTF-8", Tool{Source: SourceMCP, SourceName: "s\xff", Name: "a"}, nil, "its source name is not valid UTF-8"},
		{"reserved name", Tool{Source: SourceMCP, SourceName: "s", Name: "tool_call"}, &Options{ReservedNames: []string{"tool_search", "tool_call"}},
			"its name is reserved for a control tool"},
		{"schema not an object", Tool{Source: SourceMCP, SourceName: "s", Name: "a", Parameters: json.RawMessage(`["type"]`)}, nil,
			"its input schema is not a JSON object"},
		{"schema not JSON", Tool{Source: SourceMCP, SourceName: "s", Name: "a", Parameters: json.RawMessage(`{"type":`)}, nil,
			"its input schema is not a JSON object"},
		{"schema too large", Tool{Source: SourceMCP, SourceName: "s", Name: "a",
			Parameters: json.RawMessage(`{"description":"` + strings.Repeat("x", MaxSchemaBytes) + `"}`)}, nil,
			"its input schema is 1048594 bytes, over 1048576"},
		{"schema refused", Tool{Source: SourceMCP, SourceName: "s", Name: "a", Parameters: json.RawMessage(`{"type":"objekt"}`)},
			&Options{CheckSchema: func(id string, schema json.RawMessage) error {
				if strings.Contains(string(schema), "objekt") {
					return errors.New("objekt is no type")
				}
				return nil
			}}, "its input schema does not compile"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := New([]Tool{good, tc.tool}, tc.opts)
			require.NoError(t, err, "one bad tool never fails the catalog")
			assert.Equal(t, 1, c.Len())
			_, err = c.Lookup("mcp:s:good")
			require.NoError(t, err)
			rejected := c.Rejected()
			require.Len(t, rejected, 1)
			assert.ErrorIs(t, rejected[0], ErrInvalidTool)
			assert.Equal(t, tc.reason, rejected[0].Reason)
			assert.Contains(t, rejected[0].Error(), "left out: "+tc.reason)
			assert.LessOrEqual(t, len(rejected[0].ID), 200+len(CutMarker), "a hostile name does not make the error huge")
		})
	}
	// Direct-only and denied tools are not cataloged, so their schemas are not checked.
	direct := Tool{Source: SourceMCP, SourceName: "s", Name: "d", CatalogMode: CatalogModeDirectOnly, Parameters: json.RawMessage(`[]`)}
	c, err := New([]Tool{good, direct}, nil)
	require.NoError(t, err)
	assert.Empty(t, c.Rejected())
}

func TestNewCopiesTools(t *testing.T) {
	tools := sampleTools()
	c := mustNew(t, tools, nil)
	tools[0].Description = "changed"
	tools[0].Parameters[2] = 'X'
	tool, err := c.Lookup("web_search")
	require.NoError(t, err)
	assert.Equal(t, "Search the web and return titles, URLs and snippets.", tool.Description)
	assert.True(t, json.Valid(tool.Parameters))
}

func TestLookup(t *testing.T) {
	c := mustNew(t, sampleTools(), nil)
	tests := []struct {
		query, wantID string
	}{
		{"openclaw:core:web_search", "openclaw:core:web_search"},
		{"web_search", "openclaw:core:web_search"},
		{"  exec ", "openclaw:core:exec"},
		{"mcp:jira:create_issue", "mcp:jira:create_issue"},
		{"Web_Search", "openclaw:core:web_search"},
		{"MCP:GitHub:create_issue", "mcp:github:create_issue"},
	}
	for _, tc := range tests {
		t.Run(tc.query, func(t *testing.T) {
			tool, err := c.Lookup(tc.query)
			require.NoError(t, err)
			assert.Equal(t, tc.wantID, tool.ID())
		})
	}
}

func TestLookupAmbiguous(t *testing.T) {
	c := mustNew(t, sampleTools(), nil)
	_, err := c.Lookup("create_issue")
	var amb *AmbiguousToolError
	require.ErrorAs(t, err, &amb)
	assert.Equal(t, "create_issue", amb.Name)
	assert.Equal(t, []string{"mcp:github:create_issue", "mcp:jira:create_issue"}, amb.IDs)
	assert.Equal(t, "Ambiguous tool name: create_issue; use an exact tool id.", err.Error())
}

func TestLookupUnknown(t *testing.T) {
	c := mustNew(t, sampleTools(), nil)
	ctx := context.Background()
	tests := []struct {
		query    string
		want     string
		suggests []string
	}{
		{"web_serch", "Unknown tool id: web_serch. Did you mean: openclaw:core:web_search, openclaw:core:web_fetch? " +
			"Search the catalog and use an exact id from the results.", []string{"openclaw:core:web_search", "openclaw:core:web_fetch"}},
		{"zzqx", "Unknown tool id: zzqx. Search the catalog and use an exact id from the results.", nil},
		{"", "Unknown tool id: . Search the catalog and use an exact id from the results.", nil},
	}
	for _, tc := range tests {
		t.Run(tc.query, func(t *testing.T) {
			_, err := c.Lookup(tc.query)
			var unk *UnknownToolError
			require.ErrorAs(t, err, &unk)
			assert.Equal(t, tc.query, unk.Query)
			assert.Empty(t, unk.Suggestions, "Lookup itself does constant work")
			unk.Suggestions = c.Suggest(ctx, unk.Query, nil)
			assert.Equal(t, tc.suggests, unk.Suggestions)
			assert.Equal(t, tc.want, err.Error())
		})
	}
	got := c.Suggest(ctx, "mcp:github:create_isue", nil)
	require.NotEmpty(t, got)
	assert.LessOrEqual(t, len(got), 3)
	assert.Equal(t, "mcp:github:create_issue", got[0])
	assert.Equal(t, "mcp:github:create_issue", c.Suggest(ctx, "mcp:gitlab:create_issue", nil)[0], "the right name under the wrong source comes first")

	// The caller's filter decides what may be named, and an ended context stops the work.
	noWeb := func(t *Tool) bool { return !strings.HasPrefix(t.Name, "web_") }
	assert.NotContains(t, c.Suggest(ctx, "web_serch", noWeb), "openclaw:core:web_search")
	ended, cancel := context.WithCancel(ctx)
	cancel()
	assert.Empty(t, c.Suggest(ended, "web_serch", nil))

	// The error quotes a bounded part of a huge query.
	_, err := c.Lookup(strings.Repeat("x", 1<<20))
	assert.Less(t, len(err.Error()), 400)
}

func TestDescribe(t *testing.T) {
	c := mustNew(t, sampleTools(), nil)
	d, err := c.Describe("web_fetch")
	require.NoError(t, err)
	assert.Equal(t, "openclaw:core:web_fetch", d.ID)
	assert.JSONEq(t, `{"type":"object","properties":{}}`, string(d.Parameters), "empty parameters become an empty object")
	assert.JSONEq(t, `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}`, string(d.OutputSchema))
	assert.Equal(t, Stats{Describes: 1}, c.Stats())

	_, err = c.Describe("nope")
	var unk *UnknownToolError
	require.ErrorAs(t, err, &unk)
	assert.Equal(t, Stats{Describes: 1}, c.Stats(), "a failed describe counts nothing")
}

func TestDescriptor(t *testing.T) {
	c := mustNew(t, sampleTools(), nil)
	for _, tool := range c.Tools() {
		d := c.Descriptor(tool)
		assert.Equal(t, tool.ID(), d.ID)
		if tool.Trusted() {
			assert.Equal(t, signatures.Input(tool.Parameters, nil), d.Input)
			hint, ok := signatures.Output(tool.OutputSchema, nil)
			if len(tool.OutputSchema) > 0 && ok {
				assert.Equal(t, hint, d.Output)
			} else {
				assert.Empty(t, d.Output)
			}
		} else {
			assert.Equal(t, signatures.Unknown, d.Input, "untrusted schemas are never rendered")
			assert.Empty(t, d.Output)
		}
		assert.Equal(t, d, c.Descriptor(tool), "stable")
	}
	// A tool the catalog does not hold still gets a descriptor, rendered on the spot.
	outside := Tool{Source: SourceMCP, SourceName: "x", Name: "y", Description: "d"}
	assert.Equal(t, Descriptor{ID: "mcp:x:y", Source: SourceMCP, SourceName: "x", Name: "y", Description: "d", Input: signatures.Unknown},
		c.Descriptor(&outside))
}

func TestStats(t *testing.T) {
	c := mustNew(t, sampleTools(), nil)
	ctx := context.Background()
	_, err := c.Search(ctx, "web", 0)
	require.NoError(t, err)
	_, err = c.SearchBatch(ctx, []string{"web", "issue"}, 0)
	require.NoError(t, err)
	_, err = c.Describe("exec")
	require.NoError(t, err)
	c.RecordCall()
	assert.Equal(t, Stats{Searches: 3, Describes: 1, Calls: 1}, c.Stats())
}

func TestHandlerFunc(t *testing.T) {
	h := HandlerFunc(func(_ context.Context, args json.RawMessage) (*Result, error) {
		return &Result{Content: []Content{{Type: "text", Text: string(args)}}}, nil
	})
	r, err := h.Call(context.Background(), json.RawMessage(`{"a":1}`))
	require.NoError(t, err)
	assert.Equal(t, `{"a":1}`, r.Content[0].Text)
	b, err := json.Marshal(&Result{IsError: true, Content: []Content{{Type: "text", Text: "boom"}}})
	require.NoError(t, err)
	assert.JSONEq(t, `{"content":[{"type":"text","text":"boom"}],"isError":true}`, string(b))
}

func TestErrorsAreSentinels(t *testing.T) {
	assert.Equal(t, "limit must be a positive integer.", ErrInvalidLimit.Error())
	assert.True(t, errors.Is(ErrNoScope, ErrNoScope))
}
