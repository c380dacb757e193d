package main

import (
	"context"
	"encoding/json"
	"flag"
	"io"
	"strings"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/runtime"
)

const callUsage = `usage: toolsearch call (--catalog FILE | --mcp-config FILE) [--args JSON] [--allow LIST] [--deny LIST] [--yes] [--json] ID|NAME

Calls one tool the way the model's tool_call does, through the runtime's pipeline: lookup (exact id or unique
name, with suggestions), policy, approval, argument validation against the tool's inputSchema, the tool, output
contract, logging. Prints the {tool, result} envelope the model would get.

With --mcp-config the tool really runs on its MCP server, under the file's policy: tools.allow, tools.deny and
the servers' disabledTools make a tool unknown; a call that tools.ask holds (or whose pinned definition changed,
with tools.toolSearch.pinFile) is asked about on the terminal (y/N, read from the terminal, never from standard
input), unless a server's autoApprove lifts the ask. Without a terminal such a call is blocked, with a message
naming the rule and how to allow the tool; --yes approves it and says so on stderr. A catalog file lists tools but holds no
implementation, so there the call is a dry run: a tool that passes the pipeline answers {"dryRun": true, "tool":
ID, "arguments": ARGS} instead of running, and output contracts are not checked (there is no real output). A
refused call (unknown tool, invalid arguments, denied by policy, not approved) exits 1 with the message the model
would read.

flags:
` + toolSourceFlags + `  --args JSON         the tool's arguments, a JSON object (default {}); "-" reads them from standard input
  --allow LIST        comma-separated policy allow list (names, ids, server:<s>, source:<s>, group:<g>, globs with *)
  --deny LIST         comma-separated policy deny list; a denied tool is unknown
  --yes               approve every call the policy or a changed pin holds, without asking
  --json              print one line of JSON instead of indented JSON
`

func runCall(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var argsFlag string
	var yes bool
	f, tool, code, done := parseToolCommand("call", callUsage, args, stdout, stderr, func(fs *flag.FlagSet) {
		fs.StringVar(&argsFlag, "args", "{}", "")
		fs.BoolVar(&yes, "yes", false, "")
	})
	f.yes = yes
	if done {
		return code
	}
	input := []byte(argsFlag)
	if argsFlag == "-" {
		var err error
		if input, err = io.ReadAll(io.LimitReader(stdin, 16<<20)); err != nil {
			return toolFailure(stderr, "call", err)
		}
	}
	if strings.TrimSpace(string(input)) == "" {
		input = []byte("{}")
	}
	if !json.Valid(input) {
		return toolUsageError(stderr, "call", "--args is not valid JSON")
	}

	request, err := json.Marshal(map[string]any{"id": tool, "args": json.RawMessage(input)})
	if err != nil {
		return toolFailure(stderr, "call", err)
	}
	return executeTool(ctx, &f, func(tools []catalog.Tool) {
		for i := range tools {
			// Tools of MCP servers really run; entries of a catalog file have no implementation.
			if tools[i].Handler == nil {
				tools[i].Handler, tools[i].OutputSchema = dryRun(tools[i].ID()), nil
			}
		}
	}, "call", runtime.ToolCallName, request, stdout, stderr)
}

// dryRun stands in for a tool that has no implementation here: it reports the arguments the pipeline let
// through.
func dryRun(id string) catalog.HandlerFunc {
	return func(_ context.Context, args json.RawMessage) (*catalog.Result, error) {
		details, err := json.Marshal(map[string]any{"dryRun": true, "tool": id, "arguments": args})
		if err != nil {
			return nil, err
		}
		return &catalog.Result{
			Content: []catalog.Content{{Type: "text", Text: "dry run: " + id + " accepted the arguments; " +
				"a catalog file has no implementation to run"}},
			Details: details,
		}, nil
	}
}
