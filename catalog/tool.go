package catalog

import (
	"context"
	"encoding/json"
)

// Source says where a tool comes from. Only SourceOpenClaw tools are trusted: their schemas are rendered into
// search hints, while MCP and client schemas are never traversed for hints: a schema we did not write can be
// huge, cyclic or written to steer the model, and a hit must stay small and predictable.
type Source string

// The sources a catalog knows. A tool's id is "<source>:<sourceName>:<name>".
const (
	SourceOpenClaw Source = "openclaw" // core and plugin tools
	SourceMCP      Source = "mcp"      // tools of MCP servers
	SourceClient   Source = "client"   // tools the client declared for the run

	// SourceProgram is SourceOpenClaw under the name a Go program embedding toolsearch means: a tool of the
	// program itself, with a Go handler, trusted like OpenClaw's own. It is the same value, so ids still read
	// "openclaw:<sourceName>:<name>".
	SourceProgram = SourceOpenClaw
)

// CatalogModeDirectOnly marks a tool that is never cataloged: it stays directly visible to the model in every mode.
const CatalogModeDirectOnly = "direct-only"

// Tool is one entry offered to a catalog. New copies what it keeps, so a caller may reuse its slice afterwards.
type Tool struct {
	Source     Source
	SourceName string // "core", a plugin id, an MCP server name, "client"
	Name       string
	// ListedName is the name the tool's source lists it under when Name is a safe form of it (an MCP tool
	// named outside [A-Za-z0-9_-], cut to fit, or given a "-2" suffix by SafeMCPNames); "" means Name. Policy
	// entries match it, so an entry copied from the server's listing names the tool it was copied from.
	ListedName  string
	Label       string
	Description string
	// Parameters is the JSON Schema of the arguments. Empty means an object with no declared properties.
	Parameters json.RawMessage
	// OutputSchema is optional; only trusted tools get an output hint from it.
	OutputSchema json.RawMessage
	// CatalogMode is "" or CatalogModeDirectOnly.
	CatalogMode string
	// Groups are the policy groups the tool belongs to ("fs", "web", ...), matched by "group:<name>" entries.
	Groups []string
	// Annotations are the tool's behaviour hints (MCP tool annotations); nil when it declares none. The policy
	// reads them through Behavior, which only believes a trusted tool's claims.
	Annotations *Annotations
	// TrustedByUser marks a tool of an untrusted source (an MCP server, a client) that the user's own
	// configuration vouches for (an MCP server configured with "trusted": true): it is treated as trusted.
	TrustedByUser bool
	// Handler runs the tool in-process; nil when the tool is executed elsewhere (an MCP server, the client).
	Handler Handler
}

// ID is "<source>:<sourceName>:<name>", the exact key that lookup, describe and call accept.
func (t *Tool) ID() string {
	return string(t.Source) + ":" + t.SourceName + ":" + t.Name
}

// Trusted reports whether the tool's schemas may be traversed for hints and its annotations believed: OpenClaw
// core and plugin tools, and tools the user marked trusted (TrustedByUser).
func (t *Tool) Trusted() bool {
	return t.Source == SourceOpenClaw || t.TrustedByUser
}

// Annotations are MCP's tool annotations: hints about what a tool does. A nil field is unset and takes the MCP
// default (not read-only, destructive, not idempotent, open world). They are claims of whoever wrote the tool.
type Annotations struct {
	ReadOnlyHint    *bool `json:"readOnlyHint,omitempty"`    // the tool does not modify its environment
	DestructiveHint *bool `json:"destructiveHint,omitempty"` // it may destroy or overwrite (when not read-only)
	IdempotentHint  *bool `json:"idempotentHint,omitempty"`  // repeating a call with the same arguments does no more
	OpenWorldHint   *bool `json:"openWorldHint,omitempty"`   // it reaches beyond a closed domain (the web, ...)
}

// Behavior is what the policy assumes a tool does, resolved from its annotations.
type Behavior struct {
	ReadOnly, Destructive, Idempotent, OpenWorld bool
}

// Behavior resolves the tool's annotations against the MCP defaults. A trusted tool's claims are taken as they
// are. An untrusted tool's claim counts only where it is stricter than the default, and every MCP default is
// already the strict side, so an untrusted tool (an MCP server the user did not mark trusted, a client tool) is
// always treated as not read-only, destructive, not idempotent and open-world, whatever it claims: a server
// cannot talk its way past an approval or into a read-only session.
func (t *Tool) Behavior() Behavior {
	b := Behavior{Destructive: true, OpenWorld: true}
	a := t.Annotations
	if a == nil || !t.Trusted() {
		return b
	}
	b.ReadOnly = hint(a.ReadOnlyHint, false)
	b.Destructive = !b.ReadOnly && hint(a.DestructiveHint, true)
	b.Idempotent = hint(a.IdempotentHint, false)
	b.OpenWorld = hint(a.OpenWorldHint, true)
	return b
}

func hint(v *bool, def bool) bool {
	if v == nil {
		return def
	}
	return *v
}

// clone copies the annotations, so a catalog's tools share nothing a caller can change.
func (a *Annotations) clone() *Annotations {
	if a == nil {
		return nil
	}
	c := &Annotations{}
	for _, f := range [...]struct{ from, to **bool }{
		{&a.ReadOnlyHint, &c.ReadOnlyHint}, {&a.DestructiveHint, &c.DestructiveHint},
		{&a.IdempotentHint, &c.IdempotentHint}, {&a.OpenWorldHint, &c.OpenWorldHint},
	} {
		if *f.from != nil {
			v := **f.from
			*f.to = &v
		}
	}
	return c
}

// Handler runs a tool. Implementations must be safe for concurrent use and must watch ctx.
type Handler interface {
	Call(ctx context.Context, args json.RawMessage) (*Result, error)
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, args json.RawMessage) (*Result, error)

// Call calls f.
func (f HandlerFunc) Call(ctx context.Context, args json.RawMessage) (*Result, error) {
	return f(ctx, args)
}

// Content is one block of a tool result, in the MCP content shape.
type Content struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	Data     string `json:"data,omitempty"`
	MIMEType string `json:"mimeType,omitempty"`
}

// Result is what a tool returns. A tool-level failure is a Result with IsError set; a Go error returned next to it
// means the infrastructure failed. JSON-returning tools put their value in Details.
type Result struct {
	Content []Content       `json:"content"`
	Details json.RawMessage `json:"details,omitempty"`
	IsError bool            `json:"isError,omitempty"`
}

// Descriptor is a search hit as the model sees it, small enough that eight of them stay a few KB. Input is a bounded
// TypeScript-like signature for trusted tools and "unknown" otherwise; Output is set only for trusted tools with a
// complete output hint. The description and label are bounded (see MaxHitDescriptionBytes); describe has the full
// description. Source and SourceName are parts of the id, so they are not repeated in the JSON the model reads.
type Descriptor struct {
	ID          string `json:"id"`
	Source      Source `json:"-"`
	SourceName  string `json:"-"`
	Name        string `json:"name"`
	Label       string `json:"label,omitempty"`
	Description string `json:"description"`
	Input       string `json:"input"`
	Output      string `json:"output,omitempty"`
}

// Description is what describe returns: the descriptor plus the full schemas.
type Description struct {
	Descriptor
	Parameters   json.RawMessage `json:"parameters"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
}

// Hit is one search result. Score is comparable only within one search.
type Hit struct {
	Descriptor
	Score float64 `json:"score"`
}
