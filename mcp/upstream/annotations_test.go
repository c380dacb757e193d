package upstream

import (
	"encoding/json"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/mcp/internal/mcptest"
)

func boolPtr(b bool) *bool { return &b }

// annotatedServer has a read-only tool and a destructive one, as real servers annotate them.
func annotatedServer() *fakeServer { return &fakeServer{mcptest.NewAnnotatedServer()} }

// A server that changes a tool's annotations has changed the tool: consumers rebuild.
func TestAnnotationChangeIsAChange(t *testing.T) {
	f := annotatedServer()
	src := startSource(t, inMemoryConfig("fs"), fastOptions(nil), map[string]dialFunc{"fs": f.dial})
	changed := src.Changed()
	f.Srv.AddTool(&sdk.Tool{Name: "read_file", Description: "Read a file.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`),
		Annotations: &sdk.ToolAnnotations{Title: "Read file", DestructiveHint: boolPtr(true)}}, echo("read "))
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("an annotation change was not a change")
	}
	require.Eventually(t, func() bool {
		for _, tool := range src.Tools() {
			if tool.Name == "read_file" {
				return tool.Annotations != nil && tool.Annotations.ReadOnlyHint == nil
			}
		}
		return false
	}, 5*time.Second, 10*time.Millisecond)
}
