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

	"github.com/toolsearch/toolsearch/runtime"
)

const configUsage = `usage: toolsearch config get [--config FILE] [--resolved] KEY
       toolsearch config set [--config FILE] KEY VALUE

Reads and edits the config file in place, keeping its comments. The file is JSON with comments and trailing
commas. KEY is a dotted path such as tools.toolSearch or tools.toolSearch.mode. VALUE is JSON (true, 5000,
{"mode":"tools"}); anything that is not JSON is taken as a string, so "tools" needs no quotes.

  toolsearch config set tools.toolSearch true
  toolsearch config set tools.toolSearch.mode tools
  toolsearch config get --resolved tools.toolSearch

A value Tool Search would refuse is an error and leaves the file untouched; set creates the file if needed.

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
	case "get", "set":
	default:
		return configUsageError(stderr, "", fmt.Sprintf("unknown subcommand %q (want get or set)", sub))
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
	f, err := runtime.LoadConfigFile(path)
	if err != nil {
		fmt.Fprintf(stderr, "toolsearch config get: %v\n", err)
		return exitFailure
	}
	if resolved {
		return configGetResolved(stdout, stderr, f, key)
	}
	v, ok, err := f.Get(key)
	if err != nil {
		return configUsageError(stderr, "get", err.Error())
	}
	if !ok {
		fmt.Fprintf(stderr, "toolsearch config get: %s is not set in %s\n", key, path)
		return exitFailure
	}
	printJSON(stdout, v)
	return exitOK
}

// configGetResolved prints tools.toolSearch (or one of its fields) as the runtime will use it. A value the
// runtime refuses is still printed as resolved, with the problem on stderr and a failing exit code.
func configGetResolved(stdout, stderr io.Writer, f *runtime.ConfigFile, key string) int {
	field, ok := strings.CutPrefix(key, runtime.ToolSearchKey)
	if !ok || (field != "" && !strings.HasPrefix(field, ".")) {
		return configUsageError(stderr, "get", "--resolved applies to "+runtime.ToolSearchKey+" and its fields")
	}
	cfg, parseErr := f.ToolSearch()
	raw, err := json.Marshal(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "toolsearch config get: %v\n", err)
		return exitFailure
	}
	if field != "" {
		var fields map[string]json.RawMessage
		_ = json.Unmarshal(raw, &fields)
		v, ok := fields[field[1:]]
		if !ok {
			return configUsageError(stderr, "get", fmt.Sprintf("unknown field %q of %s (known: %s)", field[1:],
				runtime.ToolSearchKey, strings.Join(runtime.ConfigKeyNames(), ", ")))
		}
		raw = v
	}
	printJSON(stdout, raw)
	if parseErr != nil {
		fmt.Fprintf(stderr, "toolsearch config get: %s: %v (defaults used instead)\n", f.Path(), parseErr)
		return exitFailure
	}
	return exitOK
}

func configSet(stdout, stderr io.Writer, path, key, value string) int {
	f, err := runtime.LoadConfigFile(path)
	if err != nil {
		fmt.Fprintf(stderr, "toolsearch config set: %v\n", err)
		return exitFailure
	}
	raw := cliValue(value)
	warnings, err := f.Set(key, raw)
	if err != nil {
		fmt.Fprintf(stderr, "toolsearch config set: %v; %s is unchanged\n", err, path)
		return exitFailure
	}
	for _, w := range warnings {
		fmt.Fprintf(stderr, "toolsearch config set: warning: %s\n", w)
	}
	if err := f.Save(); err != nil {
		fmt.Fprintf(stderr, "toolsearch config set: %v\n", err)
		return exitFailure
	}
	fmt.Fprintf(stdout, "%s = %s (%s)\n", key, raw, path)
	return exitOK
}

// cliValue reads a VALUE argument: JSON when it parses, a string otherwise, so `mode tools` needs no quoting.
func cliValue(s string) json.RawMessage {
	if t := strings.TrimSpace(s); t != "" && json.Valid([]byte(t)) {
		return json.RawMessage(t)
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
