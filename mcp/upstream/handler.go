package upstream

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/mcp/internal/seam"
)

// toolHandler calls one tool of one server. It implements the runtime's Availability interface, so a call to a
// server that is down fails before approval and hooks are asked.
type toolHandler struct {
	u      *server
	remote string      // the server's own name of the tool (the catalog has the safe one)
	listed *remoteTool // the tool as the server listed it, which off mode offers unchanged
}

// Available reports why the tool cannot be called right now, or nil. The tool of an idle lazy server is
// available: the call is about to come, so its server starts now, while the pipeline asks for approval.
func (h *toolHandler) Available() error {
	if h.u.status().State == StateIdle {
		h.u.wakeUp()
		return nil
	}
	_, err := h.u.sessionFor(h.remote)
	return err
}

// Call sends tools/call with the Source's call timeout. The outcomes:
//   - the server answered with a result: a Result (IsError when the tool failed);
//   - the server answered with a JSON-RPC error (unknown tool, invalid params): a Result with IsError, since the
//     server is fine and the model can correct the call;
//   - no answer in time, a closed connection, an unreadable answer: a *ServerError, and the server is checked;
//   - the session closed during the call (the Source closed, or gave up on the server): a *ServerError wrapping
//     ErrClosed or ErrUnavailable, at once;
//   - ctx ended: ctx's error.
func (h *toolHandler) Call(ctx context.Context, args json.RawMessage) (*catalog.Result, error) {
	if err := h.u.awaitStart(ctx); err != nil {
		return nil, err
	}
	op := "call " + h.remote
	sess, sessCalls, err := h.u.callTarget(h.remote)
	if err == nil {
		sess, sessCalls, err = h.u.own(ctx, op, sess, sessCalls)
	}
	if err != nil {
		return nil, err
	}
	if !h.u.lists(h) {
		// The call was checked — arguments validated, pinned definition compared, approved — against the
		// definition this handler stands for (a lazy server's cached one, or the listing before a reconnect).
		// The server lists the tool differently now: running it would run what nobody checked. The catalog
		// already has the new definition, and the next call is checked against it.
		return &catalog.Result{IsError: true, Content: []catalog.Content{{Type: "text", Text: fmt.Sprintf(
			"Tool %q of MCP server %q was not called: the tool changed when its server started or reconnected, "+
				"so this call was checked against its old definition. Describe it again and call it again.",
			h.remote, h.u.name)}}}, nil
	}
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	timeout := h.u.src.opts.callTimeout
	callCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	defer context.AfterFunc(sessCalls, cancel)()
	params := &sdk.CallToolParams{Name: h.remote, Arguments: args}
	began := time.Now()
	callCtx, span := h.u.startRequest(callCtx, "tools/call", h.remote)
	defer h.u.src.prepareCall(callCtx, h.u.name, sess, params)()
	res, err := sess.CallTool(callCtx, params)
	h.u.endRequest(callCtx, span, began, "tools/call", h.remote, err, err == nil && res.IsError)
	if err == nil {
		captureResult(ctx, res)
		return convertResult(res)
	}
	var wire *jsonrpc.Error
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case errors.As(err, &wire):
		return &catalog.Result{
			IsError: true,
			Content: []catalog.Content{{Type: "text", Text: fmt.Sprintf("MCP server %q refused the call: %s", h.u.name, wire.Message)}},
		}, nil
	case h.u.src.ctx.Err() != nil:
		return nil, &ServerError{Server: h.u.name, Op: op, Err: ErrClosed}
	case errors.Is(err, os.ErrDeadlineExceeded):
		// The server stopped reading its input, and the write's own bound (seam.BoundedWriter) fired before the
		// call's timer did, as it may under load. That writer is spent, so the session is checked like any hang:
		// left alone it would stay ready and fail every later call at once without ever being reconnected. It is
		// told before a closed session: the spent writer may already be closing the connection, and the write
		// is what went wrong.
		h.u.suspectHang()
		return nil, &ServerError{Server: h.u.name, Op: op, Err: err}
	case sessCalls.Err() != nil:
		return nil, &ServerError{Server: h.u.name, Op: op,
			Err: fmt.Errorf("%w: the connection was closed during the call", ErrUnavailable)}
	case callCtx.Err() != nil:
		h.u.suspectHang()
		return nil, &ServerError{Server: h.u.name, Op: op,
			Err: fmt.Errorf("no answer within %s: %w", timeout, context.DeadlineExceeded)}
	case seam.ConnectionLost(err):
		return nil, &ServerError{Server: h.u.name, Op: op,
			Err: fmt.Errorf("%w: the connection closed during the call (did the server crash?)", ErrUnavailable)}
	default:
		return nil, &ServerError{Server: h.u.name, Op: op, Err: err}
	}
}

// convertResult maps an MCP tool result onto a catalog result: content blocks one to one, structuredContent into
// Details (where the runtime's output contract checks it), isError into IsError.
func convertResult(res *sdk.CallToolResult) (*catalog.Result, error) {
	out := &catalog.Result{IsError: res.IsError, Content: make([]catalog.Content, 0, len(res.Content))}
	for _, c := range res.Content {
		out.Content = append(out.Content, convertContent(c))
	}
	if res.StructuredContent != nil {
		details, err := json.Marshal(res.StructuredContent)
		if err != nil {
			return nil, fmt.Errorf("structuredContent: %w", err)
		}
		out.Details = details
	}
	return out, nil
}

func convertContent(c sdk.Content) catalog.Content {
	switch c := c.(type) {
	case *sdk.TextContent:
		return catalog.Content{Type: "text", Text: c.Text}
	case *sdk.ImageContent:
		return catalog.Content{Type: "image", Data: base64.StdEncoding.EncodeToString(c.Data), MIMEType: c.MIMEType}
	case *sdk.AudioContent:
		return catalog.Content{Type: "audio", Data: base64.StdEncoding.EncodeToString(c.Data), MIMEType: c.MIMEType}
	case *sdk.ResourceLink:
		text := c.URI
		if c.Name != "" {
			text = c.Name + " " + c.URI
		}
		return catalog.Content{Type: "resource_link", Text: text, MIMEType: c.MIMEType}
	case *sdk.EmbeddedResource:
		if c.Resource == nil {
			return catalog.Content{Type: "resource"}
		}
		r := c.Resource
		out := catalog.Content{Type: "resource", Text: r.Text, MIMEType: r.MIMEType}
		if r.Text == "" && len(r.Blob) == 0 {
			out.Text = r.URI
		}
		if len(r.Blob) > 0 {
			out.Data = base64.StdEncoding.EncodeToString(r.Blob)
		}
		return out
	default:
		// A content type newer than this code: keep its kind so the model at least learns something came back.
		b, _ := json.Marshal(c)
		var head struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal(b, &head)
		if head.Type == "" {
			head.Type = "unknown"
		}
		return catalog.Content{Type: head.Type}
	}
}

// isWireError reports whether err is a JSON-RPC error the server answered with.
func isWireError(err error) bool {
	var wire *jsonrpc.Error
	return errors.As(err, &wire)
}
