package catalog

import "strings"

// Rule is one layer of allow/deny lists. An entry matches a tool name, a tool id, "source:<source>",
// "group:<name>" or "*"; a "*" inside an entry matches any run of characters ("mcp:github:*", "browser_*").
// Matching ignores case, so a deny entry cannot be dodged by capitalisation.
//
// A tool passes a layer when no Deny entry matches and, if Allow is non-empty, some Allow entry matches. An empty
// Allow list does not restrict; to allow nothing, deny "*".
type Rule struct {
	Allow []string `json:"allow,omitempty"`
	Deny  []string `json:"deny,omitempty"`
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

// Allows reports whether t survives every layer. A nil policy allows everything.
func (p *Policy) Allows(t *Tool) bool {
	if p == nil {
		return true
	}
	for _, r := range [...]*Rule{&p.Agent, &p.Profile, &p.Sandbox, &p.Session} {
		if !p.passes(r, t) {
			return false
		}
	}
	return true
}

func (p *Policy) passes(r *Rule, t *Tool) bool {
	for _, e := range r.Deny {
		if p.matches(e, t) {
			return false
		}
	}
	if len(r.Allow) == 0 {
		return true
	}
	for _, e := range r.Allow {
		if p.matches(e, t) {
			return true
		}
	}
	return false
}

func (p *Policy) matches(entry string, t *Tool) bool {
	entry = strings.TrimSpace(entry)
	if entry == "" {
		return false
	}
	lower := strings.ToLower(entry)
	if rest, ok := strings.CutPrefix(lower, "source:"); ok {
		return globMatch(rest, strings.ToLower(string(t.Source)))
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
