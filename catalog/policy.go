package catalog

import (
	"fmt"
	"strings"
)

// Rule is one layer of allow/deny lists. An entry matches a tool name, a tool id, "source:<source>",
// "group:<name>", "annotation:<hint>" or "*"; a "*" inside an entry matches any run of characters
// ("mcp:github:*", "browser_*"). Matching ignores case, so a deny entry cannot be dodged by capitalisation.
//
// "annotation:readOnly", "annotation:destructive", "annotation:idempotent" and "annotation:openWorld" (the
// MCP names with "Hint" are accepted too) match a tool by its Behavior: what its annotations say if it is
// trusted, the strict MCP defaults if it is not. So {Allow: ["annotation:readOnly"]} is a read-only session that
// no untrusted server can claim its way into, and {Ask: ["annotation:destructive"]} asks before every tool that
// may destroy something, including every tool of an untrusted server.
//
// A tool passes a layer when no Deny entry matches and, if Allow is non-empty, some Allow entry matches. An empty
// Allow list does not restrict; to allow nothing, deny "*". Ask does not filter: a tool an Ask entry of any
// layer matches needs approval before every call (see NeedsApproval).
type Rule struct {
	Allow []string `json:"allow,omitempty"`
	Deny  []string `json:"deny,omitempty"`
	Ask   []string `json:"ask,omitempty"`
}

// Policy is the layered allow/deny filter (by tool name, id, source or group), applied agent → profile →
// sandbox → session. A tool must pass every layer: deny wins at every layer, and a later layer can narrow but
// never widen an earlier one.
// A Policy is read-only once in use and safe for concurrent use.
type Policy struct {
	Agent, Profile, Sandbox, Session Rule
	// Groups adds named groups: group name → tool names or ids. They extend the groups tools declare themselves.
	Groups map[string][]string
}

// layers are the policy's rules in the order they apply.
func (p *Policy) layers() [4]*Rule {
	return [...]*Rule{&p.Agent, &p.Profile, &p.Sandbox, &p.Session}
}

// Allows reports whether t survives every layer. A nil policy allows everything.
func (p *Policy) Allows(t *Tool) bool {
	if p == nil {
		return true
	}
	for _, r := range p.layers() {
		if !p.passes(r, t) {
			return false
		}
	}
	return true
}

// NeedsApproval reports whether an Ask entry of any layer matches t, and which one: such a tool may only run
// with an approver's consent. Asking is never narrowed by a later layer: every layer can add to it.
func (p *Policy) NeedsApproval(t *Tool) (entry string, ok bool) {
	if p == nil {
		return "", false
	}
	for _, r := range p.layers() {
		for _, e := range r.Ask {
			if p.matches(e, t, true) {
				return strings.TrimSpace(e), true
			}
		}
	}
	return "", false
}

// Validate reports entries that can never mean what they say: an "annotation:" entry naming no annotation.
// Such an entry fails closed (in Deny and Ask it matches every tool, in Allow none), so a misspelt hint never
// lets through the tools it was written to stop; Validate says so before a deployment finds out.
func (p *Policy) Validate() error {
	if p == nil {
		return nil
	}
	var bad []string
	for _, r := range p.layers() {
		for _, list := range [][]string{r.Allow, r.Deny, r.Ask} {
			for _, e := range list {
				if rest, ok := strings.CutPrefix(strings.ToLower(strings.TrimSpace(e)), "annotation:"); ok && annotationHint(rest) == nil {
					bad = append(bad, fmt.Sprintf("%q", e))
				}
			}
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%w: unknown annotation in %s (known: annotation:readOnly, annotation:destructive, "+
			"annotation:idempotent, annotation:openWorld)", ErrInvalidPolicy, strings.Join(bad, ", "))
	}
	return nil
}

// annotationHint is the Behavior field a lower-case "annotation:" name stands for, or nil.
func annotationHint(name string) func(Behavior) bool {
	switch strings.TrimSuffix(name, "hint") {
	case "readonly":
		return func(b Behavior) bool { return b.ReadOnly }
	case "destructive":
		return func(b Behavior) bool { return b.Destructive }
	case "idempotent":
		return func(b Behavior) bool { return b.Idempotent }
	case "openworld":
		return func(b Behavior) bool { return b.OpenWorld }
	}
	return nil
}

func (p *Policy) passes(r *Rule, t *Tool) bool {
	for _, e := range r.Deny {
		if p.matches(e, t, true) {
			return false
		}
	}
	if len(r.Allow) == 0 {
		return true
	}
	for _, e := range r.Allow {
		if p.matches(e, t, false) {
			return true
		}
	}
	return false
}

// matches reports whether entry matches t. An entry that cannot mean anything (an unknown annotation) matches
// when failClosed is set: a misspelt Deny or Ask entry then denies or asks about everything rather than nothing.
func (p *Policy) matches(entry string, t *Tool, failClosed bool) bool {
	entry = strings.TrimSpace(entry)
	if entry == "" {
		return false
	}
	lower := strings.ToLower(entry)
	if rest, ok := strings.CutPrefix(lower, "source:"); ok {
		return globMatch(rest, strings.ToLower(string(t.Source)))
	}
	if rest, ok := strings.CutPrefix(lower, "annotation:"); ok {
		is := annotationHint(rest)
		if is == nil {
			return failClosed
		}
		return is(t.Behavior())
	}
	if rest, ok := strings.CutPrefix(lower, "group:"); ok {
		for _, g := range t.Groups {
			if globMatch(rest, strings.ToLower(g)) {
				return true
			}
		}
		for g, members := range p.Groups {
			if !globMatch(rest, strings.ToLower(g)) {
				continue
			}
			for _, m := range members {
				if strings.EqualFold(m, t.Name) || strings.EqualFold(m, t.ID()) {
					return true
				}
			}
		}
		return false
	}
	return globMatch(lower, strings.ToLower(t.Name)) || globMatch(lower, strings.ToLower(t.ID()))
}

// globMatch matches pattern against s where '*' stands for any run of characters and nothing else is special:
// tool names never need more, and path.Match would treat '/' and '[' specially.
func globMatch(pattern, s string) bool {
	if !strings.Contains(pattern, "*") {
		return pattern == s
	}
	parts := strings.Split(pattern, "*")
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, mid := range parts[1 : len(parts)-1] {
		i := strings.Index(s, mid)
		if i < 0 {
			return false
		}
		s = s[i+len(mid):]
	}
	return len(s) >= len(last) && strings.HasSuffix(s, last)
}
