package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/config"
	"github.com/toolsearch/toolsearch/runtime"
)

const describeUsage = `usage: toolsearch describe (--catalog FILE | --mcp-config FILE) [--allow LIST] [--deny LIST] [--json] ID|NAME

Prints what the model's tool_describe returns for one tool: its descriptor (id, source, input and output hints)
and its full parameters and outputSchema. The tool is looked up the way the model's calls are: an exact id, or a
name that only one tool has; an unknown name suggests close ones. A tool the policy denies (the --mcp-config
file's tools.allow, tools.deny and disabledTools, and --allow/--deny) is unknown.

flags:
` + toolSourceFlags + `  --allow LIST        comma-separated policy allow list (names, ids, server:<s>, source:<s>, group:<g>, globs with *)
  --deny LIST         comma-separated policy deny list; a denied tool is unknown
  --json              print one line of JSON instead of indented JSON
`

// catalogFlags are the flags describe and call share.
type catalogFlags struct {
	source toolSource
	json   bool
	// yes approves every call that needs approval (call only).
	yes bool
}

func (c *catalogFlags) register(fs *flag.FlagSet) {
	c.source.register(fs)
	c.source.registerPolicy(fs)
	fs.BoolVar(&c.json, "json", false, "")
}

// parseInterleaved parses flags that may come before or after the one positional argument.
func parseInterleaved(fs *flag.FlagSet, args []string) (positional []string, err error) {
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return positional, nil
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// openCatalogRun loads the tools into a tools-mode run, so that describe and call go through the same lookup,
// policy and pipeline as the model's tool_describe and tool_call. prepare, when set, adjusts the tools before
// they are cataloged. The returned release stops MCP servers; it runs after the runtime is closed.
// The policy (the --mcp-config file's and --allow/--deny) is the run's; approver, when set, is asked before
// calls (call's terminal approver).
func openCatalogRun(ctx context.Context, f *catalogFlags, progress io.Writer, prepare func([]catalog.Tool), approver func(*toolSource) (runtime.Approver, func())) (*runtime.Runtime, *runtime.Run, func(), error) {
	tools, release, err := f.source.load(ctx, progress)
	if err != nil {
		return nil, nil, nil, err
	}
	var ap runtime.Approver
	if approver != nil {
		var done func()
		ap, done = approver(&f.source)
		stopServers := release
		release = func() { done(); stopServers() }
	}
	rt, run, err := startCatalogRun(ctx, f, tools, prepare, ap)
	if err != nil {
		release()
		return nil, nil, nil, err
	}
	return rt, run, release, nil
}

func startCatalogRun(ctx context.Context, f *catalogFlags, tools []catalog.Tool, prepare func([]catalog.Tool), approver runtime.Approver) (*runtime.Runtime, *runtime.Run, error) {
	for i := range tools {
		// A direct-only entry is never cataloged; from the command line every entry is reachable.
		tools[i].CatalogMode = ""
	}
	if prepare != nil {
		prepare(tools)
	}
	cfg := runtime.Config{Enabled: true, Mode: runtime.ModeTools}
	if lc := f.source.config; lc != nil {
		// A changed pinned definition is held here as it is in mcp serve, and approvals wait as long.
		cfg.PinFile, cfg.ApprovalTimeoutMs = lc.ToolSearch.PinFile, lc.ToolSearch.ApprovalTimeoutMs
	}
	tel := providersFrom(ctx)
	rt, err := runtime.New(ctx, &runtime.Options{Config: cfg, Policy: f.source.policy, Approver: approver,
		TracerProvider: tel.tp, MeterProvider: tel.mp, TraceContent: captureContent()})
	if err != nil {
		return nil, nil, err
	}
	run, err := rt.StartRun(ctx, runtime.RunRequest{RunID: "cli", Tools: tools})
	if err != nil {
		rt.Close(ctx)
		return nil, nil, fmt.Errorf("%s: %w", f.source.name(), err)
	}
	if run.Mode() != runtime.ModeTools {
		run.Close()
		rt.Close(ctx)
		return nil, nil, fmt.Errorf("%w: the policy denies Tool Search's control tools", errToolUsage)
	}
	return rt, run, nil
}

// registerPolicy adds --allow and --deny, which add a Session layer to the policy.
func (s *toolSource) registerPolicy(fs *flag.FlagSet) {
	fs.Func("allow", "", func(v string) error { s.allow = append(s.allow, policyList(v)...); return nil })
	fs.Func("deny", "", func(v string) error { s.deny = append(s.deny, policyList(v)...); return nil })
}

func policyList(s string) []string {
	var out []string
	for _, e := range strings.Split(s, ",") {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	return out
}

// writeToolJSON prints raw indented, or as one line with --json. encoding/json escapes <, > and & for HTML; a
// terminal is not HTML, and hints such as Array<string> should read as written.
func writeToolJSON(w io.Writer, raw json.RawMessage, oneLine bool) error {
	var b bytes.Buffer
	var err error
	if oneLine {
		err = json.Compact(&b, raw)
	} else {
		err = json.Indent(&b, raw, "", "  ")
	}
	if err != nil {
		return err
	}
	out := append(unescapeHTML(b.Bytes()), '\n')
	_, err = w.Write(out)
	return err
}

// unescapeHTML turns \u003c, \u003e and \u0026 back into <, > and &, stepping over every other escape whole so
// that an escaped backslash followed by "u003c" stays as it is.
func unescapeHTML(js []byte) []byte {
	out := make([]byte, 0, len(js))
	for i := 0; i < len(js); i++ {
		if js[i] != '\\' || i+1 >= len(js) {
			out = append(out, js[i])
			continue
		}
		if js[i+1] == 'u' && i+6 <= len(js) {
			switch string(js[i+2 : i+6]) {
			case "003c":
				out, i = append(out, '<'), i+5
				continue
			case "003e":
				out, i = append(out, '>'), i+5
				continue
			case "0026":
				out, i = append(out, '&'), i+5
				continue
			}
		}
		out, i = append(out, js[i], js[i+1]), i+1
	}
	return out
}

// parseToolCommand parses the command line of describe and call: the shared flags, those extra registers, and
// exactly one tool ID or NAME. done is true when the command is over already (help printed, or a usage error
// reported), with code its exit status.
func parseToolCommand(name, usage string, args []string, stdout, stderr io.Writer, extra func(*flag.FlagSet)) (f catalogFlags, tool string, code int, done bool) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f.register(fs)
	if extra != nil {
		extra(fs)
	}
	pos, err := parseInterleaved(fs, args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		io.WriteString(stdout, usage)
		return f, "", exitOK, true
	case err != nil:
		return f, "", toolUsageError(stderr, name, err.Error()), true
	}
	if err := f.source.check(); err != nil {
		return f, "", toolFailure(stderr, name, err), true
	}
	if len(pos) != 1 {
		return f, "", toolUsageError(stderr, name, "takes exactly one tool ID or NAME"), true
	}
	return f, pos[0], 0, false
}

func runDescribe(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	f, tool, code, done := parseToolCommand("describe", describeUsage, args, stdout, stderr, nil)
	if done {
		return code
	}

	id, _ := json.Marshal(map[string]string{"id": tool})
	return executeTool(ctx, &f, nil, "describe", runtime.ToolDescribeName, id, stdout, stderr)
}

// executeTool runs one control-tool call (tool_describe or tool_call) against the tools of f, through the
// runtime like the model's own call, and prints the result's details, or its error on stderr. A call is
// approved on the terminal (or by --yes) when the policy or a changed pin holds it.
func executeTool(ctx context.Context, f *catalogFlags, prepare func([]catalog.Tool), cmd, control string, args json.RawMessage, stdout, stderr io.Writer) int {
	var approver func(*toolSource) (runtime.Approver, func())
	if control == runtime.ToolCallName {
		approver = func(s *toolSource) (runtime.Approver, func()) {
			var pc *config.Origins
			if s.config != nil {
				pc = s.config.Origins
			}
			return newCLIApprover(ctx, cmd, f.yes, s.policy, pc, stderr)
		}
	}
	rt, run, release, err := openCatalogRun(ctx, f, stderr, prepare, approver)
	if err != nil {
		return toolFailure(stderr, cmd, err)
	}
	defer release()
	defer rt.Close(ctx)
	defer run.Close()
	res, err := run.Execute(ctx, runtime.ToolCall{ID: "cli-" + cmd, Name: control, Arguments: args})
	if err != nil {
		return toolFailure(stderr, cmd, err)
	}
	if res.IsError {
		fmt.Fprintf(stderr, "toolsearch %s: %s\n", cmd, res.Content)
		return exitFailure
	}
	if err := writeToolJSON(stdout, res.Details, f.json); err != nil {
		return toolFailure(stderr, cmd, err)
	}
	return exitOK
}

func toolUsageError(stderr io.Writer, cmd, msg string) int {
	fmt.Fprintf(stderr, "toolsearch %s: %s (run `toolsearch %s --help`)\n", cmd, msg, cmd)
	return exitUsage
}

// toolFailure reports err; a usage mistake found late (a policy that denies everything) exits 2.
func toolFailure(stderr io.Writer, cmd string, err error) int {
	if errors.Is(err, errToolUsage) {
		return toolUsageError(stderr, cmd, strings.TrimPrefix(err.Error(), errToolUsage.Error()+": "))
	}
	fmt.Fprintf(stderr, "toolsearch %s: %v\n", cmd, err)
	return exitFailure
}
