package front

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/mcp/internal/mcptest"
	"github.com/toolsearch/toolsearch/mcp/upstream"
	"github.com/toolsearch/toolsearch/runtime"
)

func boolPtr(b bool) *bool { return &b }

// annotatedServer has a read-only tool and a destructive one, as real servers annotate them.
func annotatedServer() *fakeServer { return &fakeServer{mcptest.NewAnnotatedServer()} }

// Annotations reach the catalog entries; a server the user marked trusted gets its claims believed and its
// schemas rendered, an untrusted one gets neither.
func TestAnnotationsAndTrust(t *testing.T) {
	cfg := inMemoryConfig("fs", "docs")
	cfg.Servers["docs"] = upstream.ServerConfig{Command: "in-memory", Trusted: true}
	fs, docs := annotatedServer(), annotatedServer()
	src := startSource(t, cfg, fastOptions(nil), map[string]dialFunc{"fs": fs.dial, "docs": docs.dial})

	byID := map[string]catalog.Tool{}
	for _, tool := range src.Tools() {
		byID[tool.ID()] = tool
	}
	read := byID["mcp:fs:read_file"]
	require.NotNil(t, read.Annotations)
	assert.Equal(t, &catalog.Annotations{ReadOnlyHint: boolPtr(true)}, read.Annotations)
	assert.Equal(t, "Read file", read.Label)
	assert.False(t, read.TrustedByUser)
	assert.False(t, read.Behavior().ReadOnly, "an untrusted server's claim is not believed")
	del := byID["mcp:fs:delete_file"]
	assert.Equal(t, &catalog.Annotations{DestructiveHint: boolPtr(true), OpenWorldHint: boolPtr(false)}, del.Annotations)
	vouched := byID["mcp:docs:read_file"]
	assert.True(t, vouched.TrustedByUser)
	assert.True(t, vouched.Behavior().ReadOnly)

	// A read-only session through toolsearch's own MCP server: only the trusted server's read-only tool is in
	// the catalog, and its hit carries a rendered signature.
	rt, err := runtime.New(t.Context(), &runtime.Options{
		Config: runtime.Config{Enabled: true, Mode: runtime.ModeTools},
		Policy: &catalog.Policy{Session: catalog.Rule{Allow: []string{"annotation:readOnly"}}},
	})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, rt.Close(t.Context())) })
	sess := connectStdio(t, newTestServer(t, rt, src, nil))
	assert.Equal(t, []string{"tool_call", "tool_describe", "tool_search"}, listNames(t, sess),
		"the control tools survive a read-only session: they only read the catalog")
	text, isErr := callText(t, sess, "tool_search", map[string]any{"query": "file"})
	require.False(t, isErr, text)
	var hits []catalog.Descriptor
	require.NoError(t, json.Unmarshal([]byte(text), &hits), text)
	require.Len(t, hits, 1, text)
	assert.Equal(t, "mcp:docs:read_file", hits[0].ID)
	assert.Equal(t, "{ path: string }", hits[0].Input, "a trusted server's schema is rendered")
	text, isErr = callText(t, sess, "tool_call", map[string]any{"id": "mcp:fs:delete_file", "args": map[string]any{"path": "/"}})
	assert.True(t, isErr)
	assert.Contains(t, text, "Unknown tool id: mcp:fs:delete_file.")
}
