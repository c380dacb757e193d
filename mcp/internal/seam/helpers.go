package seam

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"syscall"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolsearch/toolsearch/catalog"
)

// ConnectionLost reports whether a call failed because the connection went away under it (the process exited,
// the pipe or socket closed), as opposed to an answer that could not be used. EPIPE is the write of a request to
// the stdin of a process that has exited but whose exit is not noticed yet.
func ConnectionLost(err error) bool {
	for _, target := range []error{sdk.ErrConnectionClosed, io.EOF, io.ErrUnexpectedEOF, io.ErrClosedPipe, net.ErrClosed, os.ErrClosed,
		syscall.EPIPE} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

// SameTool reports whether two tools of a server's listing are the same to a catalog: name, label,
// description, handler, schemas, trust and hints.
func SameTool(a, b *catalog.Tool) bool {
	return a.Name == b.Name && a.ListedName == b.ListedName && a.Label == b.Label && a.Description == b.Description && a.Handler == b.Handler &&
		bytes.Equal(a.Parameters, b.Parameters) && bytes.Equal(a.OutputSchema, b.OutputSchema) &&
		a.TrustedByUser == b.TrustedByUser && sameHints(a.Annotations, b.Annotations)
}

func sameHints(a, b *catalog.Annotations) bool {
	if a == nil || b == nil {
		return a == b
	}
	same := func(x, y *bool) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	return same(a.ReadOnlyHint, b.ReadOnlyHint) && same(a.DestructiveHint, b.DestructiveHint) &&
		same(a.IdempotentHint, b.IdempotentHint) && same(a.OpenWorldHint, b.OpenWorldHint)
}

// IsObjectSchema reports whether a schema's type is "object", which MCP asks of every tool's input schema.
func IsObjectSchema(schema json.RawMessage) bool {
	var head struct {
		Type any `json:"type"`
	}
	if json.Unmarshal(schema, &head) != nil {
		return false
	}
	return head.Type == "object"
}
