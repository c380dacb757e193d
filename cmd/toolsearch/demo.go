package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/toolsearch/toolsearch/gateway/scenario"
	"github.com/toolsearch/toolsearch/runtime"
)

const demoUsage = `usage: toolsearch demo [--json]

Runs the end-to-end scenario on embedded defaults, with no network and no setup: a fake plugin with 36 (then
500) tools, a scripted model behind a local OpenAI-compatible endpoint, and one agent turn per mode — Tool
Search off, code, tools and directory. The model must call fake_plugin_tool_17. Every byte count is measured
on the requests as they were sent.

flags:
  --json   print the results as one JSON object:
           {"scenarios":[{"mode","tools","requests","declaredTools","requestBytes","toolBytes","calledTarget",
           "targetCalledDirectly","searchCount","describeCount","callCount"},...]}
           requestBytes and toolBytes are those of the last provider request of the turn.
`

// demoScenario is one entry of `demo --json`; the field names are part of the CLI's output contract.
type demoScenario struct {
	Mode                 runtime.Mode `json:"mode"`
	Tools                int          `json:"tools"`
	Requests             int          `json:"requests"`
	DeclaredTools        int          `json:"declaredTools"`
	RequestBytes         int          `json:"requestBytes"`
	ToolBytes            int          `json:"toolBytes"`
	CalledTarget         bool         `json:"calledTarget"`
	TargetCalledDirectly bool         `json:"targetCalledDirectly"`
	SearchCount          int          `json:"searchCount"`
	DescribeCount        int          `json:"describeCount"`
	CallCount            int          `json:"callCount"`
}

func runDemo(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	asJSON := fs.Bool("json", false, "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			io.WriteString(stdout, demoUsage)
			return exitOK
		}
		return demoUsageError(stderr, err.Error())
	}
	if fs.NArg() > 0 {
		return demoUsageError(stderr, fmt.Sprintf("takes no arguments (got %q)", fs.Arg(0)))
	}

	results, err := scenario.Run(ctx, nil)
	if err != nil {
		fmt.Fprintf(stderr, "toolsearch demo: %v\n", err)
		return exitFailure
	}
	out := bufio.NewWriter(stdout)
	defer out.Flush()
	if *asJSON {
		if err := writeDemoJSON(out, results); err != nil {
			fmt.Fprintf(stderr, "toolsearch demo: %v\n", err)
			return exitFailure
		}
	} else {
		writeDemoTables(out, results)
	}
	for _, r := range results {
		if !r.CalledTarget || r.Err != "" {
			fmt.Fprintf(stderr, "toolsearch demo: %s mode at %d tools did not call %s: %s\n", r.Mode, r.Tools,
				scenario.Target, demoOr(r.Err, r.Answer))
			return exitFailure
		}
	}
	return exitOK
}

func writeDemoJSON(w io.Writer, results []scenario.Result) error {
	doc := struct {
		Scenarios []demoScenario `json:"scenarios"`
	}{Scenarios: make([]demoScenario, len(results))}
	for i, r := range results {
		doc.Scenarios[i] = demoScenario{
			Mode: r.Mode, Tools: r.Tools, Requests: len(r.Provider), DeclaredTools: r.DeclaredTools,
			RequestBytes: r.RequestBytes, ToolBytes: r.ToolBytes,
			CalledTarget: r.CalledTarget, TargetCalledDirectly: r.TargetCalledDirectly,
			SearchCount: r.SearchCount, DescribeCount: r.DescribeCount, CallCount: r.CallCount,
		}
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

func writeDemoTables(w io.Writer, results []scenario.Result) {
	fmt.Fprintf(w, "Tool Search demo: a fake plugin, a scripted model behind a local OpenAI-compatible endpoint, "+
		"one turn per mode.\nThe model must call %s and answer with its result (result: ok). Byte counts are "+
		"those of the\nlast request of each turn, measured as sent.\n", scenario.Target)
	var sizes []int
	for _, r := range results {
		if !slices.Contains(sizes, r.Tools) {
			sizes = append(sizes, r.Tools)
		}
	}
	for _, n := range sizes {
		fmt.Fprintf(w, "\n%d plugin tools\n", n)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "mode\trequests\tdeclared tools\trequest bytes\tsaved vs off\tcalls made\tresult")
		for _, r := range results {
			if r.Tools != n {
				continue
			}
			saved := "-"
			if s, f, ok := scenario.Savings(results, r); ok && r.Mode != runtime.ModeOff {
				saved = fmt.Sprintf("%s (%.0f%%)", demoThousands(s), 100*f)
			}
			result := "ok"
			if !r.CalledTarget || r.Err != "" {
				result = "FAILED: " + demoOr(r.Err, r.Answer)
			}
			fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\t%s\n", r.Mode, len(r.Provider), r.DeclaredTools,
				demoThousands(r.RequestBytes), saved, callsMade(r), result)
		}
		tw.Flush()
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, explain(results))
}

// callsMade lists the tools the model called and, for code mode, the catalog work its script did.
func callsMade(r scenario.Result) string {
	chain := strings.Join(r.PlannedTools, ", ")
	if chain == "" {
		return "none"
	}
	if r.BridgedVia == runtime.ViaCode {
		chain += fmt.Sprintf(" (script: %d search, %d call)", r.SearchCount, r.CallCount)
	}
	return chain
}

// explain is the paragraph under the tables. Every statement in it is computed from the runs: a mode that did
// not reach the target is named with what went wrong, and the summary says which modes reached it.
func explain(results []scenario.Result) string {
	var sentences []string
	first := func(m runtime.Mode) (scenario.Result, bool) {
		for _, r := range results {
			if r.Mode == m {
				return r, true
			}
		}
		return scenario.Result{}, false
	}
	if off, ok := first(runtime.ModeOff); ok {
		s := fmt.Sprintf("With Tool Search off, the last request declared %d tool schemas (%s bytes of tool "+
			"definitions at %d tools)", off.DeclaredTools, demoThousands(off.ToolBytes), off.Tools)
		if off.TargetCalledDirectly {
			s += fmt.Sprintf(" and the model called %s directly.", scenario.Target)
		} else {
			s += fmt.Sprintf(", but %s was not called directly: %s.", scenario.Target, failure(off))
		}
		sentences = append(sentences, s)
	}
	for _, m := range []runtime.Mode{runtime.ModeCode, runtime.ModeTools, runtime.ModeDirectory} {
		r, ok := first(m)
		if !ok {
			continue
		}
		if !reached(r) {
			sentences = append(sentences, fmt.Sprintf("In %s mode the model did not reach %s: %s.", m,
				scenario.Target, failure(r)))
			continue
		}
		s := fmt.Sprintf("In %s mode the model called %s", m, strings.Join(r.PlannedTools, ", then "))
		if r.BridgedVia == runtime.ViaCode {
			s += fmt.Sprintf("; its script ran %d search(es) and %d call(s), and the session log records the "+
				"hidden call as %s", r.SearchCount, r.CallCount, r.BridgedCallID)
		}
		if r.EffectiveMode != "" && r.EffectiveMode != r.Mode {
			s += fmt.Sprintf(" (the sandbox could not start, so it ran in %s mode)", r.EffectiveMode)
		}
		sentences = append(sentences, s+".")
	}

	var good, bad []string
	answers := map[string]bool{}
	for _, r := range results {
		name := fmt.Sprintf("%s/%d", r.Mode, r.Tools)
		if reached(r) {
			good = append(good, name)
			answers[r.Answer] = true
		} else {
			bad = append(bad, name)
		}
	}
	switch {
	case len(bad) == 0 && len(answers) == 1:
		sentences = append(sentences, fmt.Sprintf("Every mode reached %s, with the same answer.", scenario.Target))
	case len(bad) == 0:
		sentences = append(sentences, fmt.Sprintf("Every mode reached %s, but the answers differ.", scenario.Target))
	default:
		sentences = append(sentences, fmt.Sprintf("%d of %d runs reached %s; these did not: %s.", len(good),
			len(results), scenario.Target, strings.Join(bad, ", ")))
	}
	for _, r := range results {
		if r.Mode != runtime.ModeCode || !reached(r) {
			continue
		}
		if _, f, ok := scenario.Savings(results, r); ok {
			sentences = append(sentences, fmt.Sprintf("At %d tools the last code-mode request was %.0f%% smaller "+
				"than with Tool Search off.", r.Tools, 100*f))
		}
	}
	return demoWrap("What happened: "+strings.Join(sentences, " "), 110)
}

// reached reports whether a run called the target and finished.
func reached(r scenario.Result) bool { return r.CalledTarget && r.Err == "" }

func failure(r scenario.Result) string {
	if r.Err != "" {
		return r.Err
	}
	if r.Answer != "" {
		return "it answered " + strconv.Quote(r.Answer) + " without calling it"
	}
	return "it never called it"
}

func demoWrap(s string, width int) string {
	var b strings.Builder
	n := 0
	for i, word := range strings.Fields(s) {
		if i > 0 && n+1+len(word) > width {
			b.WriteByte('\n')
			n = 0
		} else if i > 0 {
			b.WriteByte(' ')
			n++
		}
		b.WriteString(word)
		n += len(word)
	}
	return b.String()
}

func demoThousands(n int) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + demoThousands(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func demoOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func demoUsageError(stderr io.Writer, msg string) int {
	fmt.Fprintf(stderr, "toolsearch demo: %s (run `toolsearch demo --help`)\n", msg)
	return exitUsage
}
