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
)

// CatalogModeDirectOnly marks a tool that is never cataloged: it stays directly visible to the model in every mode.
const CatalogModeDirectOnly = "direct-only"

// Tool is one entry offered to a catalog. New copies what it keeps, so a caller may reuse its slice afterwards.
type Tool struct {
	Source      Source
	SourceName  string // "core", a plugin id, an MCP server name, "client"
	Name        string
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
	// Handler runs the tool in-process; nil when the tool is executed elsewhere (an MCP server, the client).
	Handler Handler
}

// ID is "<source>:<sourceName>:<name>", the exact key that lookup, describe and call accept.
func (t *Tool) ID() string {
	return string(t.Source) + ":" + t.SourceName + ":" + t.Name
}

// Trusted reports whether the tool's schemas may be traversed for hints: only OpenClaw core and plugin tools.
func (t *Tool) Trusted() bool {
	return t.Source == SourceOpenClaw
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
