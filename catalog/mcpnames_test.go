package catalog

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSafeMCPNames(t *testing.T) {
	long := strings.Repeat("x", 80)
	tests := []struct {
		name       string
		server     string
		tools      []string
		wantServer string
		wantTools  []string
	}{
		{"already safe", "github", []string{"create_issue", "get-me"}, "github", []string{"create_issue", "get-me"}},
		{"unsafe characters", "my server.io", []string{"files/read", "ölçü", "a b"}, "my_server_io",
			[]string{"files_read", "_l__", "a_b"}},
		{"collisions after sanitizing", "s", []string{"a.b", "a/b", "a b", "a_b-2"}, "s",
			[]string{"a_b", "a_b-2", "a_b-3", "a_b-2-2"}},
		{"exact duplicates", "s", []string{"x", "x", "x"}, "s", []string{"x", "x-2", "x-3"}},
		{"empty names", "", []string{"", ""}, "server", []string{"tool", "tool-2"}},
		{"server cut to 30", strings.Repeat("s", 40), []string{"t"}, strings.Repeat("s", 30), []string{"t"}},
		{"tool cut so the whole name fits 64", "github", []string{long}, "github", []string{strings.Repeat("x", 64-6-2)}},
		{"cut names collide and still fit", "github", []string{long, long + "y"}, "github",
			[]string{strings.Repeat("x", 56), strings.Repeat("x", 54) + "-2"}},
		{"no tools", "s", nil, "s", []string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			server, tools := SafeMCPNames(tc.server, tc.tools)
			assert.Equal(t, tc.wantServer, server)
			assert.Equal(t, tc.wantTools, tools)
			for _, n := range tools {
				assert.LessOrEqual(t, len(server)+2+len(n), MaxMCPToolName)
				assert.Regexp(t, `^[A-Za-z0-9_-]+$`, n)
			}
			assert.LessOrEqual(t, len(server), MaxMCPServerName)
		})
	}
}
