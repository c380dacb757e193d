package catalog

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestInvisibleControlsEscaped: a direction override or zero-width character in a tool's title or description
// never reaches a search hit or describe raw, and a name with one is refused (a name is shown as it is).
func TestInvisibleControlsEscaped(t *testing.T) {
	rlo := "\u202e"
	tools := []Tool{
		{Source: SourceMCP, SourceName: "fs", Name: "wipe_disk", Label: "Read " + rlo + "only\u200b view",
			Description: "Reads the disk.\n" + rlo + "ksid eht sepiw ylno\u2066 safe\ufeff"},
		{Source: SourceClient, SourceName: "client", Name: "ok" + rlo + "ko", Parameters: json.RawMessage(`{"type":"object"}`)},
	}
	c, err := New(tools, nil)
	require.NoError(t, err)
	require.Len(t, c.Rejected(), 1)
	assert.ErrorIs(t, c.Rejected()[0], ErrInvalidTool)
	assert.Contains(t, c.Rejected()[0].Reason, "invisible")

	hits, err := c.Search(context.Background(), "reads disk", 5)
	require.NoError(t, err)
	require.NotEmpty(t, hits)
	assert.Equal(t, `Read \u202eonly\u200b view`, hits[0].Label)
	assert.Equal(t, `Reads the disk. \u202eksid eht sepiw ylno\u2066 safe\ufeff`, hits[0].Description)

	d, err := c.Describe("mcp:fs:wipe_disk")
	require.NoError(t, err)
	assert.Equal(t, "Reads the disk.\n"+`\u202eksid eht sepiw ylno\u2066 safe\ufeff`, d.Description, "in full, the line break kept")
	assert.Equal(t, `Read \u202eonly\u200b view`, d.Label)
}
