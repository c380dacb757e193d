package catalog

import "strings"

// listedPrefix begins a policy entry that names an MCP server's tool by the name the server lists it under:
// "listed:<server>:<name>", where <server> is the server's safe name (a tool's SourceName) and <name> the listed
// name, '*' globs allowed.
const listedPrefix = "listed:"

// ListedToolSelector is the policy entry for the tools a server lists under name (as the user copied it from
// the server's listing: non-ASCII, over-long, or one of two names that make the same safe name). It matches
// Tool.ListedName exactly, case included, and never a tool id: two listed names may share a safe name, and
// only the listed name tells "rm.rf" (id rm_rf-2) from "rm_rf" (id rm_rf). server is the server's name as
// configured; it is made safe as SafeMCPNames does.
func ListedToolSelector(server, name string) string {
	safeServer, _ := SafeMCPNames(server, nil)
	return listedPrefix + safeServer + ":" + strings.TrimSpace(name)
}

// ListedToolName is the name part of a ListedToolSelector entry, as the user wrote it, and whether entry is
// one.
func ListedToolName(entry string) (string, bool) {
	rest, ok := cutPrefixFold(strings.TrimSpace(entry), listedPrefix)
	if !ok {
		return "", false
	}
	_, name, ok := strings.Cut(rest, ":")
	return name, ok
}

// UnresolvedListed returns the entries (listed names, '*' globs allowed) that match none of the names a server
// lists, in order: what a deny-like list of a server's tools names that the server does not offer under that
// name. The check is the one a ListedToolSelector entry makes, so an entry not returned here disables exactly
// the tools it matches.
func UnresolvedListed(entries, listed []string) []string {
	var out []string
	for _, e := range entries {
		pattern := strings.TrimSpace(e)
		found := false
		for _, n := range listed {
			if globMatch(pattern, n) {
				found = true
				break
			}
		}
		if !found {
			out = append(out, e)
		}
	}
	return out
}

// listedName is the name t's source listed it under: ListedName, or Name when the source gave it as it is.
func (t *Tool) listedName() string {
	if t.ListedName != "" {
		return t.ListedName
	}
	return t.Name
}

// matchesListed reports whether a "listed:" entry (prefix cut) names t: a tool of an MCP server whose safe name
// is the entry's server part, listed under a name the entry's glob matches exactly.
func matchesListed(rest string, t *Tool) bool {
	server, pattern, ok := strings.Cut(rest, ":")
	if !ok || t.Source != SourceMCP || !strings.EqualFold(server, t.SourceName) {
		return false
	}
	return globMatch(pattern, t.listedName())
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) < len(prefix) || !strings.EqualFold(s[:len(prefix)], prefix) {
		return s, false
	}
	return s[len(prefix):], true
}
