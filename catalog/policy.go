package catalog

import (
	"fmt"
	"strings"
)

// Rule is one layer of allow/deny lists. An entry matches a tool name, a tool id, the name (or
// "mcp:<server>:<name>") a server lists a tool under, "listed:<server>:<name>" (that listed name exactly,
// case included, and nothing else: see ListedToolSelector), "source:<source>",
// "server:<name>" (the MCP server of an mcp tool: its SourceName), "group:<name>", "annotation:<hint>" or "*";
// a "*" inside an entry matches any run of characters ("mcp:github:*", "browser_*", "server:git*"). Matching
// ignores case, so a deny entry cannot be dodged by capitalisation.
//
// "annotation:readOnly", "annotation:destructive", "annotation:idempotent" and "annotation:openWorld" (the
// MCP names with "Hint" are accepted too) match a tool by its Behavior: what its annotations say if it is
// trusted, the strict MCP defaults if it is not. So {Allow: ["annotation:readOnly"]} is a read-only session that
// no untrusted server can claim its way into, and {Ask: ["annotation:destructive"]} asks before every tool that
// may destroy something, including every tool of an untrusted server.
//
// A tool passes a layer when no Deny entry matches and, if Allow is non-empty, some Allow entry matches. An empty
// Allow list does not restrict; to allow nothing, deny "*". Ask does not filter: a tool an Ask entry of any
// layer matches needs approval before every call (see NeedsApproval), unless an AutoApprove entry of that same
// layer matches it too. AutoApprove (the per-server autoApprove lists of MCP clients) only lifts its own
// layer's Ask: it never allows a denied tool, never lifts another layer's Ask, and never approves a changed
// pinned definition (that is the approver's to accept).
type Rule struct {
	Allow       []string `json:"allow,omitempty"`
	Deny        []string `json:"deny,omitempty"`
	Ask         []string `json:"ask,omitempty"`
	AutoApprove []string `json:"autoApprove,omitempty"`
}

// Policy is the layered allow/deny filter (by tool name, id, source, server, group or annotation), applied agent → profile →
// sandbox → session. A tool must pass every layer: deny wins at every layer, and a later layer can narrow but
// never widen an earlier one.
// A Policy is read-only once in use and safe for concurrent use.
type Policy struct {
	Agent, Profile, Sandbox, Session Rule
	// Groups adds named groups: group name → tool names or ids, with "*" globs as in a Rule ("mcp:github:get_*").
	// They extend the groups tools declare themselves.
	Groups map[string][]string
}

// layers are the policy's rules in the order they apply.
func (p *Policy) layers() [4]*Rule {
	return [...]*Rule{&p.Agent, &p.Profile, &p.Sandbox, &p.Session}
}

// The names of the layers, as Verdict and Unmatched report them.
const (
	LayerAgent   = "agent"
	LayerProfile = "profile"
	LayerSandbox = "sandbox"
	LayerSession = "session"
)

var layerNames = [4]string{LayerAgent, LayerProfile, LayerSandbox, LayerSession}

// Verdict is what a policy says about one tool, with the rule that decided, for messages and logs.
type Verdict struct {
	// Allowed is false when a layer denies the tool: Layer names it, and Entry the Deny entry that matched, or
	// "" when the layer's Allow list has no entry for the tool.
	Allowed bool
	// Ask is set for an allowed tool that needs approval: Layer names the layer whose Ask entry Entry matched.
	Ask bool
	// Layer and Entry name the rule that decided (see Allowed and Ask); both are "" for a tool allowed without
	// asking, except that Layer names the layer whose AutoApprove lifted an Ask.
	Layer, Entry string
	// AutoApproved is the AutoApprove entry that lifted an Ask of its layer ("" when none did); AskLifted is
	// that Ask entry. A later layer may still ask (then Ask is set as well).
	AutoApproved, AskLifted string
}

// String says what decided, for a log line or a message: `denied by agent deny "*_delete*"`, `not in the
// session allow list`, `ask by agent ask "annotation:destructive"`, "allowed".
func (v Verdict) String() string {
	switch {
	case !v.Allowed && v.Entry == "":
		return fmt.Sprintf("not in the %s allow list", v.Layer)
	case !v.Allowed:
		return fmt.Sprintf("denied by %s deny %q", v.Layer, v.Entry)
	case v.Ask:
		return fmt.Sprintf("ask by %s ask %q", v.Layer, v.Entry)
	case v.AutoApproved != "":
		return fmt.Sprintf("allowed (%s autoApprove %q lifts ask %q)", v.Layer, v.AutoApproved, v.AskLifted)
	}
	return "allowed"
}

// Check is the whole policy's say on t: denied by which rule, or allowed, asking by which rule. Deny wins over
// Ask and Ask over Allow, at every layer; the first layer that denies decides, and the first that asks (and
// does not lift its own Ask with AutoApprove) is the one named. A nil policy allows everything.
func (p *Policy) Check(t *Tool) Verdict {
	if p == nil {
		return Verdict{Allowed: true}
	}
	for i, r := range p.layers() {
		for _, e := range r.Deny {
			if p.matches(e, t, true) {
				return Verdict{Layer: layerNames[i], Entry: strings.TrimSpace(e)}
			}
		}
		if len(r.Allow) > 0 && !slicesAny(r.Allow, func(e string) bool { return p.matches(e, t, false) }) {
			return Verdict{Layer: layerNames[i]}
		}
	}
	v := Verdict{Allowed: true}
	for i, r := range p.layers() {
		for _, e := range r.Ask {
			if !p.matches(e, t, true) {
				continue
			}
			if lift := p.firstMatch(r.AutoApprove, t); lift != "" {
				if v.AutoApproved == "" {
					v.AutoApproved, v.AskLifted, v.Layer = lift, strings.TrimSpace(e), layerNames[i]
				}
				break // AutoApprove lifts every Ask of its own layer
			}
			v.Ask, v.Layer, v.Entry = true, layerNames[i], strings.TrimSpace(e)
			return v
		}
	}
	return v
}

// firstMatch is the first entry of list that matches t (an unknown annotation matches nothing: AutoApprove
// only ever relaxes, so it must not fail open), or "".
func (p *Policy) firstMatch(list []string, t *Tool) string {
	for _, e := range list {
		if p.matches(e, t, false) {
			return strings.TrimSpace(e)
		}
	}
	return ""
}

func slicesAny(list []string, f func(string) bool) bool {
	for _, e := range list {
		if f(e) {
			return true
		}
	}
	return false
}

// Unmatched is an entry of a policy that matches none of the tools it was checked against: often a misspelt
// tool or server name, which silently allows, denies or asks about nothing.
type Unmatched struct {
	Layer string // LayerAgent, ...
	List  string // "allow", "deny", "ask" or "autoApprove"
	Entry string
}

// Unmatched lists the entries of every layer that match none of tools, in layer order and then in the order
// of each list. Entries that match by design whatever the catalog holds are never listed: "*", and annotation
// entries (a catalog may simply have no destructive tool today). An unknown annotation is Validate's to report.
func (p *Policy) Unmatched(tools []Tool) []Unmatched {
	if p == nil {
		return nil
	}
	var out []Unmatched
	for i, r := range p.layers() {
		for _, l := range []struct {
			name string
			list []string
		}{{"allow", r.Allow}, {"deny", r.Deny}, {"ask", r.Ask}, {"autoApprove", r.AutoApprove}} {
			for _, e := range l.list {
				trimmed := strings.TrimSpace(e)
				if trimmed == "" || trimmed == "*" || strings.HasPrefix(strings.ToLower(trimmed), "annotation:") {
					continue
				}
				found := false
				for j := range tools {
					if p.matches(e, &tools[j], false) {
						found = true
						break
					}
				}
				if !found {
					out = append(out, Unmatched{Layer: layerNames[i], List: l.name, Entry: trimmed})
				}
			}
		}
	}
	return out
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

// NeedsApproval reports whether an Ask entry of any layer matches t (and no AutoApprove entry of that layer
// lifts it), and which one: such a tool may only run with an approver's consent. Asking is never narrowed by a
// later layer: every layer can add to it. Check says the same with the layer.
func (p *Policy) NeedsApproval(t *Tool) (entry string, ok bool) {
	v := p.Check(t)
	return v.Entry, v.Allowed && v.Ask
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
		for _, list := range [][]string{r.Allow, r.Deny, r.Ask, r.AutoApprove} {
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
	if rest, ok := cutPrefixFold(entry, listedPrefix); ok {
		return matchesListed(rest, t)
	}
	lower := strings.ToLower(entry)
	if rest, ok := strings.CutPrefix(lower, "source:"); ok {
		return globMatch(rest, strings.ToLower(string(t.Source)))
	}
	if rest, ok := strings.CutPrefix(lower, "server:"); ok {
		return t.Source == SourceMCP && globMatch(rest, strings.ToLower(t.SourceName))
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
				m = strings.ToLower(strings.TrimSpace(m))
				if m != "" && (globMatch(m, strings.ToLower(t.Name)) || globMatch(m, strings.ToLower(t.ID()))) {
					return true
				}
			}
		}
		return false
	}
	if globMatch(lower, strings.ToLower(t.Name)) || globMatch(lower, strings.ToLower(t.ID())) {
		return true
	}
	// A name as the server lists it names the tool too, so an entry copied from a listing ("suppréssion_totale",
	// a 68-character name) reaches the tool whose id had to be made safe and short.
	if t.ListedName == "" || t.ListedName == t.Name {
		return false
	}
	listed := strings.ToLower(t.ListedName)
	return globMatch(lower, listed) || globMatch(lower, strings.ToLower(string(t.Source)+":"+t.SourceName+":")+listed)
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
