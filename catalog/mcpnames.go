package catalog

import (
	"strconv"

	"github.com/toolsearch/toolsearch/internal/textcut"
)

// Bounds of MCP safe names. Providers accept function names of [A-Za-z0-9_-]{1,64}; a model that calls
// an MCP tool directly sees "<server>__<tool>", so that whole name must fit, and a long server name must not eat
// the tool's part.
const (
	MaxMCPServerName = 30
	MaxMCPToolName   = 64 // len(safeServer) + len("__") + len(safeTool)
	mcpNameSeparator = "__"
)

// SafeMCPNames makes an MCP server's name and its tools' names safe: characters outside [A-Za-z0-9_-] become
// '_', the server part is cut to 30 characters, each tool name is cut so that "<server>__<tool>" fits in 64,
// and names that collide after that get "-2", "-3", ... in input order (the first keeps its name). An empty
// result becomes "server" or "tool". safeTools[i] belongs to toolNames[i]. Names that are already safe and
// short enough come back unchanged.
func SafeMCPNames(server string, toolNames []string) (safeServer string, safeTools []string) {
	safeServer = sanitizeName(server, MaxMCPServerName, "server")
	room := MaxMCPToolName - len(safeServer) - len(mcpNameSeparator)
	used := make(map[string]bool, len(toolNames))
	safeTools = make([]string, len(toolNames))
	for i, name := range toolNames {
		base := sanitizeName(name, room, "tool")
		s := base
		for n := 2; used[s]; n++ {
			suffix := "-" + strconv.Itoa(n)
			s = textcut.Prefix(base, room-len(suffix)) + suffix
		}
		used[s] = true
		safeTools[i] = s
	}
	return safeServer, safeTools
}

func sanitizeName(s string, maxLen int, empty string) string {
	b := make([]byte, 0, len(s))
	for _, r := range s {
		if len(b) >= maxLen {
			break
		}
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b = append(b, byte(r))
		default:
			b = append(b, '_')
		}
	}
	if len(b) == 0 {
		return empty
	}
	return string(b)
}
