package main

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
	policyAllowKey    = "allow"
	policyDenyKey     = "deny"
	policyAskKey      = "ask"
	policyGroupsKey   = "groups"
	policyProfilesKey = "profiles"
)

// profileFields are the keys of one entry of tools.profiles.
var profileFields = []string{"token", policyAllowKey, policyDenyKey, policyAskKey}

// knownAnnotations are the annotation: selectors, as messages list them.
var knownAnnotations = []string{"annotation:readOnly", "annotation:destructive", "annotation:idempotent", "annotation:openWorld"}

// selectorPrefixes are what may come before the first ":" of a selector: the kinds of selector and the sources
// that begin a tool id.
var selectorPrefixes = []string{"source", "server", "group", "annotation", "listed", "mcp", "openclaw", "client"}

// envRef is a token written as it must be: one reference to an environment variable, and nothing else.
var envRef = regexp.MustCompile(`^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$`)

// policyProfile is one entry of tools.profiles: a named tool set that `mcp serve --http` gives the clients
// sending its token. Policy is the whole policy of those clients: the config's tools.allow/deny/ask (and the
// servers' disabledTools and autoApprove) as its Agent layer, the profile's rules as its Profile layer, so a
// profile can only narrow what the file allows and its ask adds to the file's.
type policyProfile struct {
	Name string
	// TokenEnv is the environment variable that holds the token (the NAME of "${NAME}").
	TokenEnv string
	// Token is the token itself, resolved from the environment when `mcp serve` starts (resolveProfileTokens);
	// "" until then. It is never printed.
	Token  string
	Policy *catalog.Policy
}

// policyConfig is the policy of a config file, parsed and checked.
type policyConfig struct {
	// policy is nil when the file sets no policy key (and no server disables or auto-approves a tool).
	policy   *catalog.Policy
	profiles []policyProfile
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
func checkPolicy(f *runtime.ConfigFile, servers *upstream.Config) (*policyConfig, []string, error) {
	pc := &policyConfig{origin: map[string]string{}, servers: map[string]string{}}
	var problems, warnings []string
	list := func(path ...string) []string {
		key := runtime.FormatConfigKey(path...)
		raw, ok, err := f.Get(key)
		if err != nil || !ok {
			return nil
		}
		var entries []string
		if json.Unmarshal(raw, &entries) != nil || string(raw) == "null" {
			problems = append(problems, fmt.Sprintf("%s must be an array of selectors, for example %s (got %s)", key,
				`["server:github", "mcp:fs:read_*", "annotation:readOnly"]`, describeRaw(raw)))
			return nil
		}
		for i, e := range entries {
			p, w := checkSelector(fmt.Sprintf("%s[%d]", key, i), e)
			problems, warnings = append(problems, p...), append(warnings, w...)
		}
		return entries
	}

	agent := catalog.Rule{
		Allow: list("tools", policyAllowKey),
		Deny:  list("tools", policyDenyKey),
		Ask:   list("tools", policyAskKey),
	}
	for _, l := range []struct {
		name    string
		entries []string
	}{{policyAllowKey, agent.Allow}, {policyDenyKey, agent.Deny}, {policyAskKey, agent.Ask}} {
		for _, e := range l.entries {
			pc.origin[l.name+"\x00"+strings.TrimSpace(e)] = runtime.FormatConfigKey("tools", l.name)
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
			{"disabledTools", s.DisabledTools, &agent.Deny, policyDenyKey},
			{"excludeTools", s.ExcludeTools, &agent.Deny, policyDenyKey},
			{"autoApprove", s.AutoApprove, &agent.AutoApprove, "autoApprove"},
			{"alwaysAllow", s.AlwaysAllow, &agent.AutoApprove, "autoApprove"},
		} {
			for i, e := range l.entries {
				key := runtime.FormatConfigKey(upstream.ConfigKey, name, l.field)
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
	if raw, ok, _ := f.Get(runtime.FormatConfigKey("tools", policyGroupsKey)); ok {
		key := runtime.FormatConfigKey("tools", policyGroupsKey)
		if json.Unmarshal(raw, &groups) != nil || groups == nil {
			problems = append(problems, fmt.Sprintf("%s must be an object of tool lists by group name, for example "+
				`{"readers": ["mcp:github:get_*", "mcp:fs:read_*"]} (got %s)`, key, describeRaw(raw)))
			groups = map[string][]string{}
		}
		for _, g := range slices.Sorted(maps.Keys(groups)) {
			for i, m := range groups[g] {
				if strings.TrimSpace(m) == "" {
					problems = append(problems, fmt.Sprintf("%s[%d] is empty", runtime.FormatConfigKey("tools", policyGroupsKey, g), i))
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
		pc.profiles = append(pc.profiles, prof.policyProfile)
	}
	if len(problems) > 0 {
		return nil, nil, errors.New(strings.Join(problems, "; "))
	}
	return pc, warnings, nil
}

// profileEntry is a profile while it is read: its rules apart, to build its policy from.
type profileEntry struct {
	policyProfile
	rule catalog.Rule
}

// checkProfiles reads tools.profiles. A token must be a reference to an environment variable: a token written
// in the file would be read by everything that reads the file (editors, backups, dotfile repositories), and
// `config get` would have to print it.
func checkProfiles(f *runtime.ConfigFile, list func(path ...string) []string) ([]*profileEntry, []string) {
	key := runtime.FormatConfigKey("tools", policyProfilesKey)
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
		pkey := runtime.FormatConfigKey("tools", policyProfilesKey, name)
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
		prof := &profileEntry{policyProfile: policyProfile{Name: name}}
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
					"decide its profile", runtime.FormatConfigKey("tools", policyProfilesKey, other), pkey, m[1]))
			}
			byToken[m[1]] = name
		}
		prof.rule = catalog.Rule{
			Allow: list("tools", policyProfilesKey, name, policyAllowKey),
			Deny:  list("tools", policyProfilesKey, name, policyDenyKey),
			Ask:   list("tools", policyProfilesKey, name, policyAskKey),
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

// resolveProfileTokens reads each profile's token from the environment. A variable that is not set (or is
// empty) is an error naming it, and so are two profiles whose variables hold the same token.
func resolveProfileTokens(profiles []policyProfile, getenv func(string) string) error {
	var problems []string
	seen := map[string]string{}
	for i := range profiles {
		p := &profiles[i]
		p.Token = getenv(p.TokenEnv)
		key := runtime.FormatConfigKey("tools", policyProfilesKey, p.Name, "token")
		if p.Token == "" {
			problems = append(problems, fmt.Sprintf("%s names $%s, which is not set", key, p.TokenEnv))
			continue
		}
		if other, dup := seen[p.Token]; dup {
			problems = append(problems, fmt.Sprintf("profiles %q and %q get the same token from the environment "+
				"($%s and $%s): a request's token must decide its profile", other, p.Name,
				profiles[slices.IndexFunc(profiles, func(q policyProfile) bool { return q.Name == other })].TokenEnv, p.TokenEnv))
		}
		seen[p.Token] = p.Name
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

// withSession returns p with a Session layer from the command line's --allow and --deny (nil when both are
// empty and p is nil).
func withSession(p *catalog.Policy, allow, deny []string) *catalog.Policy {
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

// unmatchedWarnings names every selector of p that matches none of tools, with the key (or flag) that holds
// it, for the warning at start. The control tools the loader adds to allow lists are not the user's entries.
func (pc *policyConfig) unmatchedWarnings(p *catalog.Policy, profile string, tools []catalog.Tool) []string {
	var out []string
	for _, u := range p.Unmatched(tools) {
		if u.List == policyAllowKey && slices.Contains(controlNames(), u.Entry) {
			continue
		}
		entry := u.Entry
		if name, ok := catalog.ListedToolName(entry); ok {
			entry = name // as the file spells it
		}
		out = append(out, fmt.Sprintf("%s %q matches no tool", pc.keyOf(u, profile), entry))
	}
	return out
}

// keyOf is the config key (or flag) that holds an entry of the policy.
func (pc *policyConfig) keyOf(u catalog.Unmatched, profile string) string {
	switch u.Layer {
	case catalog.LayerAgent:
		if pc != nil {
			if k, ok := pc.origin[u.List+"\x00"+u.Entry]; ok {
				return k
			}
		}
		return runtime.FormatConfigKey("tools", u.List)
	case catalog.LayerProfile:
		return runtime.FormatConfigKey("tools", policyProfilesKey, profile, u.List)
	case catalog.LayerSession:
		return "--" + u.List
	}
	return u.Layer + " " + u.List
}

// allowHint says how the user could let tool through without being asked (for a verdict that asks) or at all
// (for one that denies), naming the keys to edit: `add "get_issue" to mcpServers.github.autoApprove, or remove
// "annotation:destructive" from tools.ask`. profile names the profile whose policy gave v, if any.
func (pc *policyConfig) allowHint(tool *catalog.Tool, v catalog.Verdict, profile string) string {
	layerKey := func(list string) string {
		return pc.keyOf(catalog.Unmatched{Layer: v.Layer, List: list, Entry: v.Entry}, profile)
	}
	server := ""
	if pc != nil && tool.Source == catalog.SourceMCP {
		server = pc.servers[tool.SourceName]
	}
	switch {
	case !v.Allowed && v.Entry == "":
		return fmt.Sprintf("add %q to %s", tool.ID(), layerKey(policyAllowKey))
	case !v.Allowed:
		key, entry := layerKey(policyDenyKey), v.Entry
		if name, ok := catalog.ListedToolName(entry); ok {
			entry = name // as the file spells it
		}
		return fmt.Sprintf("remove %q from %s", entry, key)
	case v.Ask:
		remove := fmt.Sprintf("remove %q from %s", v.Entry, layerKey(policyAskKey))
		if v.Layer == catalog.LayerAgent && server != "" {
			listed := tool.ListedName
			if listed == "" {
				listed = tool.Name
			}
			return fmt.Sprintf("add %q to %s, or %s", listed,
				runtime.FormatConfigKey(upstream.ConfigKey, server, "autoApprove"), remove)
		}
		return remove
	}
	return ""
}
