package front

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/catalog"
)

// FuzzNamespacedURI: a namespaced URI always leads back to its server and the server's own URI, whatever the
// URI holds.
func FuzzNamespacedURI(f *testing.F) {
	for _, seed := range []string{"file:///shared.txt", "demo://resource/dynamic/text/{resourceId}", "toolsearch://x/y", "", "a b", "urn:x:/"} {
		f.Add("everything", seed)
	}
	f.Fuzz(func(t *testing.T, server, uri string) {
		server, _ = catalog.SafeMCPNames(server, nil) // what a server name is made into
		gotServer, own, ok := splitNamespaced(namespaced(server, uri))
		require.True(t, ok)
		assert.Equal(t, server, gotServer)
		assert.Equal(t, uri, own)
	})
}

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
