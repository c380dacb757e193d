package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/toolsearch/toolsearch/config"
	"github.com/toolsearch/toolsearch/internal/json5"
	"github.com/toolsearch/toolsearch/internal/suggest"
	"github.com/toolsearch/toolsearch/runtime"
)

const configUsage = `usage: toolsearch config get [--config FILE] [--resolved] KEY
       toolsearch config set [--config FILE] KEY VALUE
       toolsearch config keys

Reads and edits the config file in place: set changes only the bytes of the value it sets (a new key is written
in the file's own style), so comments and layout survive. The file is JSON5: JSON plus comments, trailing
commas, unquoted keys, single quotes, hexadecimal numbers. KEY is a dotted path such as tools.toolSearch or
tools.toolSearch.mode; a key with a dot in it goes in brackets: 'mcpServers["my.server"].command'. VALUE is
JSON or JSON5 (true, 5000, {mode: "tools"}); anything else is taken as a string, so "tools" needs no quotes.
keys lists every key of tools (the policy: allow, deny, ask, groups, profiles), tools.toolSearch and
mcpServers.<name>.

  toolsearch config set tools.toolSearch true
  toolsearch config set tools.toolSearch.mode tools
  toolsearch config set tools.ask '["annotation:destructive"]'
  toolsearch config set mcpServers.github.autoApprove '["get_issue", "list_*"]'
  toolsearch config set mcpServers.memory '{command: "npx", args: ["-y", "@modelcontextprotocol/server-memory"]}'
  toolsearch config get --resolved tools.toolSearch

A value of the wrong type, an unknown key of tools.toolSearch, a key one edit from a valid one (mcpServer,
tools.toolsearch), an unknown server field or a server that could not start as written is an error and leaves
the file untouched; a limit out of range is written, with a warning naming the value the runtime will use.
Fields other MCP clients define (timeout, watchPaths, ...) are written, with a warning that they are ignored.
Header and env values, and profile tokens, are printed as [redacted] unless they only name environment
variables ("${GITHUB_TOKEN}"). set creates the file if needed and locks it while it edits;
get needs it to exist.

flags:
  --config FILE   the config file (default $TOOLSEARCH_CONFIG, else $XDG_CONFIG_HOME/toolsearch/config.json,
                  else ~/.config/toolsearch/config.json)
  --resolved      get: print the effective tools.toolSearch values after defaults and clamps
`

func runConfig(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
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
		config.WriteKeys(stdout)
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
		if path, err = config.DefaultPath(os.Getenv); err != nil {
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
	return configSet(ctx, stdout, stderr, path, rest[0], rest[1])
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
	keyPath, err := config.SplitKey(key)
	if err != nil {
		return configUsageError(stderr, "get", err.Error())
	}
	inToolSearch := len(keyPath) >= 2 && keyPath[0] == "tools" && keyPath[1] == "toolSearch"
	if resolved && !inToolSearch {
		return configUsageError(stderr, "get", "--resolved applies to "+runtime.ToolSearchKey+" and its fields")
	}
	field := ""
	if inToolSearch && len(keyPath) > 2 {
		field = keyPath[2]
		if _, known := runtime.LookupConfigKey(field); !known || len(keyPath) > 3 {
			best, _ := suggest.Closest(field, runtime.ConfigKeyNames())
			return configUsageError(stderr, "get", fmt.Sprintf("unknown key %q of %s: did you mean %q?",
				strings.Join(keyPath[2:], "."), runtime.ToolSearchKey, best))
		}
	}
	f, err := config.LoadFile(path)
	if err == nil && !f.Exists() {
		err = fmt.Errorf("%w: %s (create it with `toolsearch config set KEY VALUE`)", config.ErrNotFound, path)
	}
	if err != nil {
		fmt.Fprintf(stderr, "toolsearch config get: %v\n", err)
		return exitFailure
	}
	if resolved {
		return configGetResolved(stdout, stderr, f, field)
	}
	text, ok, err := f.Show(key)
	if err != nil {
		fmt.Fprintf(stderr, "toolsearch config get: %v\n", err)
		return exitFailure
	}
	if !ok {
		msg := fmt.Sprintf("%s is not set in %s", config.FormatKey(keyPath...), path)
		if hint := config.UnsetHint(f, keyPath); hint != "" {
			msg += "; " + hint
		}
		fmt.Fprintf(stderr, "toolsearch config get: %s\n", msg)
		return exitFailure
	}
	fmt.Fprintln(stdout, redactConfigText(keyPath, text)) // header and env values may be secrets
	return reportProblems(stderr, "get", f)
}

// reportProblems checks the whole file the way every command loads it, so that reading one value of a file
// also says what is wrong elsewhere in it.
func reportProblems(stderr io.Writer, sub string, f *config.File) int {
	lc, err := config.Check(f)
	if err != nil {
		fmt.Fprintf(stderr, "toolsearch config %s: %v\n", sub, err)
		return exitFailure
	}
	printWarnings(stderr, "toolsearch config "+sub, lc.Warnings)
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
func configGetResolved(stdout, stderr io.Writer, f *config.File, field string) int {
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

func configSet(ctx context.Context, stdout, stderr io.Writer, path, key, value string) int {
	keyPath, err := config.SplitKey(key)
	if err != nil {
		return configUsageError(stderr, "set", err.Error())
	}
	raw, err := cliValue(value)
	if err != nil {
		fmt.Fprintf(stderr, "toolsearch config set: %v; %s is unchanged\n", err, path)
		return exitFailure
	}
	var warnings []string
	var f *config.File
	// Under the file's lock, so that sets made at the same time by other processes are each applied to the
	// file as the one before left it.
	err = config.UpdateFile(ctx, path, func(file *config.File) error {
		f = file
		w, err := f.Set(key, raw)
		if err != nil {
			return err
		}
		notes, err := config.CheckEdit(f, keyPath)
		warnings = append(w, notes...)
		return err
	})
	if err != nil {
		msg := fmt.Sprintf("%v", err)
		if f != nil && !errors.Is(err, config.ErrLocked) {
			msg += "; " + path + " is unchanged"
		}
		fmt.Fprintf(stderr, "toolsearch config set: %s\n", msg)
		return exitFailure
	}
	printWarnings(stderr, "toolsearch config set", warnings)
	shown := strings.TrimSpace(redactConfigText(keyPath, string(raw)))
	fmt.Fprintf(stdout, "%s = %s (%s)\n", config.FormatKey(keyPath...), shown, path)
	return exitOK
}

// cliValue reads a VALUE argument: JSON or JSON5 when it parses, a string otherwise, so `mode tools` needs no
// quoting. A value that is plainly meant as JSON (it starts with {, [ or a quote) but does not parse is an
// error, not a string: storing `{command: "npx"` as text would hide the mistake.
func cliValue(s string) (json.RawMessage, error) {
	t := strings.TrimSpace(s)
	if t != "" {
		_, err := json5.Parse([]byte(t))
		if err == nil {
			return json.RawMessage(t), nil
		}
		if strings.ContainsAny(t[:1], "{[\"'") {
			return nil, fmt.Errorf("the value is not valid JSON5 (%v); to set it as a string, quote it: '\"...\"'", err)
		}
	}
	raw, _ := json.Marshal(s)
	return raw, nil
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
