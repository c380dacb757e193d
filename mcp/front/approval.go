package front

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/internal/textcut"
	"github.com/toolsearch/toolsearch/runtime"
)

// MaxApprovalArgumentBytes bounds the arguments an approval request shows the user (as JSON); longer ones are
// cut with a marker. The request must stay readable in a dialog, and a model must not be able to hide what a
// call does after megabytes of padding: the cut is said plainly.
const MaxApprovalArgumentBytes = 2048

// maxApprovalFieldBytes bounds each other text of a tool shown in an approval request (its title, its id), which
// its server chose.
const maxApprovalFieldBytes = 256

// rememberField is the form field of an approval request that approves the tool for the rest of the session.
const rememberField = "approve_for_session"

// firstMRTRProtocol is the first MCP protocol version in which a server may not send a request to its client
// while serving one: it must return the request as an input request of its result instead (multi round-trip).
const firstMRTRProtocol = "2026-07-28"

// Approve decides one call of this client's runs (it is their RunRequest.Approver). A call that needs no
// approval is allowed without asking anyone; one that does (a policy Ask entry, a changed pinned definition) is
// put to this client's user with MCP elicitation, in this client's session only, so no other client can answer
// it. The embedding program's ServerOptions.Approver, when set, is asked first and may veto any call. Nothing of
// the call's arguments or _meta decides: only the user's answer does.
func (c *client) Approve(ctx context.Context, inv *runtime.Invocation) (runtime.Decision, error) {
	by := "policy" // a call that needs no approval is allowed by the policy itself
	if a := c.s.opts.Approver; a != nil {
		d, err := a.Approve(ctx, inv)
		if err != nil {
			return runtime.Decision{}, err
		}
		by = d.By
		if by == "" {
			by = "program"
		}
		if !d.Allow {
			return runtime.Decision{Reason: d.Reason, By: by}, nil
		}
	}
	if !inv.ApprovalRequired {
		return runtime.Decision{Allow: true, By: by}, nil
	}
	key := rememberKey(inv.Tool)
	if inv.DefinitionChange == nil && c.remembered(key) {
		return runtime.Decision{Allow: true, By: "elicitation:" + c.id + " (approved for the session)"}, nil
	}
	parked := parkedFrom(ctx)
	if why := c.cannotAsk(parked != nil); why != "" {
		return runtime.Decision{Reason: c.s.cannotAskReason(inv, why, c.profile), By: "front", NotAsked: true}, nil
	}
	started := time.Now()
	var res *sdk.ElicitResult
	var err error
	if parked != nil {
		res, err = parked.ask(ctx, approvalRequest(inv))
	} else {
		res, err = c.elicitInline(ctx, approvalRequest(inv))
	}
	if errors.Is(err, errRoundTripsFull) {
		return runtime.Decision{Reason: c.s.cannotAskReason(inv, fmt.Sprintf("%d approvals of this client wait for an answer already",
			MaxPendingRoundTrips), c.profile), By: "front", NotAsked: true}, nil
	}
	if err != nil {
		if ctx.Err() != nil {
			// The SDK has retired the request and told the client it is cancelled: a late answer is dropped.
			c.s.log.Info("mcp serve: approval not answered in time", "client", c.id, "tool", inv.Tool.ID(),
				"waited", time.Now().Sub(started))
			return runtime.Decision{}, ctx.Err()
		}
		return runtime.Decision{}, fmt.Errorf("the client could not ask its user: %w", err)
	}
	c.s.log.Info("mcp serve: approval answered", "client", c.id, "tool", inv.Tool.ID(), "action", res.Action,
		"waited", time.Now().Sub(started))
	id := inv.Tool.ID()
	switch res.Action {
	case "accept":
		if v, _ := res.Content[rememberField].(bool); v {
			c.remember(key)
		}
		return runtime.Decision{Allow: true, AcceptChange: inv.DefinitionChange != nil, By: "elicitation:" + c.id}, nil
	case "decline":
		return runtime.Decision{Reason: "the user declined to run " + id, By: "elicitation:" + c.id}, nil
	case "cancel":
		return runtime.Decision{Reason: "the user dismissed the approval of " + id + " without approving it",
			By: "elicitation:" + c.id}, nil
	}
	return runtime.Decision{}, fmt.Errorf("the client answered with the unknown action %q", res.Action)
}

// elicitInline puts one approval to the user with an elicitation request of its own, under the cap the
// questions of round-trip clients have: a script that starts 40 calls at once opens at most
// MaxPendingRoundTrips forms, and the rest are blocked unasked (errRoundTripsFull) instead of burying the user.
func (c *client) elicitInline(ctx context.Context, params *sdk.ElicitParams) (*sdk.ElicitResult, error) {
	release, err := c.openQuestion()
	if err != nil {
		return nil, err
	}
	defer release()
	return c.ss.Elicit(ctx, params)
}

// openQuestion counts one more open question of this client's user, refused (errRoundTripsFull) once
// MaxPendingRoundTrips are open, whichever way they are asked; release closes it.
func (c *client) openQuestion() (release func(), err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.asking >= MaxPendingRoundTrips {
		return nil, errRoundTripsFull
	}
	c.asking++
	return func() {
		c.mu.Lock()
		c.asking--
		c.mu.Unlock()
	}, nil
}

// cannotAsk says why this client's user cannot be asked, or returns "". roundTrip: the call is parked, so a
// client of the multi round-trip protocol can be asked through its result.
func (c *client) cannotAsk(roundTrip bool) string {
	if c.ss == nil {
		return "the call did not come through an MCP session"
	}
	ip := c.ss.InitializeParams()
	if ip == nil || ip.Capabilities == nil || ip.Capabilities.Elicitation == nil {
		return "this MCP client did not declare elicitation, so it cannot ask its user"
	}
	if e := ip.Capabilities.Elicitation; e.Form == nil && e.URL != nil {
		return "this MCP client declared only URL elicitation, and an approval needs a form"
	}
	if ip.ProtocolVersion >= firstMRTRProtocol && !roundTrip {
		return "this MCP client speaks protocol " + ip.ProtocolVersion +
			", whose approvals are input requests of a tools/call result, and this call did not come as one"
	}
	return ""
}

// cannotAskReason is the blocked call's reason when the user cannot be asked: what needs approval, why nobody
// was asked, and how to allow the tool.
func (s *Server) cannotAskReason(inv *runtime.Invocation, why string, profile *Profile) string {
	rule := inv.ApprovalRule
	what := fmt.Sprintf("%s needs approval (policy: %s)", inv.Tool.ID(), rule)
	if inv.DefinitionChange != nil {
		rule = ""
		what = inv.DefinitionChange.String() + ", so it must be approved again"
	}
	hint := ""
	if s.opts.ApprovalHint != nil {
		name := ""
		if profile != nil {
			name = profile.Name
		}
		hint = strings.TrimSpace(s.opts.ApprovalHint(inv.Tool, rule, name))
	}
	if hint == "" {
		hint = genericHint(inv.Tool, rule)
	}
	return what + ", but " + why + "; " + strings.TrimRight(hint, ".")
}

// genericHint is ServerOptions.ApprovalHint's default.
func genericHint(tool *catalog.Tool, rule string) string {
	if rule == "" {
		return "to run it, accept its new definition where the pins are kept, or connect with an MCP client that " +
			"supports elicitation"
	}
	return fmt.Sprintf("to run %s, change the policy entry %q that asks for approval, or connect with an MCP "+
		"client that supports elicitation", tool.ID(), rule)
}

// approvalRequest is the form the user is shown: what would run, with which arguments, why it is asked, and a
// box to approve the tool for the rest of the session. Accepting the form approves the call.
func approvalRequest(inv *runtime.Invocation) *sdk.ElicitParams {
	t := inv.Tool
	var b strings.Builder
	fmt.Fprintf(&b, "Allow this tool call?\n\nTool: %s\nServer: %s\n", bounded(t.ID()), bounded(t.SourceName))
	if t.Label != "" {
		fmt.Fprintf(&b, "Title: %s\n", bounded(t.Label))
	}
	fmt.Fprintf(&b, "Annotations: %s\n", annotationText(t))
	if c := inv.DefinitionChange; c != nil {
		fmt.Fprintf(&b, "Changed: %s since it was pinned", strings.Join(c.Changed, ", "))
		if !c.PinnedAt.IsZero() {
			fmt.Fprintf(&b, " on %s", c.PinnedAt.UTC().Format("2006-01-02 15:04 MST"))
		}
		b.WriteString("; approving accepts the new definition.\n")
	} else {
		fmt.Fprintf(&b, "Asked because: the policy entry %q asks for approval.\n", inv.ApprovalRule)
	}
	fmt.Fprintf(&b, "Arguments:\n%s", argumentText(inv.Arguments))
	schema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			rememberField: map[string]any{
				"type":        "boolean",
				"title":       "Approve for this session",
				"description": "Also allow later calls of this tool, as defined now, until this session ends.",
				"default":     false,
			},
		},
	}
	return &sdk.ElicitParams{Mode: "form", Message: b.String(), RequestedSchema: schema}
}

// bounded is a tool's own text as an approval request shows it: on one line, and bounded.
func bounded(s string) string { return textcut.Words(s, maxApprovalFieldBytes, "…") }

// argumentText is a call's arguments as compact JSON, cut at MaxApprovalArgumentBytes with a note saying how much
// was left out.
func argumentText(args json.RawMessage) string {
	text := string(args)
	var v any
	if json.Unmarshal(args, &v) == nil {
		if b, err := json.Marshal(v); err == nil {
			text = string(b)
		}
	}
	text = textcut.Visible(text) // JSON keeps a direction override raw in a string
	if len(text) <= MaxApprovalArgumentBytes {
		return text
	}
	kept := textcut.Prefix(text, MaxApprovalArgumentBytes)
	return fmt.Sprintf("%s… (%d more bytes not shown)", kept, len(text)-len(kept))
}

// annotationText says what a tool claims about itself, and whether those claims are believed.
func annotationText(t *catalog.Tool) string {
	a := t.Annotations
	if a == nil {
		return "none (treated as destructive and open-world)"
	}
	var parts []string
	for _, h := range []struct {
		name string
		v    *bool
	}{{"readOnly", a.ReadOnlyHint}, {"destructive", a.DestructiveHint}, {"idempotent", a.IdempotentHint},
		{"openWorld", a.OpenWorldHint}} {
		if h.v != nil {
			parts = append(parts, fmt.Sprintf("%s=%t", h.name, *h.v))
		}
	}
	text := strings.Join(parts, ", ")
	if text == "" {
		text = "none"
	}
	if !t.Trusted() {
		text += " (claims of an untrusted server: it is treated as destructive and open-world)"
	}
	return text
}

// rememberKey is what an "approve for this session" covers: the tool as the user saw it. A definition that
// changes afterwards (a new description, schema or annotations) is a different key, so it is asked about again.
// Each part is hashed with its length, so no two definitions share a key by how their parts split.
func rememberKey(t *catalog.Tool) string {
	ann, _ := json.Marshal(t.Annotations)
	h := sha256.New()
	for _, part := range []string{t.ID(), t.Label, t.Description, string(t.Parameters), string(t.OutputSchema),
		string(ann), fmt.Sprint(t.Trusted())} {
		fmt.Fprintf(h, "%d:%s", len(part), part)
	}
	return string(h.Sum(nil))
}

func (c *client) remembered(key string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.approved[key]
}

func (c *client) remember(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.closed {
		c.approved[key] = true
	}
}
