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
	}
	c, err := New(tools, nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"get", "platform", "list"}, c.ix.segment("getplatformlist"))
	assert.Nil(t, c.ix.segment("zqxwvbnmkl"), "no known parts")
	assert.Nil(t, c.ix.segment("platform"), "a known word is not split into itself")
	hits, err := c.Search(context.Background(), "platform list", 3)
	require.NoError(t, err)
	require.NotEmpty(t, hits)
	assert.Equal(t, "mcp:games:getplatformlist", hits[0].ID)
	x, err := c.Explain(context.Background(), "platform list", 1)
	require.NoError(t, err)
	assert.Contains(t, x[0].Words[0].Fields, "name")
}
