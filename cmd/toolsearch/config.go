package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/toolsearch/toolsearch/internal/json5"
	"github.com/toolsearch/toolsearch/internal/suggest"
	"github.com/toolsearch/toolsearch/mcp/upstream"
	"github.com/toolsearch/toolsearch/runtime"
)

const configUsage = `usage: toolsearch config get [--config FILE] [--resolved] KEY
       toolsearch config set [--config FILE] KEY VALUE
       toolsearch config keys

Reads and edits the config file in place: set changes only the bytes of the value it sets (a new key is written
in the file's own style), so comments and layout survive. The file is JSON5: JSON plus comments, trailing
commas, unquoted keys, single quotes, hexadecimal numbers. KEY is a dotted path such as tools.toolSearch or
tools.toolSearch.mode. VALUE is JSON or JSON5 (true, 5000, {mode: "tools"}); anything else is taken as a
string, so "tools" needs no quotes. keys lists every key of tools.toolSearch and mcpServers.<name>.

  toolsearch config set tools.toolSearch true
  toolsearch config set tools.toolSearch.mode tools
  toolsearch config set mcpServers.memory '{command: "npx", args: ["-y", "@modelcontextprotocol/server-memory"]}'
  toolsearch config get --resolved tools.toolSearch

A value of the wrong type, an unknown key of tools.toolSearch or a server without "command" or "url" is an
error and leaves the file untouched; a limit out of range is written, with a warning naming the value the
runtime will use. set creates the file if needed; get needs it to exist.

flags:
  --config FILE   the config file (default $TOOLSEARCH_CONFIG, else $XDG_CONFIG_HOME/toolsearch/config.json,
                  else ~/.config/toolsearch/config.json)
  --resolved      get: print the effective tools.toolSearch values after defaults and clamps
`

func runConfig(_ context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		return configUsageError(stderr, "", "a subcommand is required: get or set")
	}
	sub, args := args[0], args[1:]
	switch sub {
	case "-h", "-help", "--help", "help":
		io.WriteString(stdout, configUsage)
		return exitOK
	case "keys":
		if len(args) > 0 {
			return configUsageError(stderr, sub, "takes no arguments")
		}
		printConfigKeys(stdout)
		return exitOK
	case "get", "set":
	default:
		return configUsageError(stderr, "", fmt.Sprintf("unknown subcommand %q (want get, set or keys)", sub))
	}

	path, resolved, rest, help, err := parseConfigArgs(args)
	if help {
		io.WriteString(stdout, configUsage)
		return exitOK
	}
	if err != nil {
		return configUsageError(stderr, sub, err.Error())
	}
	if path == "" {
		if path, err = runtime.DefaultConfigPath(os.Getenv); err != nil {
			fmt.Fprintf(stderr, "toolsearch config %s: %v\n", sub, err)
			return exitFailure
		}
	}

	if sub == "get" {
		if len(rest) != 1 {
			return configUsageError(stderr, sub, "takes exactly one KEY")
		}
		return configGet(stdout, stderr, path, rest[0], resolved)
	}
	if resolved {
		return configUsageError(stderr, sub, "--resolved only applies to get")
	}
	if len(rest) != 2 {
		return configUsageError(stderr, sub, "takes a KEY and a VALUE")
	}
	return configSet(stdout, stderr, path, rest[0], rest[1])
}

// parseConfigArgs reads the flags anywhere on the line. It is not package flag because VALUE may be a negative
// number ("set tools.toolSearch.codeTimeoutMs -5" must reach validation, not fail as an unknown flag): only the
// known flags are flags, "--" ends them, and anything else starting with "--" is an error.
func parseConfigArgs(args []string) (path string, resolved bool, rest []string, help bool, err error) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		isFlag := strings.HasPrefix(a, "-") && len(a) > 1 && !(a[1] >= '0' && a[1] <= '9') && a[1] != '.'
		switch {
		case a == "--":
			return path, resolved, append(rest, args[i+1:]...), false, nil
		case !isFlag:
			rest = append(rest, a)
		case name == "h" || name == "help":
			return "", false, nil, true, nil
		case name == "resolved" && !hasValue:
			resolved = true
		case name == "config" && hasValue:
			path = value
		case name == "config":
			if i+1 >= len(args) {
				return "", false, nil, false, errors.New("--config needs a FILE")
			}
			i++
			path = args[i]
		default:
			return "", false, nil, false, fmt.Errorf("unknown flag %s", a)
		}
	}
	return path, resolved, rest, false, nil
}

func configGet(stdout, stderr io.Writer, path, key string, resolved bool) int {
	if _, err := runtime.SplitConfigKey(key); err != nil {
		return configUsageError(stderr, "get", err.Error())
	}
	field, inToolSearch := strings.CutPrefix(key, runtime.ToolSearchKey)
	inToolSearch = inToolSearch && (field == "" || field[0] == '.')
	if resolved && !inToolSearch {
		return configUsageError(stderr, "get", "--resolved applies to "+runtime.ToolSearchKey+" and its fields")
	}
	if field = strings.TrimPrefix(field, "."); inToolSearch && field != "" {
		if _, known := runtime.LookupConfigKey(field); !known {
			best, _ := suggest.Closest(field, runtime.ConfigKeyNames())
			return configUsageError(stderr, "get", fmt.Sprintf("unknown key %q of %s: did you mean %q?", field,
				runtime.ToolSearchKey, best))
		}
	}
	f, err := runtime.LoadConfigFile(path)
	if err == nil && !f.Exists() {
		err = fmt.Errorf("%w: %s (create it with `toolsearch config set KEY VALUE`)", errConfigNotFound, path)
	}
	if err != nil {
		fmt.Fprintf(stderr, "toolsearch config get: %v\n", err)
		return exitFailure
	}
	if resolved {
		return configGetResolved(stdout, stderr, f, field)
	}
	v, ok, err := f.Get(key)
	if err != nil {
		fmt.Fprintf(stderr, "toolsearch config get: %v\n", err)
		return exitFailure
	}
	if !ok {
		fmt.Fprintf(stderr, "toolsearch config get: %s is not set in %s\n", key, path)
		return exitFailure
	}
	printJSON(stdout, upstream.RedactConfigValue(key, v)) // header values may be secrets
	return reportProblems(stderr, "get", f)
}

// reportProblems checks the whole file the way every command loads it, so that reading one value of a file
// also says what is wrong elsewhere in it.
func reportProblems(stderr io.Writer, sub string, f *runtime.ConfigFile) int {
	lc, err := checkConfigFile(f)
	if err != nil {
		fmt.Fprintf(stderr, "toolsearch config %s: %v\n", sub, err)
		return exitFailure
	}
	printWarnings(stderr, "toolsearch config "+sub, lc.warnings)
	return exitOK
}

// printWarnings prints clamp warnings, each on its own line after prefix ("toolsearch config set").
func printWarnings(stderr io.Writer, prefix string, warnings []string) {
	for _, w := range warnings {
		fmt.Fprintf(stderr, "%s: warning: %s\n", prefix, w)
	}
}

// configGetResolved prints tools.toolSearch (or its field) as the runtime will use it. A value the runtime
// refuses is still printed as resolved, with the problem on stderr and a failing exit code.
func configGetResolved(stdout, stderr io.Writer, f *runtime.ConfigFile, field string) int {
	cfg, _ := f.ToolSearch()
	raw, err := json.Marshal(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "toolsearch config get: %v\n", err)
		return exitFailure
	}
	if field != "" {
		var fields map[string]json.RawMessage
		_ = json.Unmarshal(raw, &fields)
		raw = fields[field]
	}
	printJSON(stdout, raw)
	return reportProblems(stderr, "get", f)
}

func configSet(stdout, stderr io.Writer, path, key, value string) int {
	f, err := runtime.LoadConfigFile(path)
	if err != nil {
		fmt.Fprintf(stderr, "toolsearch config set: %v\n", err)
		return exitFailure
	}
	raw := cliValue(value)
	warnings, err := f.Set(key, raw)
	if err == nil && (key == upstream.ConfigKey || strings.HasPrefix(key, upstream.ConfigKey+".")) {
		_, err = checkServers(f)
	}
	if err != nil {
		fmt.Fprintf(stderr, "toolsearch config set: %v; %s is unchanged\n", err, path)
		return exitFailure
	}
	if err := f.Save(); err != nil {
		fmt.Fprintf(stderr, "toolsearch config set: %v\n", err)
		return exitFailure
	}
	printWarnings(stderr, "toolsearch config set", warnings)
	fmt.Fprintf(stdout, "%s = %s (%s)\n", key, upstream.RedactConfigValue(key, raw), path)
	return exitOK
}

// cliValue reads a VALUE argument: JSON or JSON5 when it parses, a string otherwise, so `mode tools` needs no
// quoting.
func cliValue(s string) json.RawMessage {
	if t := strings.TrimSpace(s); t != "" {
		if _, err := json5.Parse([]byte(t)); err == nil {
			return json.RawMessage(t)
		}
	}
	raw, _ := json.Marshal(s)
	return raw
}

func printJSON(w io.Writer, raw json.RawMessage) {
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		b.Reset()
		b.Write(raw)
	}
	b.WriteByte('\n')
	w.Write(b.Bytes())
}

func configUsageError(stderr io.Writer, sub, msg string) int {
	name := "toolsearch config"
	if sub != "" {
		name += " " + sub
	}
	fmt.Fprintf(stderr, "%s: %s (run `toolsearch config --help`)\n", name, msg)
	return exitUsage
}

// printConfigKeys lists every key a config file can set, from the same definitions that validate them.
func printConfigKeys(w io.Writer) {
	var b strings.Builder
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
