package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/internal/suggest"
	"github.com/toolsearch/toolsearch/mcp/upstream"
	"github.com/toolsearch/toolsearch/runtime"
)

// The policy keys of the config file's "tools" object: OpenClaw's allow and deny, Claude Code's ask, and our
// groups (for group: selectors) and profiles (per-token tool sets of `mcp serve --http`).
const (
	AllowKey    = "allow"
	DenyKey     = "deny"
	AskKey      = "ask"
	GroupsKey   = "groups"
	ProfilesKey = "profiles"
)

// profileFields are the keys of one entry of tools.profiles.
var profileFields = []string{"token", AllowKey, DenyKey, AskKey}

// knownAnnotations are the annotation: selectors, as messages list them.
var knownAnnotations = []string{"annotation:readOnly", "annotation:destructive", "annotation:idempotent", "annotation:openWorld"}

// selectorPrefixes are what may come before the first ":" of a selector: the kinds of selector and the sources
// that begin a tool id.
var selectorPrefixes = []string{"source", "server", "group", "annotation", "listed", "mcp", "openclaw", "client"}

// envRef is a token written as it must be: one reference to an environment variable, and nothing else.
var envRef = regexp.MustCompile(`^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$`)

// Profile is one entry of tools.profiles: a named tool set that `mcp serve --http` gives the clients
// sending its token. Policy is the whole policy of those clients: the config's tools.allow/deny/ask (and the
// servers' disabledTools and autoApprove) as its Agent layer, the profile's rules as its Profile layer, so a
// profile can only narrow what the file allows and its ask adds to the file's.
type Profile struct {
	Name string
	// TokenEnv is the environment variable that holds the token (the NAME of "${NAME}").
	TokenEnv string
	// Token is the token itself, resolved from the environment when `mcp serve` starts (ResolveProfileTokens);
	// "" until then. It is never printed.
	Token  string
	Policy *catalog.Policy
}

// Origins is where each entry of a config file's policy came from, so that a message can name the key to edit.
// A nil *Origins (a policy from flags alone) names the keys of tools.
type Origins struct {
	// policy is nil when the file sets no policy key (and no server disables or auto-approves a tool).
	policy   *catalog.Policy
	profiles []Profile
	// origin maps an Agent-layer entry ("deny\x00mcp:github:delete_repository") to the config key that holds
	// it, so that a message can say which key to edit.
	origin map[string]string
	// servers maps a tool's source name to the server's name as configured.
	servers map[string]string
}

// controlNames are Tool Search's own tools. An allow list in the file names the tools of the servers; the
// control tools the model reaches them through stay allowed, or a file that allows only "server:github" would
// switch Tool Search off.
func controlNames() []string {
	return []string{runtime.ToolSearchCodeName, runtime.ToolSearchName, runtime.ToolDescribeName, runtime.ToolCallName}
}

// checkPolicy reads the policy keys of f: tools.allow, tools.deny, tools.ask, tools.groups, tools.profiles, and
// each server's disabledTools and autoApprove (alwaysAllow), which must already have the right types
// (checkServers). Every problem is an error naming its key; warnings name selectors that look misspelt.
func checkPolicy(f *File, servers *upstream.Config) (*Origins, []string, error) {
	pc := &Origins{origin: map[string]string{}, servers: map[string]string{}}
	var problems, warnings []string
	var selectors [][2]string // every entry of every list, with its key, for the checks that need the whole file
	list := func(path ...string) []string {
		key := FormatKey(path...)
		raw, ok, err := f.Get(key)
		if err != nil || !ok {
			return nil
		}
		var entries []string
		if json.Unmarshal(raw, &entries) != nil || string(raw) == "null" {
			problems = append(problems, listProblem(key, raw))
			return nil
		}
		for i, e := range entries {
			p, w := checkSelector(fmt.Sprintf("%s[%d]", key, i), e)
			problems, warnings = append(problems, p...), append(warnings, w...)
			selectors = append(selectors, [2]string{fmt.Sprintf("%s[%d]", key, i), e})
		}
		return entries
	}

	agent := catalog.Rule{
		Allow: list("tools", AllowKey),
		Deny:  list("tools", DenyKey),
		Ask:   list("tools", AskKey),
	}
	for _, l := range []struct {
		name    string
		entries []string
	}{{AllowKey, agent.Allow}, {DenyKey, agent.Deny}, {AskKey, agent.Ask}} {
		for _, e := range l.entries {
			pc.origin[l.name+"\x00"+strings.TrimSpace(e)] = FormatKey("tools", l.name)
		}
	}
	set := len(agent.Allow)+len(agent.Deny)+len(agent.Ask) > 0

	for _, name := range slices.Sorted(maps.Keys(servers.Servers)) {
		s := servers.Servers[name]
		source, _ := catalog.SafeMCPNames(name, nil)
		pc.servers[source] = name
		for _, l := range []struct {
			field   string
			entries []string
			rule    *[]string
			list    string
		}{
			{"disabledTools", s.DisabledTools, &agent.Deny, DenyKey},
			{"excludeTools", s.ExcludeTools, &agent.Deny, DenyKey},
			{"autoApprove", s.AutoApprove, &agent.AutoApprove, "autoApprove"},
			{"alwaysAllow", s.AlwaysAllow, &agent.AutoApprove, "autoApprove"},
		} {
			for i, e := range l.entries {
				key := FormatKey(upstream.ConfigKey, name, l.field)
				if strings.TrimSpace(e) == "" {
					problems = append(problems, fmt.Sprintf("%s[%d] is empty: write a tool name as %s lists it", key, i, name))
					continue
				}
				sel := catalog.ListedToolSelector(name, e)
				*l.rule = append(*l.rule, sel)
				pc.origin[l.list+"\x00"+sel] = key
				set = true
			}
		}
	}

	groups := map[string][]string{}
	if raw, ok, _ := f.Get(FormatKey("tools", GroupsKey)); ok {
		key := FormatKey("tools", GroupsKey)
		if json.Unmarshal(raw, &groups) != nil || groups == nil {
			problems = append(problems, fmt.Sprintf("%s must be an object of tool lists by group name, for example "+
				`{"readers": ["mcp:github:get_*", "mcp:fs:read_*"]} (got %s)`, key, describeRaw(raw)))
			groups = map[string][]string{}
		}
		for _, g := range slices.Sorted(maps.Keys(groups)) {
			for i, m := range groups[g] {
				if strings.TrimSpace(m) == "" {
					problems = append(problems, fmt.Sprintf("%s[%d] is empty", FormatKey("tools", GroupsKey, g), i))
				}
			}
		}
		set = true
	}

	withControl := func(r catalog.Rule) catalog.Rule {
		if len(r.Allow) > 0 {
			r.Allow = append(slices.Clone(r.Allow), controlNames()...)
		}
		return r
	}
	if set {
		pc.policy = &catalog.Policy{Agent: withControl(agent), Groups: groups}
	}

	profiles, p := checkProfiles(f, list)
	problems = append(problems, p...)
	for _, prof := range profiles {
		prof.Policy = &catalog.Policy{Agent: withControl(agent), Profile: withControl(prof.rule), Groups: groups}
		pc.profiles = append(pc.profiles, prof.Profile)
	}
	for _, sel := range selectors {
		p, w := checkSelectorTarget(sel[0], sel[1], servers, groups)
		problems, warnings = append(problems, p...), append(warnings, w...)
	}
	if len(problems) > 0 {
		return nil, nil, errors.New(strings.Join(problems, "; "))
	}
	return pc, warnings, nil
}

// listProblem says what is wrong with a policy list that is not an array of strings, and what to write.
func listProblem(key string, raw json.RawMessage) string {
	var v any
	_ = json.Unmarshal(raw, &v)
	switch v := v.(type) {
	case string:
		return fmt.Sprintf("%s must be an array of selectors, not one string: write [%q]", key, v)
	case []any:
		for i, e := range v {
			if _, ok := e.(string); !ok {
				return fmt.Sprintf("%s[%d] must be a selector in quotes, such as \"server:github\" or \"mcp:fs:read_*\", "+
					"not %s", key, i, describeRaw(mustJSON(e)))
			}
		}
	}
	return fmt.Sprintf("%s must be an array of selectors, for example %s (got %s)", key,
		`["server:github", "mcp:fs:read_*", "annotation:readOnly"]`, describeRaw(raw))
}

// checkSelectorTarget checks what a selector names against the rest of the file: a group must be one of
// tools.groups (a group that is not there matches nothing, ever), a server one of mcpServers, and "mcp:<server>"
// without a tool name, which matches no tool (in allow it hides every tool), is named with the selector meant.
func checkSelectorTarget(key, entry string, servers *upstream.Config, groups map[string][]string) (problems, warnings []string) {
	e := strings.TrimSpace(entry)
	prefix, name, _ := strings.Cut(e, ":")
	if strings.Contains(name, "*") {
		return nil, nil
	}
	var names, sources []string
	if servers != nil {
		for _, n := range slices.Sorted(maps.Keys(servers.Servers)) {
			source, _ := catalog.SafeMCPNames(n, nil)
			names, sources = append(names, n), append(sources, source)
		}
	}
	switch strings.ToLower(prefix) {
	case "group":
		if _, ok := groups[name]; ok {
			return nil, nil
		}
		if len(groups) == 0 {
			return []string{fmt.Sprintf("%s %q names a group, and tools.groups defines none: define it, for example "+
				"\"groups\": {%q: [\"mcp:github:get_*\"]}", key, entry, name)}, nil
		}
		known := slices.Sorted(maps.Keys(groups))
		best, _ := suggest.Closest(name, known)
		return []string{fmt.Sprintf("%s %q names no group of tools.groups: did you mean \"group:%s\"? (groups: %s)",
			key, entry, best, strings.Join(known, ", "))}, nil
	case "server":
		if len(sources) == 0 || slices.Contains(sources, name) || slices.Contains(names, name) {
			return nil, nil
		}
		best, d := suggest.Closest(name, sources)
		if d >= 0 && d <= 2 {
			return nil, []string{fmt.Sprintf("%s %q names no server of %s, so it matches no tool: did you mean "+
				"\"server:%s\"?", key, entry, upstream.ConfigKey, best)}
		}
		return nil, []string{fmt.Sprintf("%s %q names no server of %s, so it matches no tool (servers: %s)", key, entry,
			upstream.ConfigKey, strings.Join(sources, ", "))}
	case "mcp":
		if name == "" || strings.Contains(name, ":") {
			return nil, nil
		}
		msg := fmt.Sprintf("%s %q names a server without a tool, so it matches no tool", key, entry)
		if strings.HasSuffix(strings.SplitN(key, "[", 2)[0], "."+AllowKey) {
			msg += " (and in allow, every other tool is hidden)"
		}
		msg += fmt.Sprintf(": write \"mcp:%s:*\" for every tool of %s, or \"mcp:%[1]s:<tool name>\" for one", name, name)
		if slices.Contains(sources, name) {
			return []string{msg}, nil
		}
		return nil, []string{msg}
	}
	return nil, nil
}

// profileEntry is a profile while it is read: its rules apart, to build its policy from.
type profileEntry struct {
	Profile
	rule catalog.Rule
}

// checkProfiles reads tools.profiles. A token must be a reference to an environment variable: a token written
// in the file would be read by everything that reads the file (editors, backups, dotfile repositories), and
// `config get` would have to print it.
func checkProfiles(f *File, list func(path ...string) []string) ([]*profileEntry, []string) {
	key := FormatKey("tools", ProfilesKey)
	raw, ok, _ := f.Get(key)
	if !ok {
		return nil, nil
	}
	var entries map[string]map[string]json.RawMessage
	if json.Unmarshal(raw, &entries) != nil || entries == nil {
		return nil, []string{fmt.Sprintf("%s must be an object of profiles by name, for example "+
			`{"ci": {"token": "${CI_AGENT_TOKEN}", "allow": ["annotation:readOnly"]}} (got %s)`, key, describeRaw(raw))}
	}
	var problems []string
	var out []*profileEntry
	byToken := map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(entries)) {
		entry := entries[name]
		pkey := FormatKey("tools", ProfilesKey, name)
		if entry == nil {
			problems = append(problems, fmt.Sprintf("%s must be a profile object with a \"token\"", pkey))
			continue
		}
		for _, field := range slices.Sorted(maps.Keys(entry)) {
			if !slices.Contains(profileFields, field) {
				best, _ := suggest.Closest(field, profileFields)
				problems = append(problems, fmt.Sprintf("unknown key %s.%s: did you mean %q? (a profile has %s)", pkey,
					field, best, strings.Join(profileFields, ", ")))
			}
		}
		prof := &profileEntry{Profile: Profile{Name: name}}
		var token string
		switch t, ok := entry["token"]; {
		case !ok:
			problems = append(problems, fmt.Sprintf("%s needs a \"token\": the bearer token its clients send, from the "+
				"environment, for example \"token\": \"${CI_AGENT_TOKEN}\"", pkey))
		case json.Unmarshal(t, &token) != nil:
			problems = append(problems, fmt.Sprintf("%s.token must be a string naming an environment variable, for "+
				"example \"${CI_AGENT_TOKEN}\" (got %s)", pkey, describeRaw(t)))
		default:
			m := envRef.FindStringSubmatch(strings.TrimSpace(token))
			if m == nil {
				// Never repeat the value: it may be the secret itself.
				problems = append(problems, fmt.Sprintf("%s.token must be a reference to an environment variable, such "+
					"as \"${CI_AGENT_TOKEN}\", not the token itself: set the variable where `mcp serve` runs and write "+
					"its name here, so the file holds no secret", pkey))
				break
			}
			prof.TokenEnv = m[1]
			if other, dup := byToken[m[1]]; dup {
				problems = append(problems, fmt.Sprintf("%s and %s have the same token (${%s}): a request's token must "+
					"decide its profile", FormatKey("tools", ProfilesKey, other), pkey, m[1]))
			}
			byToken[m[1]] = name
		}
		prof.rule = catalog.Rule{
			Allow: list("tools", ProfilesKey, name, AllowKey),
			Deny:  list("tools", ProfilesKey, name, DenyKey),
			Ask:   list("tools", ProfilesKey, name, AskKey),
		}
		out = append(out, prof)
	}
	return out, problems
}

// checkSelector refuses what cannot mean what it says (an empty entry, an unknown annotation) and warns about a
// kind of selector that looks misspelt ("sever:github" is a glob over names and ids, and matches nothing).
func checkSelector(key, entry string) (problems, warnings []string) {
	e := strings.TrimSpace(entry)
	if e == "" {
		return []string{fmt.Sprintf("%s is empty: write a tool id, a name, a glob or a selector such as server:github", key)}, nil
	}
	prefix, rest, hasPrefix := strings.Cut(e, ":")
	if strings.EqualFold(prefix, "annotation") {
		if (&catalog.Policy{Agent: catalog.Rule{Deny: []string{e}}}).Validate() != nil {
			best, _ := suggest.Closest(rest, []string{"readOnly", "destructive", "idempotent", "openWorld"})
			problems = append(problems, fmt.Sprintf("%s %q names no annotation: did you mean \"annotation:%s\"? (known: %s)",
				key, entry, best, strings.Join(knownAnnotations, ", ")))
		}
		return problems, nil
	}
	if hasPrefix && !strings.Contains(prefix, "*") && !slices.ContainsFunc(selectorPrefixes, func(p string) bool {
		return strings.EqualFold(p, prefix)
	}) {
		if best, d := suggest.Closest(prefix, selectorPrefixes); d >= 1 && d <= 2 {
			warnings = append(warnings, fmt.Sprintf("%s %q: %q is not a kind of selector, so it is matched as a tool "+
				"name or id; did you mean %q?", key, entry, prefix+":", best+":"))
		}
	}
	return nil, warnings
}

// ResolveProfileTokens reads each profile's token from the environment. A variable that is not set (or is
// empty) is an error naming it, and so are two profiles whose variables hold the same token.
func ResolveProfileTokens(profiles []Profile, getenv func(string) string) error {
	var problems []string
	seen := map[string]string{}
	for i := range profiles {
		p := &profiles[i]
		p.Token = getenv(p.TokenEnv)
		key := FormatKey("tools", ProfilesKey, p.Name, "token")
		if p.Token == "" {
			problems = append(problems, fmt.Sprintf("%s names $%s, which is not set", key, p.TokenEnv))
			continue
		}
		if other, dup := seen[p.Token]; dup {
			problems = append(problems, fmt.Sprintf("profiles %q and %q get the same token from the environment "+
				"($%s and $%s): a request's token must decide its profile", other, p.Name,
				profiles[slices.IndexFunc(profiles, func(q Profile) bool { return q.Name == other })].TokenEnv, p.TokenEnv))
		}
		seen[p.Token] = p.Name
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

// WithSession returns p with a Session layer from the command line's --allow and --deny (nil when both are
// empty and p is nil).
func WithSession(p *catalog.Policy, allow, deny []string) *catalog.Policy {
	if len(allow) == 0 && len(deny) == 0 {
		return p
	}
	out := &catalog.Policy{}
	if p != nil {
		cp := *p
		out = &cp
	}
	out.Session = catalog.Rule{Allow: allow, Deny: deny}
	if len(allow) > 0 {
		out.Session.Allow = append(slices.Clone(allow), controlNames()...)
	}
	return out
}

// UnmatchedWarnings names every selector of p that matches none of tools, with the key (or flag) that holds
// it, for the warning at start. The control tools the loader adds to allow lists are not the user's entries.
func (pc *Origins) UnmatchedWarnings(p *catalog.Policy, profile string, tools []catalog.Tool) []string {
	var out []string
	for _, u := range p.Unmatched(tools) {
		if u.List == AllowKey && slices.Contains(controlNames(), u.Entry) {
			continue
		}
		entry := u.Entry
		if name, ok := catalog.ListedToolName(entry); ok {
			entry = name // as the file spells it
		}
		out = append(out, fmt.Sprintf("%s %q matches no tool", pc.KeyOf(u, profile), entry))
	}
	return out
}

// Server is the name of the server as configured whose tools have source name source (the name made safe in
// tool ids), or "" when no server of the file has it.
func (pc *Origins) Server(source string) string {
	if pc == nil {
		return ""
	}
	return pc.servers[source]
}

// KeyOf is the config key (or flag) that holds an entry of the policy.
func (pc *Origins) KeyOf(u catalog.Unmatched, profile string) string {
	switch u.Layer {
	case catalog.LayerAgent:
		if pc != nil {
			if k, ok := pc.origin[u.List+"\x00"+u.Entry]; ok {
				return k
			}
		}
		return FormatKey("tools", u.List)
	case catalog.LayerProfile:
		return FormatKey("tools", ProfilesKey, profile, u.List)
	case catalog.LayerSession:
		return "--" + u.List
	}
	return u.Layer + " " + u.List
}

// AllowHint says how the user could let tool through without being asked (for a verdict that asks) or at all
// (for one that denies), naming the keys to edit: `add "get_issue" to mcpServers.github.autoApprove, or remove
// "annotation:destructive" from tools.ask`. profile names the profile whose policy gave v, if any.
func (pc *Origins) AllowHint(tool *catalog.Tool, v catalog.Verdict, profile string) string {
	layerKey := func(list string) string {
		return pc.KeyOf(catalog.Unmatched{Layer: v.Layer, List: list, Entry: v.Entry}, profile)
	}
	server := ""
	if pc != nil && tool.Source == catalog.SourceMCP {
		server = pc.servers[tool.SourceName]
	}
	switch {
	case !v.Allowed && v.Entry == "":
		return fmt.Sprintf("add %q to %s", tool.ID(), layerKey(AllowKey))
	case !v.Allowed:
		key, entry := layerKey(DenyKey), v.Entry
		if name, ok := catalog.ListedToolName(entry); ok {
			entry = name // as the file spells it
		}
		return fmt.Sprintf("remove %q from %s", entry, key)
	case v.Ask:
		remove := fmt.Sprintf("remove %q from %s", v.Entry, layerKey(AskKey))
		if v.Layer == catalog.LayerAgent && server != "" {
			listed := tool.ListedName
			if listed == "" {
				listed = tool.Name
			}
			return fmt.Sprintf("add %q to %s, or %s", listed,
				FormatKey(upstream.ConfigKey, server, "autoApprove"), remove)
		}
		return remove
	}
	return ""
}
