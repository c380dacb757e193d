// Command toolsearch finds and calls tools in catalogs far too large for a prompt. Run `toolsearch help`.
package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
)

// command is one subcommand. run gets the arguments after the subcommand's name.
type command struct {
	summary string
	run     func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int
}

// Exit codes shared by every subcommand.
const (
	exitOK      = 0
	exitFailure = 1 // the work ran and failed (a script error, a failed call)
	exitUsage   = 2 // the command line was wrong
)

func commands() map[string]command {
	return map[string]command{
		"version":  {summary: "print the version", run: runVersion},
		"run":      {summary: "run one code-mode script in the sandbox and print its result as JSON", run: traced("run", runRun)},
		"search":   {summary: "rank the tools of a catalog file for a query", run: traced("search", runSearch)},
		"config":   {summary: "get or set a value of the config file (keeps its comments)", run: runConfig},
		"demo":     {summary: "run the end-to-end scenario: every mode, 36 and 500 tools, no network", run: runDemo},
		"describe": {summary: "print the full schemas of one tool of a catalog file", run: traced("describe", runDescribe)},
		"call":     {summary: "call one tool of a catalog file through the pipeline (a dry run)", run: traced("call", runCall)},
		"mcp":      {summary: "serve Tool Search over the servers of an MCP config, to any MCP client", run: runMCP},
		"pins":     {summary: "list or forget pinned tool definitions (tools.toolSearch.pinFile)", run: runPins},
		"import":   {summary: "move the MCP servers of Claude Desktop, Cursor, VS Code, ... into toolsearch", run: runImport},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is the whole CLI behind main, so tests drive it without a process.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cmds := commands()
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(stdout, cmds)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	cmd, ok := cmds[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "toolsearch: unknown command %q (run `toolsearch help`)\n", args[0])
		return exitUsage
	}
	return cmd.run(ctx, args[1:], stdin, stdout, stderr)
}

func usage(w io.Writer, cmds map[string]command) {
	var b strings.Builder
	b.WriteString("usage: toolsearch <command> [flags] [args]\n\ncommands:\n")
	for _, name := range slices.Sorted(maps.Keys(cmds)) {
		fmt.Fprintf(&b, "  %-10s %s\n", name, cmds[name].summary)
	}
	b.WriteString("\nRun `toolsearch <command> --help` for a command's flags.\n")
	io.WriteString(w, b.String())
}

func runVersion(_ context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		if args[0] == "-h" || args[0] == "--help" {
			fmt.Fprintln(stdout, "usage: toolsearch version")
			return exitOK
		}
		fmt.Fprintln(stderr, "toolsearch version: takes no arguments (run `toolsearch version --help`)")
		return exitUsage
	}
	fmt.Fprintf(stdout, "toolsearch %s\n", version)
	return exitOK
}
