package catalog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/toolsearch/toolsearch/internal/textcut"
)

// Bounds of what a cataloged tool may be. Tools come from servers and clients nobody here wrote; one that breaks
// these is left out of the catalog with a *ToolError, and the rest of the catalog is built.
const (
	// MaxNameBytes bounds a tool's name and its source name. Both are shown in every search hit.
	MaxNameBytes = 128
	// MaxSchemaBytes bounds a tool's input schema. The runtime compiles schemas of at most this size.
	MaxSchemaBytes = 1 << 20
)

// ToolError says why one tool was left out of a catalog. It wraps ErrInvalidTool.
type ToolError struct {
	// ID is the tool's id, cut to a printable length.
	ID string
	// Reason says what is wrong, for an operator's log.
	Reason string
	// Err is the underlying error, if any (a schema that does not compile).
	Err error
}

func (e *ToolError) Error() string {
	msg := fmt.Sprintf("catalog: tool %q left out: %s", e.ID, e.Reason)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns ErrInvalidTool and the underlying error.
func (e *ToolError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrInvalidTool, e.Err}
	}
	return []error{ErrInvalidTool}
}

// maxErrorIDBytes bounds the id quoted in a ToolError: a hostile name must not make every log line huge.
const maxErrorIDBytes = 200

func toolError(t *Tool, err error, format string, args ...any) *ToolError {
	return &ToolError{ID: textcut.Words(t.ID(), maxErrorIDBytes, CutMarker), Reason: fmt.Sprintf(format, args...), Err: err}
}

// checkIdentity checks what every tool needs whether or not it is cataloged: a known source, and a name and
// source name that can be shown and typed.
func checkIdentity(t *Tool) *ToolError {
	switch t.Source {
	case SourceOpenClaw, SourceMCP, SourceClient:
	default:
		return toolError(t, nil, "unknown source %q", textcut.Prefix(string(t.Source), maxErrorIDBytes))
	}
	if strings.TrimSpace(t.Name) == "" || strings.TrimSpace(t.SourceName) == "" {
		return toolError(t, nil, "a tool needs a name and a source name")
	}
	for _, f := range []struct{ what, s string }{{"name", t.Name}, {"source name", t.SourceName}} {
		if problem := nameProblem(f.s); problem != "" {
			return toolError(t, nil, "its %s %s", f.what, problem)
		}
	}
	return nil
}

func nameProblem(s string) string {
	switch {
	case len(s) > MaxNameBytes:
		return fmt.Sprintf("is %d bytes long, over %d", len(s), MaxNameBytes)
	case !utf8.ValidString(s):
		return "is not valid UTF-8"
	case strings.ContainsFunc(s, unicode.IsControl):
		return "has control characters"
	case strings.ContainsFunc(s, textcut.Invisible):
		return "has invisible formatting characters (direction overrides, zero-width characters)"
	case strings.TrimSpace(s) != s:
		return "starts or ends with white space" // lookups trim what the model typed, so it could never be found
	}
	return ""
}

// checkContent checks what a cataloged tool needs beyond its identity: a name no control tool has, and an input
// schema that is a JSON object of bounded size which, if opts has a schema check, passes it.
func checkContent(t *Tool, opts *Options) *ToolError {
	if opts != nil {
		for _, reserved := range opts.ReservedNames {
			if t.Name == reserved {
				return toolError(t, nil, "its name is reserved for a control tool")
			}
		}
	}
	schema := bytes.TrimSpace(t.Parameters)
	if len(schema) == 0 || string(schema) == "null" {
		return nil
	}
	switch {
	case len(schema) > MaxSchemaBytes:
		return toolError(t, nil, "its input schema is %d bytes, over %d", len(schema), MaxSchemaBytes)
	case schema[0] != '{' || !json.Valid(schema):
		return toolError(t, nil, "its input schema is not a JSON object")
	}
	if opts != nil && opts.CheckSchema != nil {
		if err := opts.CheckSchema(t.ID(), t.Parameters); err != nil {
			return toolError(t, err, "its input schema does not compile")
		}
	}
	return nil
}
