package config

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/toolsearch/toolsearch/internal/json5"
	"github.com/toolsearch/toolsearch/mcp/upstream"
	"github.com/toolsearch/toolsearch/runtime"
)

// UnsetHint names the key the file does have where keyPath has none, when it is nearly the one asked for:
// `config get mcpServers.memroy` in a file with mcpServers.memory.
func UnsetHint(f *File, keyPath []string) string {
	for i := range keyPath {
		text, ok, _ := f.Show(FormatKey(keyPath[:i]...))
		if i == 0 {
			text, ok = string(f.Bytes()), true
		}
		if !ok {
			return ""
		}
		v, err := json5.Parse([]byte(text))
		if err != nil || v.Kind != json5.Object {
			return ""
		}
		if v.Member(keyPath[i]) != nil {
			continue
		}
		var keys []string
		for _, m := range v.Members {
			keys = append(keys, m.Key)
			// A key with dots in it, asked for without brackets: mcpServers.my.server for "my.server".
			for j := i + 2; j <= len(keyPath); j++ {
				if m.Key == strings.Join(keyPath[i:j], ".") {
					fixed := append(append(slices.Clone(keyPath[:i]), m.Key), keyPath[j:]...)
					return fmt.Sprintf("did you mean %s?", FormatKey(fixed...))
				}
			}
		}
		if best, d := closestKey(keyPath[i], keys); d >= 0 && d <= 2 {
			return fmt.Sprintf("did you mean %s?", FormatKey(append(slices.Clone(keyPath[:i]), best)...))
		}
		return ""
	}
	return ""
}

// CheckEdit refuses an edit that writes a key toolsearch would not read: a near miss of a valid key, or a
// field of a server entry that no MCP client defines (a field another client defines is written, with a
// warning that names it as ignored). Keys elsewhere in the file are not this edit's doing; the loader warns
// about them. It also checks the servers when the edit touches them.
func CheckEdit(f *File, keyPath []string) (warnings []string, err error) {
	if keyPath[0] == upstream.ConfigKey || keyPath[0] == "tools" {
		servers, _, err := checkServers(f)
		if err != nil {
			return nil, err
		}
		// The policy keys, and the servers' tool lists that feed the policy.
		_, policyWarnings, err := checkPolicy(f, servers)
		if err != nil {
			return nil, err
		}
		warnings = append(warnings, policyWarnings...)
	}
	for _, p := range fileKeyProblems(f.Bytes(), serverFields()) {
		n := min(len(p.path), len(keyPath))
		if !slices.Equal(p.path[:n], keyPath[:n]) {
			continue
		}
		if p.refused {
			return nil, errors.New(strings.TrimSuffix(p.msg, " (it is ignored)"))
		}
		warnings = append(warnings, p.msg)
	}
	return warnings, nil
}

// policyKeyDocs are the policy keys of "tools": `config keys` lists them (typ, short) and the README's table
// is generated from them (typ, doc).
var policyKeyDocs = []struct{ key, typ, short, doc string }{
	{AllowKey, "array of selectors", "the only tools offered (empty or absent: every tool not denied)",
		"The only tools offered to the model; empty or absent means every tool not denied. Tool Search's own " +
			"tools stay allowed."},
	{DenyKey, "array of selectors", "tools never offered: unknown to search, describe and call",
		"Tools never offered: unknown to search, describe and call in every mode, absent from off mode's " +
			"tools/list. Deny wins over ask and allow."},
	{AskKey, "array of selectors", "tools that run only after the user approves each call",
		"Tools that run only after the user approves each call (on the terminal for `call` and `run`); a " +
			"server's `autoApprove` lifts this for its tools. Ask wins over allow."},
	{GroupsKey, "object", "named tool lists for group:<name> selectors: {readers: [\"mcp:github:get_*\"]}",
		"Named lists of tool ids, names or globs for `group:<name>` selectors: `{readers: [\"mcp:github:get_*\"]}`."},
	{ProfilesKey, "object", "per-token tool sets of mcp serve --http: {ci: {token: \"${CI_TOKEN}\", allow, deny, ask}}",
		"Per-token tool sets of `mcp serve --http`: `{ci: {token: \"${CI_AGENT_TOKEN}\", allow: [...], deny: [...], " +
			"ask: [...]}}`. A profile only narrows what the keys above allow, and its `ask` adds to theirs. The token " +
			"must be a `${NAME}` reference to the environment (a token written in the file is refused); two profiles " +
			"with one token are an error."},
}

// WriteKeys lists every key a config file can set, from the same definitions that validate them.
func WriteKeys(w io.Writer) {
	var b strings.Builder
	b.WriteString("tools (policy; a selector is a tool id or name, a glob with *, server:<name>, source:<source>,\n" +
		"  group:<name> or annotation:readOnly|destructive|idempotent|openWorld):\n")
	for _, k := range policyKeyDocs {
		fmt.Fprintf(&b, "  %-20s %-20s %s\n", k.key, k.typ, k.short)
	}
	fmt.Fprintf(&b, "%s (true, false or an object of):\n", runtime.ToolSearchKey)
	for _, k := range runtime.ConfigKeys() {
		fmt.Fprintf(&b, "  %-20s %-8s default %-12s range %s\n", k.Name, k.Type, k.DefaultText(), k.RangeText()+unitOf(k))
	}
	fmt.Fprintf(&b, "%s.<name> (an object; \"command\" or \"url\" is required):\n", upstream.ConfigKey)
	fields := serverFields()
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		expected, _ := describeType(fields[name])
		fmt.Fprintf(&b, "  %-20s %s\n", name, expected)
	}
	io.WriteString(w, b.String())
}

func unitOf(k runtime.ConfigKey) string {
	if k.Unit == "" {
		return ""
	}
	return " " + k.Unit
}
