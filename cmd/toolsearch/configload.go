package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/internal/suggest"
	"github.com/toolsearch/toolsearch/mcp/upstream"
	"github.com/toolsearch/toolsearch/runtime"
)

// loadedConfig is a config file as every command reads it: one parse, the same checks, the same messages.
type loadedConfig struct {
	file *runtime.ConfigFile
	// toolSearch is tools.toolSearch resolved and checked strictly (unknown keys and modes are errors);
	// toolSearchSet says whether the file sets it at all.
	toolSearch    runtime.Config
	toolSearchSet bool
	servers       *upstream.Config
	// policy is tools.allow/deny/ask/groups with the servers' disabledTools and autoApprove, as the Agent layer
	// (nil when the file sets none of them); profiles are tools.profiles, each with its whole policy; pc keeps
	// where each entry came from, for messages (allowHint, unmatchedWarnings).
	policy   *catalog.Policy
	profiles []policyProfile
	pc       *policyConfig
	// warnings name every value the runtime clamps, and what to; the command prints them.
	warnings []string
}

// errConfigNotFound is wrapped when a command needs a config file that does not exist.
var errConfigNotFound = errors.New("config file not found")

// loadConfig reads the config file at path and checks all of it: tools.toolSearch against runtime.ConfigKeys and
// every mcpServers entry against upstream.ServerConfig. A missing file is an error naming the path.
func loadConfig(path string) (*loadedConfig, error) {
	f, err := runtime.LoadConfigFile(path)
	if err != nil {
		return nil, err
	}
	if !f.Exists() {
		return nil, fmt.Errorf("%w: %s", errConfigNotFound, path)
	}
	return checkConfigFile(f)
}

// checkConfigFile checks a loaded (or edited) config file the way loadConfig does. Keys it does not read are
// warnings (the file is shared with other programs); what cannot work is an error.
func checkConfigFile(f *runtime.ConfigFile) (*loadedConfig, error) {
	lc := &loadedConfig{file: f}
	_, lc.toolSearchSet, _ = f.Get(runtime.ToolSearchKey)
	var err error
	if lc.toolSearch, lc.warnings, err = f.CheckToolSearch(); err != nil {
		return nil, fmt.Errorf("%s: %w", f.Path(), err)
	}
	var serverWarnings []string
	if lc.servers, serverWarnings, err = checkServers(f); err != nil {
		return nil, fmt.Errorf("%s: %w", f.Path(), err)
	}
	var policyWarnings []string
	if lc.pc, policyWarnings, err = checkPolicy(f, lc.servers); err != nil {
		return nil, fmt.Errorf("%s: %w", f.Path(), err)
	}
	lc.policy, lc.profiles = lc.pc.policy, lc.pc.profiles
	for _, p := range fileKeyProblems(f.Bytes(), serverFields()) {
		lc.warnings = append(lc.warnings, p.msg)
	}
	lc.warnings = append(append(lc.warnings, serverWarnings...), policyWarnings...)
	return lc, nil
}

const serverExample = `{"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}`

// checkServers checks the shape of mcpServers before package mcp checks what it means: every field of an entry
// must have the type of its upstream.ServerConfig field, so a mistake is named with the key, the expected type and
// an example rather than as a decoding error. Then it refuses entries that would start the wrong program, or
// none (checkServerSemantics), and warns about what can be seen not to work yet (a missing cwd). Fields other
// clients add (timeout, watchPaths, ...) are left to fileKeyProblems, which names them as ignored.
func checkServers(f *runtime.ConfigFile) (*upstream.Config, []string, error) {
	raw, ok, err := f.Get(upstream.ConfigKey)
	if err != nil {
		return nil, nil, err
	}
	if ok {
		var servers map[string]json.RawMessage
		if json.Unmarshal(raw, &servers) != nil || servers == nil {
			return nil, nil, fmt.Errorf("%s must be an object of servers by name, for example {\"memory\": %s} (got %s)",
				upstream.ConfigKey, serverExample, describeRaw(raw))
		}
		fields := serverFields()
		var problems []string
		for _, name := range slices.Sorted(maps.Keys(servers)) {
			problems = append(problems, checkServer(name, servers[name], fields)...)
		}
		if len(problems) > 0 {
			return nil, nil, errors.New(strings.Join(problems, "; "))
		}
	}
	cfg, err := upstream.ParseConfig(f.Bytes())
	if err != nil {
		return nil, nil, err
	}
	var problems, warnings []string
	keyProblems := fileKeyProblems(f.Bytes(), serverFields())
	for _, name := range slices.Sorted(maps.Keys(cfg.Servers)) {
		s := cfg.Servers[name]
		if s.Disabled {
			continue // never started: checked when it is enabled again
		}
		if p := checkServerSemantics(name, s); len(p) > 0 {
			// A misspelt field is often why (arg for args): say so in the same message.
			for _, kp := range keyProblems {
				if kp.refused && len(kp.path) == 3 && kp.path[1] == name {
					p[len(p)-1] += "; " + strings.TrimSuffix(kp.msg, " (it is ignored)")
				}
			}
			problems = append(problems, p...)
		}
		if s.Cwd != "" && !strings.Contains(s.Cwd, "$") {
			if info, err := os.Stat(s.Cwd); err != nil || !info.IsDir() {
				warnings = append(warnings, fmt.Sprintf("%s.cwd %q is not a directory: the server cannot start "+
					"until it is", runtime.FormatConfigKey(upstream.ConfigKey, name), s.Cwd))
			}
		}
	}
	if len(problems) > 0 {
		return nil, nil, errors.New(strings.Join(problems, "; "))
	}
	return cfg, warnings, nil
}

func checkServer(name string, raw json.RawMessage, fields map[string]reflect.Type) []string {
	key := runtime.FormatConfigKey(upstream.ConfigKey, name)
	var entry map[string]json.RawMessage
	if json.Unmarshal(raw, &entry) != nil || entry == nil {
		return []string{fmt.Sprintf("%s must be a server object with \"command\" or \"url\", for example %s (got %s)",
			key, serverExample, describeRaw(raw))}
	}
	var problems, unknown []string
	for field, value := range entry {
		typ, known := fields[field]
		if !known {
			unknown = append(unknown, field)
			continue
		}
		if json.Unmarshal(value, reflect.New(typ).Interface()) != nil || string(value) == "null" {
			expected, example := describeType(typ)
			problems = append(problems, fmt.Sprintf("%s.%s must be %s, for example %s (got %s)", key, field, expected,
				example, describeRaw(value)))
		}
	}
	sort.Strings(problems)
	if _, hasCommand := entry["command"]; !hasCommand {
		if _, hasURL := entry["url"]; !hasURL {
			msg := fmt.Sprintf("%s needs \"command\" (a program to start) or \"url\" (a streamable HTTP endpoint)", key)
			if hint := misspelt(unknown, fields); hint != "" {
				msg += "; " + hint
			}
			for _, alias := range []string{"serverUrl", "httpUrl"} {
				if _, ok := entry[alias]; ok {
					msg += fmt.Sprintf("; %q is another client's name for it: rename it \"url\"", alias)
				}
			}
			problems = append(problems, msg)
		}
	}
	return problems
}

// misspelt names the unknown fields that are one or two edits away from a known one.
func misspelt(unknown []string, fields map[string]reflect.Type) string {
	known := slices.Sorted(maps.Keys(fields))
	sort.Strings(unknown)
	var hints []string
	for _, u := range unknown {
		if best, d := suggest.Closest(u, known); d >= 0 && d <= 2 {
			hints = append(hints, fmt.Sprintf("%q is not a field: did you mean %q?", u, best))
		}
	}
	return strings.Join(hints, "; ")
}

// serverFields maps the keys of an mcpServers entry to the types of their upstream.ServerConfig fields, so a field
// added there is checked here without a second list.
func serverFields() map[string]reflect.Type {
	fields := map[string]reflect.Type{}
	typ := reflect.TypeFor[upstream.ServerConfig]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.IsExported() && name != "-" && name != "" {
			fields[name] = f.Type
		}
	}
	return fields
}

// describeType says what JSON a Go type takes, with an example.
func describeType(t reflect.Type) (expected, example string) {
	if d, ok := reflect.Zero(t).Interface().(interface{ ConfigExpected() (string, string) }); ok {
		return d.ConfigExpected()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string", `"text"`
	case reflect.Bool:
		return "true or false", "true"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer", "5000"
	case reflect.Float32, reflect.Float64:
		return "a number", "1.5"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.String {
			return "an array of strings", `["-y", "package"]`
		}
		inner, ex := describeType(t.Elem())
		return "an array of " + strings.TrimPrefix(strings.TrimPrefix(inner, "a "), "an "), "[" + ex + "]"
	case reflect.Map:
		if t.Elem().Kind() == reflect.String {
			return "an object of strings", `{"NAME": "value"}`
		}
		_, ex := describeType(t.Elem())
		return "an object", `{"name": ` + ex + `}`
	case reflect.Pointer:
		return describeType(t.Elem())
	}
	return "an object", "{}"
}

// describeRaw shows a value the way messages quote what they got.
func describeRaw(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	switch v.(type) {
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return string(raw)
}

// parseMode reads a --mode flag: one of the modes of runtime.ConfigKeys, or an error that lists them and names
// the closest.
func parseMode(s string) (runtime.Mode, error) {
	key, _ := runtime.LookupConfigKey("mode")
	for _, m := range key.Values {
		if s == m {
			return runtime.Mode(s), nil
		}
	}
	best, _ := suggest.Closest(s, key.Values)
	return "", fmt.Errorf("--mode must be one of %s (got %q; did you mean %q?)", strings.Join(key.Values, ", "), s, best)
}
