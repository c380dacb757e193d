package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/config"
	"github.com/toolsearch/toolsearch/internal/textcut"
	"github.com/toolsearch/toolsearch/runtime"
)

// maxApprovalArgBytes bounds the arguments an approval question shows: enough to judge a call, never a screen
// flooded by a large payload.
const maxApprovalArgBytes = 2 << 10

// terminalKey carries, in a command's context, how to open the terminal that approvals are asked on. Tests put
// a fake one there; without it the process's controlling terminal (/dev/tty) is used.
type terminalKey struct{}

// terminalOpener opens the terminal approvals are asked on, or fails when there is none.
type terminalOpener func() (io.ReadWriteCloser, error)

// withTerminal returns ctx with open as the way to reach the user's terminal.
func withTerminal(ctx context.Context, open terminalOpener) context.Context {
	return context.WithValue(ctx, terminalKey{}, open)
}

// errNoTerminal is returned by a terminalOpener when there is no terminal to ask on.
var errNoTerminal = errors.New("no terminal")

// terminalOf is how ctx reaches the user's terminal (see withTerminal): by default the controlling terminal.
// Answers are read from the terminal device, never from standard input: a script may pipe anything into stdin
// (the --args of a call, a script to run), and none of it may answer an approval.
func terminalOf(ctx context.Context) terminalOpener {
	if open, ok := ctx.Value(terminalKey{}).(terminalOpener); ok {
		return open
	}
	return func() (io.ReadWriteCloser, error) {
		f, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", errNoTerminal, err)
		}
		return f, nil
	}
}

// cliApprover asks the person at the terminal about each call that needs approval (a tools.ask rule, or a
// pinned definition that changed), one question at a time; calls that need none are allowed without a
// question. With --yes it approves them all and says so on stderr; without a terminal it blocks them with a
// message naming the rule and how to allow the tool. The terminal is opened at the first question, so a
// command that asks nothing never touches it. It is safe for concurrent use (a script's Promise.all).
type cliApprover struct {
	cmd    string // "call" or "run", for the messages
	yes    bool
	open   terminalOpener
	turn   chan struct{} // held while a question is on the terminal; guards term and lines
	opened bool
	term   io.ReadWriteCloser // nil: no terminal
	lines  chan string        // the terminal's lines, read by one goroutine
	done   chan struct{}      // closed by release
	stderr io.Writer
	policy *catalog.Policy
	pc     *config.Origins
}

// newCLIApprover makes the approver of a command; release closes the terminal if it was opened.
func newCLIApprover(ctx context.Context, cmd string, yes bool, policy *catalog.Policy, pc *config.Origins, stderr io.Writer) (a *cliApprover, release func()) {
	a = &cliApprover{cmd: cmd, yes: yes, open: terminalOf(ctx), stderr: stderr, policy: policy, pc: pc,
		turn: make(chan struct{}, 1), done: make(chan struct{})}
	return a, func() {
		a.turn <- struct{}{} // no question is on the terminal from now on
		close(a.done)
		if a.term != nil {
			a.term.Close()
		}
	}
}

// openTerminal opens the terminal once, with the goroutine that reads its lines. The caller holds turn.
func (a *cliApprover) openTerminal() {
	if a.opened {
		return
	}
	a.opened = true
	term, err := a.open()
	if err != nil {
		return
	}
	a.term, a.lines = term, make(chan string, 8)
	go func() {
		// Ends when the terminal is closed, or at its end of input.
		defer close(a.lines)
		sc := bufio.NewScanner(term)
		for sc.Scan() {
			select {
			case a.lines <- sc.Text():
			case <-a.done:
				return
			}
		}
	}()
}

// Approve implements runtime.Approver.
func (a *cliApprover) Approve(ctx context.Context, inv *runtime.Invocation) (runtime.Decision, error) {
	if !inv.ApprovalRequired {
		return runtime.Decision{Allow: true}, nil
	}
	id := inv.Tool.ID()
	why := a.why(inv)
	if a.yes {
		fmt.Fprintf(a.stderr, "toolsearch %s: --yes approved %s (%s)\n", a.cmd, id, why)
		return runtime.Decision{Allow: true, AcceptChange: true, By: "--yes"}, nil
	}
	select {
	case a.turn <- struct{}{}:
		defer func() { <-a.turn }()
	case <-ctx.Done():
		return runtime.Decision{}, ctx.Err()
	}
	a.openTerminal()
	if a.term == nil {
		return runtime.Decision{By: "no terminal", Reason: fmt.Sprintf("%s needs approval (%s), and there is no terminal "+
			"to ask: run the command on a terminal, pass --yes, or %s", id, why, a.allowHint(inv))}, nil
	}
	// What was typed before the question is no answer to it.
	for drained := false; !drained; {
		select {
		case _, ok := <-a.lines:
			drained = !ok
		default:
			drained = true
		}
	}
	if _, err := io.WriteString(a.term, a.question(inv, why)); err != nil {
		return runtime.Decision{}, fmt.Errorf("the terminal: %w", err)
	}
	select {
	case line, ok := <-a.lines:
		if !ok {
			return runtime.Decision{}, errors.New("the terminal closed before an answer")
		}
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "y", "yes":
			return runtime.Decision{Allow: true, AcceptChange: true, By: "terminal"}, nil
		}
		return runtime.Decision{By: "terminal", Reason: "the user declined " + id + " on the terminal"}, nil
	case <-ctx.Done():
		io.WriteString(a.term, "\n(no answer in time: the call is blocked)\n")
		return runtime.Decision{}, ctx.Err()
	}
}

func (a *cliApprover) why(inv *runtime.Invocation) string { return heldBy(a.policy, a.pc, inv) }

func (a *cliApprover) allowHint(inv *runtime.Invocation) string {
	return howToAllow(a.policy, a.pc, inv)
}

// heldBy says what holds a call for approval: the rule of the config (by its key) and a changed definition.
func heldBy(policy *catalog.Policy, pc *config.Origins, inv *runtime.Invocation) string {
	var parts []string
	if inv.ApprovalRule != "" {
		v := policy.Check(inv.Tool)
		parts = append(parts, fmt.Sprintf("%s %q", pc.KeyOf(catalog.Unmatched{Layer: v.Layer, List: config.AskKey}, ""), inv.ApprovalRule))
	}
	if inv.DefinitionChange != nil {
		parts = append(parts, inv.DefinitionChange.String())
	}
	return strings.Join(parts, "; ")
}

// howToAllow says how to let a held call's tool run without being asked.
func howToAllow(policy *catalog.Policy, pc *config.Origins, inv *runtime.Invocation) string {
	var hints []string
	if v := policy.Check(inv.Tool); v.Ask {
		hints = append(hints, pc.AllowHint(inv.Tool, v, ""))
	}
	if inv.DefinitionChange != nil {
		hints = append(hints, fmt.Sprintf("accept its new definition with `toolsearch pins forget %s`", inv.Tool.ID()))
	}
	return strings.Join(hints, "; and ")
}

// serveApprovalHint is the front's ApprovalHint for `mcp serve`: how to let a tool through whose call was
// blocked because its client cannot ask its user, naming the keys of the config file under the client's own
// profile ("" for tools.allow/deny/ask). rule is "" for a changed pinned definition, which the policy cannot lift.
func serveApprovalHint(lc *config.Config) func(tool *catalog.Tool, rule, profile string) string {
	return func(tool *catalog.Tool, rule, profile string) string {
		policy := lc.Policy
		if profile != "" {
			i := slices.IndexFunc(lc.Profiles, func(p config.Profile) bool { return p.Name == profile })
			if i < 0 {
				return "" // not one of ours: the front's own hint
			}
			policy = lc.Profiles[i].Policy
		}
		var hints []string
		if v := policy.Check(tool); v.Ask {
			hints = append(hints, lc.Origins.AllowHint(tool, v, profile))
		}
		if rule == "" {
			hints = append(hints, fmt.Sprintf("accept its new definition with `toolsearch pins forget %s`", tool.ID()))
		}
		if len(hints) == 0 {
			return ""
		}
		return strings.Join(hints, "; and ") + ", or connect with an MCP client that supports elicitation"
	}
}

// question is what the terminal shows: the facts needed to decide, every one of them from the tool's server
// or the model and so made safe to print (no control characters or direction overrides that could hide part
// of the question).
func (a *cliApprover) question(inv *runtime.Invocation, why string) string {
	t := inv.Tool
	var b strings.Builder
	fmt.Fprintf(&b, "\ntoolsearch %s: a tool call needs your approval\n", a.cmd)
	row := func(k, v string) {
		if v != "" {
			fmt.Fprintf(&b, "  %-12s %s\n", k+":", printable(v))
		}
	}
	row("tool", t.ID())
	if t.Source == catalog.SourceMCP {
		server := t.SourceName
		if name := a.pc.Server(t.SourceName); name != "" {
			server = name
		}
		row("server", server)
	}
	row("title", t.Label)
	row("annotations", annotationText(t))
	row("why", why)
	row("arguments", boundedJSON(inv.Arguments, maxApprovalArgBytes))
	b.WriteString("Approve this call? [y/N] ")
	return b.String()
}

// annotationText lists what the tool's annotations say, and for an untrusted tool what the policy takes them
// to mean (its claims only make it stricter).
func annotationText(t *catalog.Tool) string {
	var claims []string
	if an := t.Annotations; an != nil {
		for _, h := range []struct {
			name string
			v    *bool
		}{{"readOnly", an.ReadOnlyHint}, {"destructive", an.DestructiveHint}, {"idempotent", an.IdempotentHint}, {"openWorld", an.OpenWorldHint}} {
			if h.v != nil {
				claims = append(claims, fmt.Sprintf("%s=%t", h.name, *h.v))
			}
		}
	}
	b := t.Behavior()
	var eff []string
	for _, h := range []struct {
		name string
		v    bool
	}{{"readOnly", b.ReadOnly}, {"destructive", b.Destructive}, {"idempotent", b.Idempotent}, {"openWorld", b.OpenWorld}} {
		if h.v {
			eff = append(eff, h.name)
		}
	}
	claimed := "none"
	if len(claims) > 0 {
		claimed = strings.Join(claims, ", ")
	}
	if t.Trusted() {
		return claimed
	}
	return fmt.Sprintf("%s (untrusted server: treated as %s)", claimed, strings.Join(eff, ", "))
}

// boundedJSON is raw as compact JSON cut to at most n bytes, at a character boundary, with a note of the
// whole size when cut.
func boundedJSON(raw json.RawMessage, n int) string {
	s := compactJSON(raw)
	if len(s) <= n {
		return s
	}
	return textcut.Prefix(s, n) + fmt.Sprintf("… (%d bytes in all)", len(s))
}

func compactJSON(raw json.RawMessage) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	var v any
	if json.Unmarshal(raw, &v) != nil || enc.Encode(v) != nil {
		return string(raw)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// printable escapes what a terminal would act on rather than show: C0 and C1 controls (escape sequences), DEL,
// and the bidirectional overrides that reorder what follows them.
func printable(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f), textcut.Invisible(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
