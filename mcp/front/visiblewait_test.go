package front

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestSelectorServer: tools/list waits only for the starting servers a visible selector can name, so a selector
// scoped to one server must be read as scoped, and anything else as possibly any server's.
func TestSelectorServer(t *testing.T) {
	for _, tc := range []struct {
		sel, server string
		scoped      bool
	}{
		{"server:github", "github", true},
		{"mcp:github:create_issue", "github", true},
		{"listed:my_git:show_*", "my_git", true},
		{"LISTED:mail:*", "mail", true},
		{"server:git*", "", false},
		{"mcp:*:read", "", false},
		{"send_email", "", false},
		{"annotation:readOnly", "", false},
		{"group:readers", "", false},
		{"source:mcp", "", false},
	} {
		server, scoped := selectorServer(tc.sel)
		assert.Equal(t, tc.scoped, scoped, tc.sel)
		if tc.scoped {
			assert.Equal(t, tc.server, server, tc.sel)
		}
	}
}
