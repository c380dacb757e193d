package runtime

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/internal/textcut"
)

// Bounds of directory mode: one line per trusted tool, the whole directory small enough for any system prompt.
const (
	MaxDirectoryBytes       = 18_000 // the whole directory text; bytes, so never more characters either
	MaxDirectoryDescription = 180    // characters of each tool's description
	MaxLikelySchemas        = 4      // tool schemas exposed directly for the turn
)

const (
	directoryHeader = "## Tool directory\n" +
		"More tools are available than are declared. Each line is `- <name> (<source>): <what it does>`. " +
		"Call tool_describe with a name to load its parameters, then tool_call to run it; " +
		"use tool_search to find tools by what they do."
	directoryEmpty = "## Tool directory\nNo further tools are available."
)

// directoryIdentifier reports whether a name or source name may be printed: [A-Za-z0-9][A-Za-z0-9_.:-]{0,127}.
// Anything else could smuggle text into the system prompt.
func directoryIdentifier(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case i > 0 && (c == '_' || c == '.' || c == ':' || c == '-'):
		default:
			return false
		}
	}
	return true
}

// directoryText renders the bounded directory of a catalog: one line per trusted tool, sorted by name (then
// id), with the description collapsed to one line and cut at MaxDirectoryDescription characters; as many lines
// as fit in MaxDirectoryBytes with the footer, which counts the tools left out (untrusted ones, unprintable
// names, and whatever did not fit).
func directoryText(cat *catalog.Catalog) string {
	tools := cat.Tools()
	if len(tools) == 0 {
		return directoryEmpty
	}
	sort.SliceStable(tools, func(i, j int) bool {
		if tools[i].Name != tools[j].Name {
			return tools[i].Name < tools[j].Name
		}
		return tools[i].ID() < tools[j].ID()
	})
	var lines []string
	for _, t := range tools {
		if line, ok := directoryLine(t); ok {
			lines = append(lines, line)
		}
	}
	size := len(directoryHeader) + 1
	n := 0
	for ; n < len(lines); n++ {
		next := size + len(lines[n]) + 1
		if next+len(directoryFooter(len(tools)-n-1, len(tools))) > MaxDirectoryBytes {
			break
		}
		size = next
	}
	var b strings.Builder
	b.WriteString(directoryHeader)
	b.WriteByte('\n')
	for _, l := range lines[:n] {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	b.WriteString(directoryFooter(len(tools)-n, len(tools)))
	return b.String()
}

func directoryFooter(omitted, total int) string {
	if omitted == 0 {
		return fmt.Sprintf("\nAll %d tools are listed.", total)
	}
	return fmt.Sprintf("\n%d of %d tools are not listed here; find them with tool_search.", omitted, total)
}

// directoryLine renders `- <name> (<sourceName>): <description>` for a trusted tool. Untrusted tools (MCP,
// client) are never listed: their descriptions are not ours to put in a system prompt.
func directoryLine(t *catalog.Tool) (string, bool) {
	if !t.Trusted() || !directoryIdentifier(t.Name) {
		return "", false
	}
	owner := ""
	if directoryIdentifier(t.SourceName) {
		owner = " (" + t.SourceName + ")"
	}
	// Collapsed and cut after a whole word; only what can be shown is read, however long the description.
	desc := textcut.WordsRunes(t.Description, MaxDirectoryDescription, "...")
	if desc == "" {
		desc = "No description."
	}
	return "- " + t.Name + owner + ": " + desc, true
}

// likelyTools picks up to MaxLikelySchemas cataloged tools to expose with their schemas this turn: the tools
// the run requires first, then the best matches of the user's message by the catalog's ranker. Only trusted
// tools whose name is unique in the catalog qualify: the model calls them by name, and untrusted schemas stay
// behind describe. A match is only "likely" when it scores above the first match that does not fit: when many
// tools tie (a message that matches a whole family equally), exposing an arbitrary few would mislead the model.
func (r *Run) likelyTools(ctx context.Context) []*catalog.Tool {
	var out []*catalog.Tool
	st := r.cur()
	taken := make(map[string]bool)
	eligible := func(t *catalog.Tool) bool {
		return !taken[t.Name] && t.Trusted() && len(st.byName[t.Name]) == 1 && !r.control[t.Name] &&
			st.direct[t.Name] == nil && r.allowed(t)
	}
	for _, want := range r.req.RequiredTools {
		if t, err := st.cat.Lookup(want); err == nil && eligible(t) && len(out) < MaxLikelySchemas {
			taken[t.Name] = true
			out = append(out, t)
		}
	}
	slots := MaxLikelySchemas - len(out)
	if strings.TrimSpace(r.req.UserMessage) == "" || slots == 0 {
		return out
	}
	hits, err := st.cat.Search(ctx, r.req.UserMessage, r.rt.cfg.MaxSearchLimit)
	if err != nil {
		return out
	}
	type candidate struct {
		tool  *catalog.Tool
		score float64
	}
	var candidates []candidate
	for _, h := range hits {
		if t, err := st.cat.Lookup(h.ID); err == nil && eligible(t) {
			taken[t.Name] = true
			candidates = append(candidates, candidate{t, h.Score})
		}
	}
	if len(candidates) > slots {
		threshold := candidates[slots].score
		for slots > 0 && candidates[slots-1].score <= threshold {
			slots--
		}
		candidates = candidates[:slots]
	}
	for _, c := range candidates {
		out = append(out, c.tool)
	}
	return out
}
