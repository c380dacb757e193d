package front

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestPassMeta(t *testing.T) {
	got := passMeta(map[string]any{
		"traceparent":        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		"tracestate":         "x=1",
		"example.com/tenant": "t1",
		"progressToken":      7,
		"io.modelcontextprotocol/protocolVersion": "2026-07-28",
		"io.modelcontextprotocol/logLevel":        "debug",
		"modelcontextprotocol.io/other":           1,
		"dev.mcp/x":                               1,
		"mcpserver.example/y":                     "kept: mcpserver is not the label mcp",
	})
	assert.Equal(t, map[string]any{
		"traceparent":         "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		"tracestate":          "x=1",
		"example.com/tenant":  "t1",
		"mcpserver.example/y": "kept: mcpserver is not the label mcp",
	}, got)
	assert.Nil(t, passMeta(map[string]any{"progressToken": 1}))
}
