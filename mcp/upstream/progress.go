package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolsearch/toolsearch/mcp/internal/seam"
)

// prepareCall fills the _meta of an upstream tools/call from the request's scope and routes the upstream's
// progress notifications for it to the client. The returned function ends the routing; call it when the call
// returns.
func (s *Source) prepareCall(ctx context.Context, server string, sess *sdk.ClientSession, params *sdk.CallToolParams) (done func()) {
	cs := seam.CallFrom(ctx)
	if cs == nil {
		// A call from a program of its own (no front) still carries its trace context to the server.
		if meta := seam.InjectMeta(ctx, nil); meta != nil {
			params.Meta = meta
		}
		return func() {}
	}
	meta := sdk.Meta{}
	for k, v := range cs.Meta {
		meta[k] = v
	}
	// After the client's own entries: the trace context of our span replaces the client's traceparent.
	seam.InjectMeta(ctx, meta)
	// Servers of the 2026-07-28 protocol take the log level per request instead of from logging/setLevel.
	if level := s.logLevel(); level != "" && sessionless(sess) {
		meta[sdk.MetaKeyLogLevel] = level
	}
	done = func() {}
	if cs.Progress != nil {
		token, stop := s.routes.watch(func(p *sdk.ProgressNotificationParams) { cs.Progress.Report(server, p) })
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
	if cs := seam.CallFrom(ctx); cs != nil && cs.Capture != nil {
		cs.Capture(res)
	}
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

// sessionless reports whether a session speaks the protocol of 2026-07-28 or later, which has no
// logging/setLevel (nor resources/subscribe): requests carry what a session used to remember.
func sessionless(sess *sdk.ClientSession) bool {
	res := sess.InitializeResult()
	return res != nil && res.ProtocolVersion >= "2026-07-28"
}
