package config

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/internal/suggest"
	"github.com/toolsearch/toolsearch/mcp/upstream"
	"github.com/toolsearch/toolsearch/runtime"
)

// Config is a config file as `toolsearch mcp serve` reads it, and every other command too: one parse, the same
// checks, the same messages. A program that embeds toolsearch gets from Load what the command gets.
type Config struct {
	// File is the file as loaded, for reading other keys and for editing (File.Set, UpdateFile).
	File *File
	// ToolSearch is tools.toolSearch resolved and checked strictly (unknown keys and modes are errors). A file
	// that does not set tools.toolSearch gets code mode, since putting Tool Search in front of the servers is
	// what the file is for; toolSearch: false (or enabled: false, or mode: "off") turns it off. ToolSearchSet
	// says whether the file sets it at all.
	ToolSearch    runtime.Config
	ToolSearchSet bool
	// Servers are the mcpServers entries, checked: hand them to upstream.New.
	Servers *upstream.Config
	// Policy is tools.allow/deny/ask/groups with the servers' disabledTools and autoApprove, as the Agent layer
	// (nil when the file sets none of them): hand it to runtime.Options.Policy. Profiles are tools.profiles,
	// each with its whole policy. Origins keeps where each entry came from, for messages.
	Policy   *catalog.Policy
	Profiles []Profile
	Origins  *Origins
	// Warnings name every key toolsearch ignores, every value the runtime clamps (and what to), and what can be
	// seen not to work yet; the command prints them, each on a line.
	Warnings []string
}

// ErrNotFound is wrapped (with fs.ErrNotExist) when the config file to load does not exist.
var ErrNotFound = errors.New("config file not found")

// ErrInvalid is wrapped by every error that Load and Check return about what the file says (an *Error).
var ErrInvalid = errors.New("invalid config")

// Error is a config file that cannot be used as written: Err names every problem, each with its key and what to
// write instead.
type Error struct {
	Path string
	Err  error
}

func (e *Error) Error() string        { return e.Path + ": " + e.Err.Error() }
func (e *Error) Unwrap() error        { return e.Err }
func (e *Error) Is(target error) bool { return target == ErrInvalid }

// Load reads the config file at path and checks all of it: tools.toolSearch against runtime.ConfigKeys, every
// mcpServers entry against upstream.ServerConfig, the policy keys and profiles, and every key at every level
// (a key toolsearch does not read is a warning, a mistake that cannot work an error naming the key and what to
// write). A missing file is an error naming the path. ctx is checked before the file is read; Load takes no
// lock, and returns what `toolsearch mcp serve --config path` serves.
func Load(ctx context.Context, path string) (*Config, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f, err := LoadFile(path)
	if err != nil {
		return nil, err
	}
	if !f.Exists() {
		return nil, fmt.Errorf("%w: %s (%w)", ErrNotFound, path, fs.ErrNotExist)
	}
	return Check(f)
}

// Check checks a loaded (or edited) config file the way Load does. Keys it does not read are warnings (the file
// is shared with other programs); what cannot work is an error.
func Check(f *File) (*Config, error) {
	lc := &Config{File: f}
	if problems := duplicateKeys(f.src, f.root); len(problems) > 0 {
		return nil, &Error{Path: f.Path(), Err: errors.New(strings.Join(problems, "; "))}
	}
	_, lc.ToolSearchSet, _ = f.Get(runtime.ToolSearchKey)
	var err error
	if lc.ToolSearch, lc.Warnings, err = f.CheckToolSearch(); err != nil {
		return nil, &Error{Path: f.Path(), Err: err}
	}
	if !lc.ToolSearchSet {
		lc.ToolSearch.Enabled, lc.ToolSearch.Mode = true, runtime.ModeCode
	}
	var serverWarnings []string
	if lc.Servers, serverWarnings, err = checkServers(f); err != nil {
		return nil, &Error{Path: f.Path(), Err: err}
	}
	var policyWarnings []string
	if lc.Origins, policyWarnings, err = checkPolicy(f, lc.Servers); err != nil {
		return nil, &Error{Path: f.Path(), Err: err}
	}
	lc.Policy, lc.Profiles = lc.Origins.policy, lc.Origins.profiles
	if err := addServerVisible(lc); err != nil {
		return nil, &Error{Path: f.Path(), Err: err}
	}
	for _, p := range fileKeyProblems(f.Bytes(), serverFields()) {
		lc.Warnings = append(lc.Warnings, p.msg)
	}
	lc.Warnings = append(append(lc.Warnings, serverWarnings...), policyWarnings...)
	return lc, nil
}

const serverExample = `{"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}`

// checkServers checks the shape of mcpServers before mcp/upstream checks what it means: every field of an entry
// must have the type of its upstream.ServerConfig field, so a mistake is named with the key, the expected type and
// an example rather than as a decoding error. Then it refuses entries that would start the wrong program, or
// none (checkServerSemantics), and warns about what can be seen not to work yet (a missing cwd). Fields other
// clients add (timeout, watchPaths, ...) are left to fileKeyProblems, which names them as ignored.
func checkServers(f *File) (*upstream.Config, []string, error) {
	var earlyWarnings []string
	raw, ok, err := f.Get(upstream.ConfigKey)
	if err != nil {
		return nil, nil, err
	}
	if ok {
		var servers map[string]json.RawMessage
		if json.Unmarshal(raw, &servers) != nil || servers == nil {
			if fix := serverListFix(raw); fix != "" {
				return nil, nil, errors.New(fix)
			}
			return nil, nil, fmt.Errorf("%s must be an object of servers by name, for example {\"memory\": %s} (got %s)",
				upstream.ConfigKey, serverExample, describeRaw(raw))
		}
		fields := serverFields()
		var problems []string
		for _, name := range slices.Sorted(maps.Keys(servers)) {
			problems = append(problems, checkServer(name, servers[name], fields)...)
		}
		valueProblems, valueWarnings := valueChecks(f.root)
		problems = append(problems, valueProblems...)
		earlyWarnings = valueWarnings
		if len(problems) > 0 {
			return nil, nil, errors.New(strings.Join(problems, "; "))
		}
	}
	cfg, err := parseServers(f)
	if err != nil {
		return nil, nil, err
	}
	problems, warnings := []string(nil), earlyWarnings
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
		if u, err := url.Parse(s.URL); err == nil && s.URL != "" && strings.HasSuffix(strings.TrimSuffix(u.Path, "/"), "/sse") {
			warnings = append(warnings, fmt.Sprintf("%s.url %q ends in /sse, the usual address of the older HTTP+SSE "+
				"transport, which toolsearch does not speak: if the server fails to start, write its streamable HTTP "+
				"address (often the same ending in /mcp)", FormatKey(upstream.ConfigKey, name), s.URL))
		}
		if s.Cwd != "" && !filepath.IsAbs(s.Cwd) && !strings.HasPrefix(s.Cwd, "~") && !strings.Contains(s.Cwd, "$") {
			warnings = append(warnings, fmt.Sprintf("%s.cwd %q is relative, so it is taken from the directory "+
				"toolsearch is started in, which the MCP client that starts it chooses (often / or the client's own "+
				"folder, not your project): write an absolute path, such as %q", FormatKey(upstream.ConfigKey, name), s.Cwd,
				filepath.Join(filepath.Dir(absPath(f.Path())), s.Cwd)))
		} else if s.Cwd != "" && !strings.Contains(s.Cwd, "$") && !strings.HasPrefix(s.Cwd, "~") {
			if info, err := os.Stat(s.Cwd); err != nil || !info.IsDir() {
				warnings = append(warnings, fmt.Sprintf("%s.cwd %q is not a directory: the server cannot start "+
					"until it is", FormatKey(upstream.ConfigKey, name), s.Cwd))
			}
		}
	}
	if len(problems) > 0 {
		return nil, nil, errors.New(strings.Join(problems, "; "))
	}
	return cfg, warnings, nil
}

func checkServer(name string, raw json.RawMessage, fields map[string]reflect.Type) []string {
	key := FormatKey(upstream.ConfigKey, name)
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
			if fix := fieldFix(childKey(key, field), field, value); fix != "" {
				problems = append(problems, fix)
				continue
			}
			expected, example := describeType(typ)
			if ex, ok := fieldExamples[field]; ok {
				example = ex
			}
			problems = append(problems, fmt.Sprintf("%s.%s must be %s, for example %s (got %s)", key, field, expected,
				example, describeRaw(value)))
			continue
		}
		var text string
		if json.Unmarshal(value, &text) == nil {
			switch field {
			case "url":
				if fix := urlFix(childKey(key, field), text); fix != "" {
					problems = append(problems, fix)
				}
			case "type":
				if fix := typeFix(childKey(key, field), text, entry["url"] != nil); fix != "" {
					problems = append(problems, fix)
				}
			}
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

// parseServers reads the mcpServers object of a config document (JSON5) as upstream.Config, validated by
// upstream.Config.Validate. A document without mcpServers has no servers. Unknown fields of an entry are left
// to fileKeyProblems: clients add their own ("timeout", ...) and the file is shared with them.
func parseServers(f *File) (*upstream.Config, error) {
	raw, ok, err := f.Get(upstream.ConfigKey)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", upstream.ErrConfig, err)
	}
	cfg := &upstream.Config{Servers: map[string]upstream.ServerConfig{}}
	if !ok {
		return cfg, nil
	}
	var servers map[string]json.RawMessage
	if err := json.Unmarshal(raw, &servers); err != nil {
		return nil, fmt.Errorf("%w: %s must be an object of servers: %w", upstream.ErrConfig, upstream.ConfigKey, err)
	}
	for name, rawServer := range servers {
		var sc upstream.ServerConfig
		if err := json.Unmarshal(rawServer, &sc); err != nil {
			return nil, fmt.Errorf("%w: server %q is not a server object: %w", upstream.ErrConfig, name, err)
		}
		cfg.Servers[name] = sc
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return cfg, nil
}

// absPath is path made absolute, or path itself when that fails.
func absPath(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}
