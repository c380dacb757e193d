package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/runtime"
)

// ServerOptions configure NewServer. A nil *ServerOptions means every default.
type ServerOptions struct {
	// Tools are in-process tools offered next to the upstream servers' tools: cataloged like them, or shown
	// directly when they are direct-only. Each needs a Handler.
	Tools []catalog.Tool
	// Name and Version are what clients see in initialize; "" means "toolsearch" and "dev".
	Name, Version string
	// SessionID scopes the runtime's catalog cache and session log; "" means "mcp-serve".
	SessionID string
	// Logger receives failures to rebuild the catalog; nil discards.
	Logger *slog.Logger
}

// Server is toolsearch as an MCP server: it shows its clients the Tool Search surface of the runtime's mode —
// tool_search_code, or tool_search, tool_describe and tool_call (plus the directory as the server's
// instructions in directory mode) — over every tool of an upstream Source and the in-process tools, and runs
// each tools/call through Run.Execute, so every real call goes through the runtime's pipeline.
//
// All clients share one runtime run, whose counters (searchCount and so on in tool_search_code results) add
// up over the server's life. When the upstream tools change, a new run is started from the same session (its
// catalog is rebuilt) and the old one is closed once its calls finish. A Server is safe for concurrent use.
type Server struct {
	rt       *runtime.Runtime
	upstream *Source
	opts     ServerOptions
	log      *slog.Logger
	sdk      *sdk.Server

	mu      sync.Mutex
	current *liveRun
	closing bool              // set by Close: no call is admitted to a run after it
	exposed map[string]string // tool name → its definition as JSON, as registered with the SDK server

	gen int // runs started; only NewServer and then follow touch it

	httpOnce    sync.Once
	httpHandler http.Handler

	calls  atomic.Int64
	done   chan struct{}
	wg     sync.WaitGroup
	closed sync.Once
}

// liveRun is a run and the calls still using it, so that it is closed only after they finish.
type liveRun struct {
	run   *runtime.Run
	calls sync.WaitGroup
}

// NewServer builds the server's first run from the tools the upstream Source (nil for none) has now, and
// follows its changes until Close. The runtime decides the mode; its mode must not be off, since a server that
// shows every tool directly is what Tool Search replaces.
func NewServer(ctx context.Context, rt *runtime.Runtime, upstream *Source, opts *ServerOptions) (*Server, error) {
	if rt == nil {
		return nil, errors.New("mcp: NewServer needs a runtime")
	}
	s := &Server{rt: rt, upstream: upstream, exposed: map[string]string{}, done: make(chan struct{})}
	if opts != nil {
		s.opts = *opts
		s.opts.Tools = append([]catalog.Tool(nil), opts.Tools...)
	}
	if s.opts.Name == "" {
		s.opts.Name = "toolsearch"
	}
	if s.opts.Version == "" {
		s.opts.Version = "dev"
	}
	if s.opts.SessionID == "" {
		s.opts.SessionID = "mcp-serve"
	}
	s.log = s.opts.Logger
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}

	var changed <-chan struct{}
	if upstream != nil {
		changed = upstream.Changed() // before the first Tools, so no change is missed
	}
	lr, err := s.startRun(ctx)
	if err != nil {
		return nil, err
	}
	s.current = lr
	s.sdk = sdk.NewServer(&sdk.Implementation{Name: s.opts.Name, Version: s.opts.Version}, &sdk.ServerOptions{
		// The directory (directory mode) belongs in the system prompt; an MCP client puts a server's
		// instructions there. It is fixed for a session once the client has initialized.
		Instructions: lr.run.SystemPromptSection(),
		Capabilities: &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{ListChanged: true}},
	})
	s.syncTools(lr.run)
	if upstream != nil {
		s.wg.Add(1)
		go s.follow(changed)
	}
	return s, nil
}

func (s *Server) startRun(ctx context.Context) (*liveRun, error) {
	tools := append([]catalog.Tool(nil), s.opts.Tools...)
	if s.upstream != nil {
		tools = append(tools, s.upstream.Tools()...)
	}
	s.gen++
	run, err := s.rt.StartRun(ctx, runtime.RunRequest{
		SessionID: s.opts.SessionID,
		RunID:     s.opts.SessionID + "-" + strconv.Itoa(s.gen),
		Tools:     tools,
	})
	if err != nil {
		return nil, fmt.Errorf("mcp: start run: %w", err)
	}
	return &liveRun{run: run}, nil
}

// follow rebuilds the run whenever the upstream tools change.
func (s *Server) follow(changed <-chan struct{}) {
	defer s.wg.Done()
	for {
		select {
		case <-s.done:
			return
		case <-changed:
		}
		if s.upstream.isClosed() {
			return // the Source wakes waiters when it closes; there is nothing left to follow
		}
		changed = s.upstream.Changed()
		lr, err := s.startRun(context.Background())
		if err != nil {
			// The old run keeps serving the tools it has; the next change tries again.
			s.log.Error("mcp serve: rebuilding the catalog failed", "error", err)
			continue
		}
		s.mu.Lock()
		old := s.current
		s.current = lr
		s.mu.Unlock()
		s.syncTools(lr.run)
		s.retire(old)
	}
}

// retire closes a run once the calls that still use it have finished.
func (s *Server) retire(lr *liveRun) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		lr.calls.Wait()
		lr.run.Close()
	}()
}

// syncTools makes the SDK server offer exactly the run's tools. Only real differences are applied, since each
// change notifies every client.
func (s *Server) syncTools(run *runtime.Run) {
	s.mu.Lock()
	defer s.mu.Unlock()
	want := map[string]runtime.ToolDefinition{}
	for _, def := range run.Tools() {
		want[def.Function.Name] = def
	}
	var gone []string
	for name := range s.exposed {
		if _, ok := want[name]; !ok {
			gone = append(gone, name)
			delete(s.exposed, name)
		}
	}
	if len(gone) > 0 {
		s.sdk.RemoveTools(gone...)
	}
	for name, def := range want {
		key, _ := json.Marshal(def)
		if s.exposed[name] == string(key) {
			continue
		}
		params := def.Function.Parameters
		if !isObjectSchema(params) {
			// The SDK requires an object schema; a tool taking anything else cannot be offered over MCP.
			s.log.Warn("mcp serve: not offering a tool whose parameters are not an object schema", "tool", name)
			continue
		}
		s.exposed[name] = string(key)
		s.sdk.AddTool(&sdk.Tool{Name: name, Description: def.Function.Description, InputSchema: params}, s.handle(name))
	}
}

func isObjectSchema(schema json.RawMessage) bool {
	var head struct {
		Type any `json:"type"`
	}
	if json.Unmarshal(schema, &head) != nil {
		return false
	}
	return head.Type == "object"
}

// handle runs one tools/call through the current run.
func (s *Server) handle(name string) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		// Admission and Close's hand-over of the current run happen under one lock, so a call either counts in
		// the run's WaitGroup before Close waits on it, or is refused: never an Add racing that Wait.
		s.mu.Lock()
		if s.closing {
			s.mu.Unlock()
			return nil, ErrServerClosed
		}
		lr := s.current
		lr.calls.Add(1)
		s.mu.Unlock()
		defer lr.calls.Done()

		var args json.RawMessage
		if req.Params != nil {
			args = req.Params.Arguments
		}
		id := "mcp-" + strconv.FormatInt(s.calls.Add(1), 10)
		res, err := lr.run.Execute(ctx, runtime.ToolCall{ID: id, Name: name, Arguments: args})
		if err != nil {
			return nil, err
		}
		// Content only, no structuredContent: the text already is the JSON of the details, and clients that
		// pass both to the model would pay for it twice.
		return &sdk.CallToolResult{
			Content: []sdk.Content{&sdk.TextContent{Text: res.Content}},
			IsError: res.IsError,
		}, nil
	}
}

// Run serves one client over a byte stream — usually standard input and output — until the client disconnects
// or ctx ends. r and w are not closed.
func (s *Server) Run(ctx context.Context, r io.Reader, w io.Writer) error {
	err := s.sdk.Run(ctx, &sdk.IOTransport{Reader: io.NopCloser(r), Writer: nopWriteCloser{w}})
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// Handler serves clients over streamable HTTP; every call returns the same handler, which keeps the clients'
// sessions. It refuses requests that reach a loopback address under another host name (DNS rebinding).
func (s *Server) Handler() http.Handler {
	s.httpOnce.Do(func() {
		s.httpHandler = sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s.sdk }, nil)
	})
	return s.httpHandler
}

// Close stops following the upstream Source and closes the runs, after their calls finish; calls arriving from
// then on fail with ErrServerClosed. It closes neither the runtime nor the Source: the caller owns them.
func (s *Server) Close() error {
	s.closed.Do(func() {
		close(s.done)
		s.wg.Wait() // follow has stopped swapping runs, and retired runs are closed
		s.mu.Lock()
		s.closing = true
		lr := s.current
		s.mu.Unlock()
		lr.calls.Wait()
		lr.run.Close()
	})
	return nil
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
