package front

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/runtime"
)

// TestApprovalFormEscapesInvisibleControls: a direction override in a tool's title, or in the arguments the
// model wrote, reaches the approval form escaped, never raw (it would reverse what the user reads).
func TestApprovalFormEscapesInvisibleControls(t *testing.T) {
	tool := &catalog.Tool{Source: catalog.SourceMCP, SourceName: "fs", Name: "wipe", Label: "Read \u202eylno\u2069 \u200dfile"}
	form := approvalRequest(&runtime.Invocation{Tool: tool, ApprovalRequired: true, ApprovalRule: "wipe",
		Arguments: json.RawMessage(`{"path":"/tmp/\u202Ecod.exe"}`)})
	for _, r := range []rune{0x202e, 0x2069, 0x200d} {
		assert.NotContains(t, form.Message, string(r), "%U reaches the form raw", r)
	}
	assert.Contains(t, form.Message, `Title: Read \u202eylno\u2069 \u200dfile`)
	assert.Contains(t, form.Message, `"path":"/tmp/\u202ecod.exe"`)
}
