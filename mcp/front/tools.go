package front

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/mcp/internal/seam"
	"github.com/toolsearch/toolsearch/runtime"
)

// view is one generation of what clients see: the tools it was built from, and a run over them that names the
// tools (and renders the directory) without ever executing a call. Client runs of the same generation are
// started from the same tools, so they show the same names.
type view struct {
	gen   int
	run   *runtime.Run
	tools []catalog.Tool
}

func (s *Server) newView(ctx context.Context, gen int, tools []catalog.Tool) (*view, error) {
	req := s.runRequest(s.opts.SessionID, s.opts.SessionID+"-view-"+strconv.Itoa(gen))
	if s.profiled {
		// Clients of different profiles see different tools: the view offers every tool, and each client's
		// listings are filtered by its own policy (listToolsFor), its calls checked by its own run's.
		req.Policy = allowAll()
	}
	run, err := s.rt.StartRun(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("mcp: start run: %w", err)
	}
	return &view{gen: gen, run: run, tools: tools}, nil
}

// currentView is the view client runs are started from.
func (s *Server) currentView() *view {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.view
}

// refreshView starts a new view if the tools changed. On failure the current view keeps serving the tools it
// has; the next change tries again.
func (s *Server) refreshView() {
	s.refreshMu.Lock() // the follower and waiting requests both refresh: one new view at a time
	defer s.refreshMu.Unlock()
	tools := s.allTools()
	cur := s.currentView()
	if sameTools(cur.tools, tools) {
		return
	}
	v, err := s.newView(context.Background(), cur.gen+1, tools)
	if err != nil {
		s.log.Error("mcp serve: rebuilding the catalog failed", "error", err)
		return
	}
	s.mu.Lock()
	s.view = v
	s.mu.Unlock()
	s.syncTools(v)
	cur.run.Close()
}

// sameTools reports whether two tool lists would make the same catalog: same order, same definitions, same
// handlers (a Source keeps a tool's handler while the server keeps listing it unchanged).
func sameTools(a, b []catalog.Tool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := &a[i], &b[i]
		if x.Source != y.Source || x.SourceName != y.SourceName || x.CatalogMode != y.CatalogMode ||
			x.Handler != y.Handler || !seam.SameTool(x, y) {
			return false
		}
	}
	return true
}

// syncTools makes the SDK server offer exactly the view's tools. Only real differences are applied, since each
// change notifies every client (tools/list_changed: in off mode, the upstream tools themselves).
func (s *Server) syncTools(v *view) {
	s.mu.Lock()
	defer s.mu.Unlock()
	want := map[string]*sdk.Tool{}
	for _, def := range v.run.Tools() {
		t, ok := s.describeTool(v.run, def)
		if ok {
			want[t.Name] = t
		}
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
	for name, t := range want {
		key, _ := json.Marshal(t)
		if s.exposed[name] == string(key) {
			continue
		}
		if err := addSafely(func() { s.sdk.AddTool(t, s.handle(name)) }); err != nil {
			s.log.Warn("mcp serve: not offering a tool the MCP SDK refuses", "tool", name, "error", err)
			continue
		}
		s.exposed[name] = string(key)
	}
}

// describeTool is how a tool the model sees is offered over MCP: an upstream tool exactly as its server listed
// it (title, schemas, annotations, icons, _meta) under the name the model sees, anything else from its
// definition. A tool whose parameters are not an object schema cannot be offered over MCP at all.
func (s *Server) describeTool(run *runtime.Run, def runtime.ToolDefinition) (*sdk.Tool, bool) {
	name := def.Function.Name
	if tool, ok := run.DirectTool(name); ok && s.up != nil {
		if listed, ok := s.up.ListedTool(tool.Handler, name); ok {
			return listed, true
		}
	}
	if !seam.IsObjectSchema(def.Function.Parameters) {
		s.log.Warn("mcp serve: not offering a tool whose parameters are not an object schema", "tool", name)
		return nil, false
	}
	return &sdk.Tool{Name: name, Description: def.Function.Description, InputSchema: def.Function.Parameters}, true
}

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// addSafely runs an SDK registration, which panics on definitions it cannot serve (an invalid URI, a schema
// that is not an object): an upstream that lists one must not take the front down.
func addSafely(add func()) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%v", p)
		}
	}()
	add()
	return nil
}

// handle runs one tools/call through the calling client's current run. A client of the multi round-trip
// protocol gets its call parked (roundtrip.go), so that an approval can be returned as a question and answered
// by the client's retry while the run waits.
func (s *Server) handle(name string) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		c, err := s.clientOf(req.Session)
		if err != nil {
			return nil, err
		}
		var args json.RawMessage
		var meta map[string]any
		var progressToken any
		if req.Params != nil {
			args, meta, progressToken = req.Params.Arguments, req.Params.Meta, req.Params.GetProgressToken()
		}
		target := &progressTarget{ctx: ctx, req: req, token: progressToken}
		if !c.roundTrips() {
			var progress func(*sdk.ProgressNotificationParams)
			if progressToken != nil {
				progress = target.send
			}
			return s.execute(ctx, c, name, args, meta, progress)
		}
		if req.Params != nil && req.Params.RequestState != "" {
			p, err := c.retry(req.Params.RequestState, name)
			if err != nil {
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: err.Error()}}, IsError: true}, nil
			}
			p.progress.Store(target)
			p.answer(req.Params.InputResponses)
			return p.wait(ctx)
		}
		p, err := c.park(ctx, name, target, func(runCtx context.Context, p *parkedCall) (*sdk.CallToolResult, error) {
			var progress func(*sdk.ProgressNotificationParams)
			if progressToken != nil { // as for any call: upstreams are asked for progress only when the client asked
				progress = p.report
			}
			return s.execute(runCtx, c, name, args, meta, progress)
		})
		if err != nil {
			return nil, err
		}
		return p.wait(ctx)
	}
}

// execute runs one call of client c through its current run. progress, when set, receives the call's progress
// notifications.
func (s *Server) execute(ctx context.Context, c *client, name string, args json.RawMessage, meta map[string]any,
	progress func(*sdk.ProgressNotificationParams)) (*sdk.CallToolResult, error) {
	lr, err := c.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer lr.calls.Done()

	scope := &seam.Call{Client: c.scope, Meta: passMeta(meta)}
	if progress != nil {
		relay := newProgressRelay(progress)
		scope.Progress = relay
		// A wait for servers still starting reports as a part of its own, so the values the client sees keep
		// growing when the upstream call's own progress follows.
		ctx = runtime.WithWaitProgress(ctx, func(p runtime.WaitProgress) {
			relay.Report("toolsearch", &sdk.ProgressNotificationParams{ProgressToken: "toolsearch/wait",
				Progress: p.Waited.Seconds(), Total: p.Bound.Seconds(), Message: p.Message})
		})
	}
	var capture *resultCapture
	if s.off {
		capture = &resultCapture{}
		scope.Capture = capture.set
	}
	res, err := lr.run.Execute(seam.WithCall(ctx, scope), runtime.ToolCall{ID: c.nextCallID(), Name: s.runName(lr.run, name),
		Arguments: args})
	if err != nil {
		return nil, err
	}
	// Off mode passes the upstream's own result on unchanged (content blocks, structuredContent, _meta) once
	// the pipeline has accepted it. A result the pipeline turned into a failure (a broken output contract)
	// has isError where the upstream's had none: the client gets the pipeline's reason instead.
	if capture != nil {
		if raw := capture.get(); raw != nil && (raw.IsError || !res.IsError) {
			return raw, nil
		}
	}
	// Content only, no structuredContent: the text already is the JSON of the details, and clients that
	// pass both to the model would pay for it twice.
	return &sdk.CallToolResult{
		Content: []sdk.Content{&sdk.TextContent{Text: res.Content}},
		IsError: res.IsError,
	}, nil
}
