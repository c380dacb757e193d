package catalog

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// firstStageConfig is the default configuration without the learned ranking: the tests of the first stage's
// mechanisms compare its scores, which the learned ranking replaces for long requests.
func firstStageConfig() rankConfig {
	cfg := defaultRankConfig()
	cfg.weights = nil
	return cfg
}

// A name written as one run of letters is found by the words it is made of, as the catalog's text spells them;
// a long word the catalog has no parts for stays whole.
func TestJoinedNameSplit(t *testing.T) {
	tools := []Tool{
		{Source: SourceMCP, SourceName: "games", Name: "getplatformlist", Description: "Returns every gaming system."},
		{Source: SourceMCP, SourceName: "games", Name: "get_game_details", Description: "Details of one game on a platform."},
		{Source: SourceMCP, SourceName: "games", Name: "list_releases", Description: "Releases of the week."},
		{Source: SourceMCP, SourceName: "misc", Name: "zqxwvbnmkl", Description: "Something else."},
		{Source: SourceMCP, SourceName: "misc", Name: "database_backup", Description: "Back up the database: its data, base tables included."},
	}
	c, err := New(tools, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"get", "platform", "list"}, c.ix.segment("getplatformlist"))
	assert.Nil(t, c.ix.segment("zqxwvbnmkl"), "no known parts")
	assert.Nil(t, c.ix.segment("platform"), "a known word is not split into itself")
	assert.Equal(t, []string{"data", "base"}, c.ix.segment("database"))
	assert.Nil(t, c.ix.splitName("database"), "a word the catalog's text writes stays whole")
	assert.False(t, c.ix.nameHasPart("database_backup", "bas"))
	hits, err := c.Search(context.Background(), "platform list", 3)
	require.NoError(t, err)
	require.NotEmpty(t, hits)
	assert.Equal(t, "mcp:games:getplatformlist", hits[0].ID)
	x, err := c.Explain(context.Background(), "platform list", 1)
	require.NoError(t, err)
	assert.Contains(t, x[0].Words[0].Fields, "name")
}

// A single letter or digit of a request is a weak hint towards the tool that has it; the letter after an
// apostrophe is not.
func TestSingleLetterHint(t *testing.T) {
	tools := []Tool{
		{Source: SourceMCP, SourceName: "m", Name: "solve_first", Description: "Solve the equation for a variable.",
			Parameters: []byte(`{"type":"object","properties":{"x":{"type":"number"}}}`)},
		{Source: SourceMCP, SourceName: "m", Name: "solve_second", Description: "Solve the equation for a variable.",
			Parameters: []byte(`{"type":"object","properties":{"b":{"type":"number"}}}`)},
	}
	ctx := context.Background()
	on, err := New(tools, nil)
	require.NoError(t, err)
	require.Positive(t, on.ix.cfg.singleHint)
	cfg := defaultRankConfig()
	cfg.singleHint = 0
	off, err := newCatalog(tools, nil, "", &counters{}, cfg)
	require.NoError(t, err)
	q := "solve the equation for b"
	hits, err := on.Search(ctx, q, 2)
	require.NoError(t, err)
	require.Len(t, hits, 2)
	assert.Equal(t, "mcp:m:solve_second", hits[0].ID, "the tool with b")
	assert.Greater(t, hits[0].Score, hits[1].Score)
	hits, err = off.Search(ctx, q, 2)
	require.NoError(t, err)
	require.Len(t, hits, 2)
	assert.Equal(t, hits[0].Score, hits[1].Score, "without the hint the twins tie")
	assert.Empty(t, on.ix.parseQuery("what's the equation").groups[1:], "no hint from 's")
	assert.True(t, singleHint("3"))
	assert.False(t, singleHint("a"))
}
