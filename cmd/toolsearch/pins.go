package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/toolsearch/toolsearch/config"
	"github.com/toolsearch/toolsearch/runtime"
)

const pinsUsage = `usage: toolsearch pins list [--config FILE | --file PINS]
       toolsearch pins forget [--config FILE | --file PINS] TOOL_ID...

With pinning on (tools.toolSearch.pinFile), the definition of each tool is fingerprinted when it is first
approved or called, and a call to a tool whose definition changed since is blocked until it is approved again.
list shows what is pinned; forget approves a changed tool again: its next call pins its definition as it is then.

  toolsearch config set tools.toolSearch.pinFile ~/.config/toolsearch/pins.json
  toolsearch pins forget mcp:github:create_issue

flags:
  --config FILE   the config file whose tools.toolSearch.pinFile names the pin file (default as for config)
  --file PINS     the pin file itself
`

func runPins(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		return pinsUsageError(stderr, "a subcommand is required: list or forget")
	}
	sub, args := args[0], args[1:]
	switch sub {
	case "-h", "-help", "--help", "help":
		io.WriteString(stdout, pinsUsage)
		return exitOK
	case "list", "forget":
	default:
		return pinsUsageError(stderr, fmt.Sprintf("unknown subcommand %q (want list or forget)", sub))
	}
	fs := flag.NewFlagSet("pins "+sub, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	configPath := fs.String("config", "", "")
	file := fs.String("file", "", "")
	ids, err := parseInterleaved(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		io.WriteString(stdout, pinsUsage)
		return exitOK
	}
	switch {
	case err != nil:
		return pinsUsageError(stderr, err.Error())
	case *configPath != "" && *file != "":
		return pinsUsageError(stderr, "give --config or --file, not both")
	case sub == "list" && len(ids) > 0:
		return pinsUsageError(stderr, "list takes no arguments")
	case sub == "forget" && len(ids) == 0:
		return pinsUsageError(stderr, "forget needs at least one TOOL_ID")
	}
	path := *file
	if path == "" {
		if path, err = pinFileFromConfig(ctx, stderr, *configPath); err != nil {
			fmt.Fprintf(stderr, "toolsearch pins %s: %v\n", sub, err)
			return exitFailure
		}
	}
	pins, err := runtime.OpenPinFile(path)
	if err != nil {
		fmt.Fprintf(stderr, "toolsearch pins %s: %v\n", sub, err)
		return exitFailure
	}
	if sub == "forget" {
		return forgetPins(ctx, stdout, stderr, pins, ids)
	}
	list, err := pins.Pins()
	if err != nil {
		fmt.Fprintf(stderr, "toolsearch pins list: %v\n", err)
		return exitFailure
	}
	if len(list) == 0 {
		fmt.Fprintf(stdout, "no tools pinned in %s\n", pins.Path())
	}
	for _, p := range list {
		fmt.Fprintf(stdout, "%s\tpinned %s\n", p.ToolID, p.PinnedAt.Local().Format(time.DateTime))
	}
	return exitOK
}

func forgetPins(ctx context.Context, stdout, stderr io.Writer, pins *runtime.PinFile, ids []string) int {
	known := map[string]bool{}
	list, err := pins.Pins()
	if err != nil {
		fmt.Fprintf(stderr, "toolsearch pins forget: %v\n", err)
		return exitFailure
	}
	for _, p := range list {
		known[p.ToolID] = true
	}
	code := exitOK
	for _, id := range ids {
		if !known[id] {
			fmt.Fprintf(stderr, "toolsearch pins forget: %s is not pinned in %s\n", id, pins.Path())
			code = exitFailure
			continue
		}
		if err := pins.Forget(ctx, id); err != nil {
			fmt.Fprintf(stderr, "toolsearch pins forget: %v\n", err)
			return exitFailure
		}
		fmt.Fprintf(stdout, "forgot %s: its next call pins its definition again\n", id)
	}
	return code
}

// pinFileFromConfig reads tools.toolSearch.pinFile from the config file, loaded and checked as every command loads
// it (its clamp warnings go to stderr).
func pinFileFromConfig(ctx context.Context, stderr io.Writer, path string) (string, error) {
	var err error
	if path == "" {
		if path, err = config.DefaultPath(os.Getenv); err != nil {
			return "", err
		}
	}
	lc, err := config.Load(ctx, path)
	if err != nil {
		return "", err
	}
	printWarnings(stderr, "toolsearch pins: "+path, lc.Warnings)
	if lc.ToolSearch.PinFile == "" {
		return "", fmt.Errorf("%s sets no tools.toolSearch.pinFile, so nothing is pinned (give --file, or turn "+
			"pinning on with `toolsearch config set tools.toolSearch.pinFile ~/.config/toolsearch/pins.json`)", path)
	}
	return lc.ToolSearch.PinFile, nil
}

func pinsUsageError(stderr io.Writer, msg string) int {
	fmt.Fprintf(stderr, "toolsearch pins: %s (run `toolsearch pins --help`)\n", msg)
	return exitUsage
}
