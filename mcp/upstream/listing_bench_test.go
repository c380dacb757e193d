package upstream

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/internal/corpus"
)

// corpusServer serves the 644 real tools as one server, in pages of 100.
func corpusServer(tb testing.TB) (*fakeServer, map[string]json.RawMessage) {
	f := newFakeServer(100)
	schemas := map[string]json.RawMessage{}
	for _, t := range corpus.MCPTools() {
		name := t.Server + "_" + t.Name
		if _, dup := schemas[name]; dup {
			continue
		}
		schemas[name] = t.InputSchema
		f.Srv.AddTool(&sdk.Tool{Name: name, Description: t.Description, InputSchema: t.InputSchema}, echo(""))
	}
	return f, schemas
}

// The twin of BenchmarkListCorpus: every real tool is listed, with its schema as the server sent it.
func TestListCorpus(t *testing.T) {
	f, schemas := corpusServer(t)
	src := startSource(t, inMemoryConfig("corpus"), fastOptions(nil), map[string]dialFunc{"corpus": f.dial})
	tools := src.Tools()
	require.Len(t, tools, len(schemas))
	for _, tool := range tools {
		h := tool.Handler.(*toolHandler)
		assert.JSONEq(t, string(schemas[h.remote]), string(tool.Parameters), h.remote)
	}
}

// BenchmarkListCorpus measures connecting to a server and listing the 644 real tools (7 pages), in memory.
func BenchmarkListCorpus(b *testing.B) {
	f, schemas := corpusServer(b)
	opts := fastOptions(nil)
	for b.Loop() {
		src, err := newSource(context.Background(), inMemoryConfig("corpus"), opts, dialers(map[string]dialFunc{"corpus": f.dial}))
		if err != nil {
			b.Fatal(err)
		}
		if len(src.Tools()) != len(schemas) {
			b.Fatalf("listed %d tools", len(src.Tools()))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_ = src.Close(ctx)
		cancel()
	}
}
