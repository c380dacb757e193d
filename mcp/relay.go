package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// callScope is what the front attaches to the context of one client request, so that the upstream calls the
// request causes (one in off and tools mode, any number from a tool_search_code script) carry the client's
// _meta, report their progress to it, use its own sessions of per-client servers, and — for a direct call in
// off mode — hand the upstream result back unchanged. The runtime passes contexts down to tool handlers, so the
// scope reaches toolHandler.Call through the whole pipeline and the sandbox.
type callScope struct {
	client   *clientScope   // nil: shared sessions only
	meta     map[string]any // the client's _meta without the keys that belong to its own connection
	progress *progressRelay // nil when the client asked for no progress
	capture  *resultCapture // set for a direct call in off mode
}

type callScopeKey struct{}

func withCallScope(ctx context.Context, cs *callScope) context.Context {
	return context.WithValue(ctx, callScopeKey{}, cs)
}

func callScopeFrom(ctx context.Context) *callScope {
	cs, _ := ctx.Value(callScopeKey{}).(*callScope)
	return cs
}

// passMeta keeps the _meta entries of a client request that should reach the upstream server: trace context and
// anything else of the client's own. The progress token is replaced by one of ours per upstream call, and keys
// reserved by the protocol describe the client's connection to us (its protocol version, capabilities, log
// level), not ours to the upstream, so the SDK must set those itself.
func passMeta(m map[string]any) map[string]any {
	var out map[string]any
	for k, v := range m {
		if k == "progressToken" || reservedMetaKey(k) {
			continue
		}
		if out == nil {
			out = make(map[string]any, len(m))
		}
		out[k] = v
	}
	return out
}

// reservedMetaKey reports whether a _meta key has a prefix that MCP reserves for itself: one with a label
// "modelcontextprotocol" or "mcp" ("io.modelcontextprotocol/protocolVersion", "modelcontextprotocol.io/x",
// "dev.mcp/y").
func reservedMetaKey(k string) bool {
	prefix, _, ok := strings.Cut(k, "/")
	if !ok {
		return false
	}
	for _, label := range strings.Split(prefix, ".") {
		if label == "modelcontextprotocol" || label == "mcp" {
			return true
		}
	}
	return false
}

// prepareCall fills the _meta of an upstream tools/call from the request's scope and routes the upstream's
// progress notifications for it to the client. The returned function ends the routing; call it when the call
// returns.
func (s *Source) prepareCall(ctx context.Context, server string, sess *sdk.ClientSession, params *sdk.CallToolParams) (done func()) {
	cs := callScopeFrom(ctx)
	if cs == nil {
		return func() {}
	}
	meta := sdk.Meta{}
	for k, v := range cs.meta {
		meta[k] = v
	}
	// Servers of the 2026-07-28 protocol take the log level per request instead of from logging/setLevel.
	if level := s.logLevel(); level != "" && sessionless(sess) {
		meta[sdk.MetaKeyLogLevel] = level
	}
	done = func() {}
	if cs.progress != nil {
		token, stop := s.routes.watch(func(p *sdk.ProgressNotificationParams) { cs.progress.report(server, p) })
		meta["progressToken"] = token
		done = stop
	}
	if len(meta) > 0 {
		params.Meta = meta
	}
	return done
}

// captureResult keeps an upstream result for the front when the call is a direct call in off mode.
func captureResult(ctx context.Context, res *sdk.CallToolResult) {
	if cs := callScopeFrom(ctx); cs != nil && cs.capture != nil {
		cs.capture.set(res)
	}
}

// resultCapture holds the upstream's own result of one call, which off mode passes to the client unchanged once
// the pipeline has accepted it.
type resultCapture struct {
	mu  sync.Mutex
	res *sdk.CallToolResult
}

func (c *resultCapture) set(res *sdk.CallToolResult) {
	c.mu.Lock()
	c.res = res
	c.mu.Unlock()
}

func (c *resultCapture) get() *sdk.CallToolResult {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.res
}

// progressRoutes maps the progress tokens of upstream calls in flight to whoever waits for their progress.
// Tokens are unique within a Source, so one table serves every session of every server.
//
// The SDK reads a connection in order but hands notifications to a queue of their own while it retires a
// response at once, so a call can return before the progress its server sent ahead of the answer has been
// handled. observe counts each progress notification as it is read, deliver as it is handled, and stopping a
// route waits until the two agree: every notification the server sent before its answer reaches the client
// before the answer does.
type progressRoutes struct {
	mu    sync.Mutex
	seq   int64
	sinks map[string]*progressSink
}

type progressSink struct {
	fn            func(*sdk.ProgressNotificationParams)
	read, handled int
	caughtUp      chan struct{} // closed when handled reaches read; nil while nobody waits
}

// progressDrainTimeout bounds how long a returning call waits for the progress its server sent before the
// answer: the handling is local work, so only a stuck client makes it last.
const progressDrainTimeout = 2 * time.Second

// watch allocates a token and routes its notifications to fn until stop is called.
func (r *progressRoutes) watch(fn func(*sdk.ProgressNotificationParams)) (token string, stop func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seq++
	token = "toolsearch-" + strconv.FormatInt(r.seq, 10)
	if r.sinks == nil {
		r.sinks = map[string]*progressSink{}
	}
	sink := &progressSink{fn: fn}
	r.sinks[token] = sink
	return token, func() {
		timer := time.NewTimer(progressDrainTimeout)
		defer timer.Stop()
		for {
			r.mu.Lock()
			if sink.handled >= sink.read {
				delete(r.sinks, token)
				r.mu.Unlock()
				return
			}
			if sink.caughtUp == nil {
				sink.caughtUp = make(chan struct{})
			}
			wait := sink.caughtUp
			r.mu.Unlock()
			select {
			case <-wait:
			case <-timer.C:
				r.mu.Lock()
				delete(r.sinks, token)
				r.mu.Unlock()
				return
			}
		}
	}
}

// observe counts a message read from a server if it is progress for one of our calls.
func (r *progressRoutes) observe(msg jsonrpc.Message) {
	if req, ok := msg.(*jsonrpc.Request); ok && req.Method == "notifications/progress" {
		r.observeParams(req.Params)
	}
}

func (r *progressRoutes) observeParams(params json.RawMessage) {
	var p struct {
		Token any `json:"progressToken"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	token, ok := p.Token.(string)
	if !ok {
		return
	}
	r.mu.Lock()
	if sink := r.sinks[token]; sink != nil {
		sink.read++
	}
	r.mu.Unlock()
}

// deliver hands an upstream's progress notification to the call that owns its token. Notifications for tokens
// that are not ours (or whose call has returned) are dropped: a server cannot report progress to a call it was
// not given.
func (r *progressRoutes) deliver(p *sdk.ProgressNotificationParams) {
	token, ok := p.ProgressToken.(string)
	if !ok {
		return
	}
	r.mu.Lock()
	sink := r.sinks[token]
	r.mu.Unlock()
	if sink == nil {
		return
	}
	sink.fn(p)
	r.mu.Lock()
	sink.handled++
	if sink.handled >= sink.read && sink.caughtUp != nil {
		close(sink.caughtUp)
		sink.caughtUp = nil
	}
	r.mu.Unlock()
}

// observe wraps a transport so that the progress routes see every message as it is read. A streamable HTTP
// transport is observed in its response bodies, since its connection tells the SDK things through methods that a
// wrapper from outside the SDK cannot pass on; any other transport is observed in its connection.
func (r *progressRoutes) observeTransport(t sdk.Transport) sdk.Transport {
	if h, ok := t.(*sdk.StreamableClientTransport); ok {
		copied := *h
		client := http.DefaultClient
		if h.HTTPClient != nil {
			client = h.HTTPClient
		}
		c := *client
		base := c.Transport
		if base == nil {
			base = http.DefaultTransport
		}
		c.Transport = observingRoundTripper{base: base, routes: r}
		copied.HTTPClient = &c
		return &copied
	}
	return observing{Transport: t, routes: r}
}

type observing struct {
	sdk.Transport
	routes *progressRoutes
}

func (t observing) Connect(ctx context.Context) (sdk.Connection, error) {
	conn, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return observedConn{Connection: conn, routes: t.routes}, nil
}

type observedConn struct {
	sdk.Connection
	routes *progressRoutes
}

func (c observedConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err == nil {
		c.routes.observe(msg)
	}
	return msg, err
}

// observingRoundTripper watches the bodies of a streamable HTTP server's answers, where every message is one
// line: a JSON body, or an event stream's "data:" line.
type observingRoundTripper struct {
	base   http.RoundTripper
	routes *progressRoutes
}

func (t observingRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := t.base.RoundTrip(req)
	if err == nil && res.Body != nil {
		res.Body = &lineWatcher{ReadCloser: res.Body, line: t.routes.observeLine}
	}
	return res, err
}

// observeLine counts a progress notification in one line of a response body.
func (r *progressRoutes) observeLine(line []byte) {
	if !bytes.Contains(line, []byte("notifications/progress")) {
		return
	}
	line = bytes.TrimSpace(bytes.TrimPrefix(bytes.TrimSpace(line), []byte("data:")))
	var msg struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(line, &msg) == nil && msg.Method == "notifications/progress" {
		r.observeParams(msg.Params)
	}
}

// lineWatcher hands every complete line read through it to line. Lines longer than maxWatchedLine are not
// kept (a progress notification is small; a long line is a result), so it holds little whatever it reads.
type lineWatcher struct {
	io.ReadCloser
	line     func([]byte)
	partial  []byte
	skipping bool
}

const maxWatchedLine = 64 << 10

func (w *lineWatcher) Read(p []byte) (int, error) {
	n, err := w.ReadCloser.Read(p)
	data := p[:n]
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			if !w.skipping {
				w.partial = append(w.partial, data...)
				if len(w.partial) > maxWatchedLine {
					w.partial, w.skipping = w.partial[:0], true
				}
			}
			break
		}
		if !w.skipping {
			w.line(append(w.partial, data[:i]...))
		}
		w.partial, w.skipping = w.partial[:0], false
		data = data[i+1:]
	}
	return n, err
}

// progressRelay turns the progress of the upstream calls made for one client request into progress
// notifications for that request's token. A tool_search_code script may make several calls, one after the other
// or in parallel, each reporting its own progress from zero: the client is told the sum of the latest progress
// of every call (and the sum of their totals while each of them has one), which never decreases, and a
// notification is sent only when it increases, as the protocol requires.
type progressRelay struct {
	send func(*sdk.ProgressNotificationParams)

	mu    sync.Mutex
	parts map[string]*progressPart // by upstream token
	order []string
	last  float64
	sent  bool
}

type progressPart struct {
	progress, total float64
}

func newProgressRelay(send func(*sdk.ProgressNotificationParams)) *progressRelay {
	return &progressRelay{send: send, parts: map[string]*progressPart{}}
}

// report takes one upstream notification. server names the upstream, for a message that would otherwise not
// say where it came from when several calls report at once.
func (p *progressRelay) report(server string, n *sdk.ProgressNotificationParams) {
	token, _ := n.ProgressToken.(string)
	p.mu.Lock()
	part := p.parts[token]
	if part == nil {
		part = &progressPart{}
		p.parts[token] = part
		p.order = append(p.order, token)
	}
	if n.Progress > part.progress {
		part.progress = n.Progress
	}
	part.total = n.Total
	var progress, total float64
	known := true
	for _, t := range p.order {
		progress += p.parts[t].progress
		total += p.parts[t].total
		known = known && p.parts[t].total > 0
	}
	if p.sent && progress <= p.last {
		p.mu.Unlock()
		return
	}
	p.last, p.sent = progress, true
	out := &sdk.ProgressNotificationParams{Progress: progress, Message: n.Message}
	if known {
		out.Total = total
	}
	if len(p.order) > 1 && out.Message != "" {
		out.Message = server + ": " + out.Message
	}
	// Sending under the lock keeps the notifications in the order of their values.
	p.send(out)
	p.mu.Unlock()
}

// sessionless reports whether a session speaks the protocol of 2026-07-28 or later, which has no
// logging/setLevel (nor resources/subscribe): requests carry what a session used to remember.
func sessionless(sess *sdk.ClientSession) bool {
	res := sess.InitializeResult()
	return res != nil && res.ProtocolVersion >= "2026-07-28"
}

// sdkTool is a listed tool as the front offers it in off mode: under the name the model sees, otherwise as its
// server listed it.
func (t *remoteTool) sdkTool(name string) *sdk.Tool {
	out := &sdk.Tool{Name: name, Title: t.Title, Description: t.Description, InputSchema: t.InputSchema}
	if len(t.OutputSchema) > 0 {
		out.OutputSchema = t.OutputSchema
	}
	// Both are bounded with the rest of the definition (MaxToolBytes); one that does not decode is left out.
	_ = json.Unmarshal(t.Meta, &out.Meta)
	_ = json.Unmarshal(t.Icons, &out.Icons)
	if a := t.Annotations; a != nil {
		out.Annotations = &sdk.ToolAnnotations{
			Title:           a.Title,
			ReadOnlyHint:    a.ReadOnlyHint != nil && *a.ReadOnlyHint,
			DestructiveHint: a.DestructiveHint,
			IdempotentHint:  a.IdempotentHint != nil && *a.IdempotentHint,
			OpenWorldHint:   a.OpenWorldHint,
		}
	}
	return out
}
