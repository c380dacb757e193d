package mcptest

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// FakeServer is an in-process go-sdk MCP server. Each Connect connects a new session to it over the SDK's
// in-memory transports, behind a connection wrapper that can freeze (a hung server) or sever (a crashed one)
// every session.
type FakeServer struct {
	Srv *sdk.Server

	mu     sync.Mutex
	conns  []*controlledConn
	frozen bool
	dials  int
}

// NewFakeServer is a FakeServer whose listings have pages of pageSize (0: the SDK's default).
func NewFakeServer(pageSize int) *FakeServer {
	return FakeServerOf(sdk.NewServer(&sdk.Implementation{Name: "fake", Version: "1"}, &sdk.ServerOptions{PageSize: pageSize}))
}

// FakeServerOf is a FakeServer in front of srv.
func FakeServerOf(srv *sdk.Server) *FakeServer { return &FakeServer{Srv: srv} }

// AddTool adds a tool with an object schema of one string property.
func (f *FakeServer) AddTool(name, desc string, h sdk.ToolHandler) {
	f.Srv.AddTool(&sdk.Tool{
		Name:        name,
		Description: desc,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","description":"what to echo"}}}`),
	}, h)
}

// NewAnnotatedServer is a FakeServer with a read-only tool (read_file) and a destructive, closed-world one
// (delete_file), annotated as real servers annotate them.
func NewAnnotatedServer() *FakeServer {
	f := NewFakeServer(0)
	schema := json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)
	yes, no := true, false
	f.Srv.AddTool(&sdk.Tool{Name: "read_file", Description: "Read a file.", InputSchema: schema,
		Annotations: &sdk.ToolAnnotations{Title: "Read file", ReadOnlyHint: true}}, Echo("read "))
	f.Srv.AddTool(&sdk.Tool{Name: "delete_file", Description: "Delete a file.", InputSchema: schema,
		Annotations: &sdk.ToolAnnotations{DestructiveHint: &yes, OpenWorldHint: &no}}, Echo("deleted "))
	return f
}

// Echo answers with the text argument, as text and as structuredContent.
func Echo(prefix string) sdk.ToolHandler {
	return func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		var args struct {
			Text string `json:"text"`
		}
		_ = json.Unmarshal(req.Params.Arguments, &args)
		return &sdk.CallToolResult{
			Content:           []sdk.Content{&sdk.TextContent{Text: prefix + args.Text}},
			StructuredContent: map[string]any{"echo": args.Text},
		}, nil
	}
}

// Connect starts a session of the server and returns the client's end of it.
func (f *FakeServer) Connect(ctx context.Context) (sdk.Transport, error) {
	ct, st := sdk.NewInMemoryTransports()
	f.mu.Lock()
	f.dials++
	f.mu.Unlock()
	if _, err := f.Srv.Connect(ctx, &controlledTransport{inner: st, f: f}, nil); err != nil {
		return nil, err
	}
	return ct, nil
}

// Freeze makes every session stop answering: requests are read and handled, answers vanish.
func (f *FakeServer) Freeze(frozen bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.frozen = frozen
}

// Sever closes every session's connection under the server, as a crash would.
func (f *FakeServer) Sever() {
	f.mu.Lock()
	conns := f.conns
	f.conns = nil
	f.mu.Unlock()
	for _, c := range conns {
		c.Connection.Close()
	}
}

// DialCount is how many sessions Connect has started.
func (f *FakeServer) DialCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.dials
}

// Conns are the server's ends of every session it has had and not severed, closed ones included.
func (f *FakeServer) Conns() []sdk.Connection {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]sdk.Connection, 0, len(f.conns))
	for _, c := range f.conns {
		out = append(out, c)
	}
	return out
}

type controlledTransport struct {
	inner sdk.Transport
	f     *FakeServer
}

func (t *controlledTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	cc := &controlledConn{Connection: c, f: t.f}
	t.f.mu.Lock()
	t.f.conns = append(t.f.conns, cc)
	t.f.mu.Unlock()
	return cc, nil
}

type controlledConn struct {
	sdk.Connection
	f *FakeServer
}

func (c *controlledConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	c.f.mu.Lock()
	frozen := c.f.frozen
	c.f.mu.Unlock()
	if frozen {
		return nil
	}
	return c.Connection.Write(ctx, msg)
}
