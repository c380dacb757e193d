package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolsearch/toolsearch/mcp/internal/seam"
)

// Bounds on the resources, resource templates and prompts one server may list: like its tools, a server is
// untrusted, and a listing that never ends or entries of megabytes must not exhaust the host.
const (
	MaxResourcesPerServer = 1000 // resources, and separately resource templates
	MaxPromptsPerServer   = 1000
	MaxFeatureEntryBytes  = 64 << 10 // one resource, template or prompt as JSON; larger ones are dropped
)

// features are what a server offers besides tools: its resources, resource templates and prompts, listed at
// every page when its session starts and again on notifications/{resources,prompts}/list_changed, for the front
// to offer its clients.
type features struct {
	relist chan struct{} // a list_changed arrived; capacity 1, so a flood coalesces

	mu        sync.Mutex
	resources []*sdk.Resource
	templates []*sdk.ResourceTemplate
	prompts   []*sdk.Prompt
	caps      sdk.ServerCapabilities // of the last session that started
	// listed is set once the current session has been listed (or its listing failed); a session starting
	// clears it. Until then an empty listing may only mean "not asked yet".
	listed bool
}

func newFeatures() *features {
	return &features{relist: make(chan struct{}, 1)}
}

// snapshot returns the server's current listings and capabilities; the slices are shared, read only.
func (f *features) snapshot() seam.Features {
	f.mu.Lock()
	defer f.mu.Unlock()
	return seam.Features{Resources: f.resources, Templates: f.templates, Prompts: f.prompts, Caps: f.caps}
}

// watchFeatures follows what the shared session sess offers besides tools until the session starts closing
// (calls ends): it lists it now, passes on the log level and subscriptions the fronts hold, and lists again at
// each list_changed. It runs apart from the supervisor so that a slow resource listing never delays tools.
func (u *server) watchFeatures(sess *sdk.ClientSession, calls context.Context) {
	select {
	case <-u.feat.relist: // a leftover of the last session
	default:
	}
	res := sess.InitializeResult()
	var caps sdk.ServerCapabilities
	if res != nil && res.Capabilities != nil {
		caps = *res.Capabilities
	}
	u.src.events.mu.Lock()
	level := u.src.events.level
	var uris []string
	for sub, n := range u.src.events.subs {
		if sub.u == u && n > 0 {
			uris = append(uris, sub.uri)
		}
	}
	u.src.events.mu.Unlock()
	if level != "" && supportsLogging(sess) {
		u.withTimeout(calls, func(ctx context.Context) error {
			return sess.SetLoggingLevel(ctx, &sdk.SetLoggingLevelParams{Level: level})
		})
	}
	for _, uri := range uris {
		u.withTimeout(calls, func(ctx context.Context) error {
			return sess.Subscribe(ctx, &sdk.SubscribeParams{URI: uri})
		})
	}
	for {
		u.listFeatures(calls, sess, caps)
		u.feat.mu.Lock()
		first := !u.feat.listed
		u.feat.listed = true
		u.feat.mu.Unlock()
		if first {
			u.src.notify() // a front waiting for this server's resources or prompts looks again
		}
		select {
		case <-calls.Done():
			return
		case <-u.feat.relist:
		}
	}
}

func (u *server) withTimeout(parent context.Context, f func(ctx context.Context) error) error {
	ctx, cancel := context.WithTimeout(parent, u.src.opts.callTimeout)
	defer cancel()
	return f(ctx)
}

// listFeatures lists every page of what caps declares and, when anything differs from the last listing, makes
// it current and tells the fronts. A listing that fails keeps the last one: the server's tools still work, and
// the supervisor notices a dead session by itself.
func (u *server) listFeatures(parent context.Context, sess *sdk.ClientSession, caps sdk.ServerCapabilities) {
	ctx, cancel := context.WithTimeout(parent, u.startTimeout())
	defer cancel()
	var resources []*sdk.Resource
	var templates []*sdk.ResourceTemplate
	var prompts []*sdk.Prompt
	var err error
	if caps.Resources != nil {
		resources, err = listPages(ctx, u, "resources", MaxResourcesPerServer, func(ctx context.Context, cursor string) ([]*sdk.Resource, string, error) {
			r, err := sess.ListResources(ctx, &sdk.ListResourcesParams{Cursor: cursor})
			if err != nil {
				return nil, "", err
			}
			return r.Resources, r.NextCursor, nil
		})
		if err == nil {
			templates, err = listPages(ctx, u, "resource templates", MaxResourcesPerServer, func(ctx context.Context, cursor string) ([]*sdk.ResourceTemplate, string, error) {
				r, err := sess.ListResourceTemplates(ctx, &sdk.ListResourceTemplatesParams{Cursor: cursor})
				if err != nil {
					return nil, "", err
				}
				return r.ResourceTemplates, r.NextCursor, nil
			})
		}
	}
	if err == nil && caps.Prompts != nil {
		prompts, err = listPages(ctx, u, "prompts", MaxPromptsPerServer, func(ctx context.Context, cursor string) ([]*sdk.Prompt, string, error) {
			r, err := sess.ListPrompts(ctx, &sdk.ListPromptsParams{Cursor: cursor})
			if err != nil {
				return nil, "", err
			}
			return r.Prompts, r.NextCursor, nil
		})
	}
	if err != nil {
		if parent.Err() == nil {
			u.src.progressf("mcp: %s: listing resources and prompts failed: %v", u.name, err)
		}
		return
	}
	u.feat.mu.Lock()
	changed := !sameJSON(u.feat.resources, resources) || !sameJSON(u.feat.templates, templates) ||
		!sameJSON(u.feat.prompts, prompts) || !sameJSON(u.feat.caps, caps)
	if changed {
		u.feat.resources, u.feat.templates, u.feat.prompts, u.feat.caps = resources, templates, prompts, caps
	}
	u.feat.mu.Unlock()
	if changed {
		u.src.notifyFeatures()
	}
}

// listPages fetches every page of one listing, keeping at most max entries and dropping entries without a name
// or larger than MaxFeatureEntryBytes, with a progress line for each drop. A cursor that repeats ends in an
// error, since the listing would never end.
func listPages[T any](ctx context.Context, u *server, what string, max int, page func(context.Context, string) ([]*T, string, error)) ([]*T, error) {
	var out []*T
	seen := map[string]bool{}
	cursor := ""
	for {
		items, next, err := page(ctx, cursor)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		for _, it := range items {
			if it == nil {
				continue
			}
			b, err := json.Marshal(it)
			if err != nil || len(b) > MaxFeatureEntryBytes {
				u.src.progressf("mcp: %s: skipping one of its %s: larger than %d bytes", u.name, what, MaxFeatureEntryBytes)
				continue
			}
			if len(out) == max {
				u.src.progressf("mcp: %s: lists more than %d %s; keeping the first %d", u.name, max, what, max)
				return out, nil
			}
			out = append(out, it)
		}
		if next == "" {
			return out, nil
		}
		if seen[next] {
			return nil, fmt.Errorf("%s: pagination does not end (cursor %q repeats)", what, next)
		}
		seen[next] = true
		cursor = next
	}
}

func sameJSON(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}

// featureSession returns the session a request about u's features goes to (the client's own for a per-client
// server), with a context bounded by the call timeout that also ends when the session starts closing.
func (u *server) featureSession(ctx context.Context, op string) (*sdk.ClientSession, context.Context, context.CancelFunc, error) {
	sess, calls, err := u.target(ctx, op)
	if err != nil {
		return nil, nil, nil, err
	}
	callCtx, cancel := context.WithTimeout(ctx, u.src.opts.callTimeout)
	stop := context.AfterFunc(calls, cancel)
	return sess, callCtx, func() { stop(); cancel() }, nil
}

// ReadResource reads one resource of u by the server's own URI, within Options.MaxReadBytes and
// Options.MaxConcurrentReads.
func (u *server) ReadResource(ctx context.Context, params *sdk.ReadResourceParams) (*sdk.ReadResourceResult, error) {
	return boundedRead(ctx, u, "read resource "+params.URI, request{"resources/read", params.URI}, params,
		(*sdk.ClientSession).ReadResource)
}

// GetPrompt gets one prompt of u by the server's own name, within the same bounds as ReadResource.
func (u *server) GetPrompt(ctx context.Context, params *sdk.GetPromptParams) (*sdk.GetPromptResult, error) {
	return boundedRead(ctx, u, "get prompt "+params.Name, request{"prompts/get", params.Name}, params,
		(*sdk.ClientSession).GetPrompt)
}

// boundedRead is featureCall for the requests whose results pass whole to a client: it waits for one of u's read
// slots, and reports a result the transport dropped for its size (filterReply) as ErrResultTooLarge. The slots
// are u's own, so a server that hangs holds up only reads of its own.
func boundedRead[P sdk.Params, R any](ctx context.Context, u *server, op string, req request, params P,
	send func(*sdk.ClientSession, context.Context, P) (R, error)) (R, error) {
	var none R
	select {
	case u.reads <- struct{}{}:
	case <-ctx.Done():
		return none, &ServerError{Server: u.name, Op: op,
			Err: fmt.Errorf("waiting for one of the %d reads in flight to end: %w", cap(u.reads), ctx.Err())}
	}
	defer func() { <-u.reads }()
	res, err := featureCall(ctx, u, op, req, params, send)
	var wire *jsonrpc.Error
	if errors.As(err, &wire) && wire.Code == codeResultTooLarge {
		return none, &ServerError{Server: u.name, Op: op, Err: fmt.Errorf("%w: %s", ErrResultTooLarge, wire.Message)}
	}
	return res, err
}

// Complete asks u to complete an argument of one of its prompts or resource templates.
func (u *server) Complete(ctx context.Context, params *sdk.CompleteParams) (*sdk.CompleteResult, error) {
	return featureCall(ctx, u, "complete", request{method: "completion/complete"}, params, (*sdk.ClientSession).Complete)
}

// featureCall sends one request about u's features (op names it in errors) on the session featureSession picks,
// in a client span of its own whose trace context goes to the server in the request's _meta, and reports its
// failure as featureError does.
func featureCall[P sdk.Params, R any](ctx context.Context, u *server, op string, req request, params P,
	send func(*sdk.ClientSession, context.Context, P) (R, error)) (R, error) {
	sess, callCtx, done, err := u.featureSession(ctx, op)
	if err != nil {
		var none R
		return none, err
	}
	defer done()
	began := time.Now()
	callCtx, span := u.startRequest(callCtx, req.method, req.target)
	withTraceContext(callCtx, params)
	res, err := send(sess, callCtx, params)
	u.endRequest(callCtx, span, began, req.method, req.target, err, false)
	return res, u.featureError(ctx, callCtx, op, err)
}

// request names one MCP request for its span: the method, and what it is about (a prompt's name, a resource's
// URI), "" for nothing.
type request struct{ method, target string }

// withTraceContext puts ctx's trace context into the _meta of params. The _meta the front passes is the
// client's own, shared with its other requests, so the entries are copied first.
func withTraceContext(ctx context.Context, params sdk.Params) {
	meta := maps.Clone(params.GetMeta())
	if meta = seam.InjectMeta(ctx, meta); meta != nil {
		params.SetMeta(meta)
	}
}

// featureError passes the server's own JSON-RPC errors (not found, invalid params) on as they are, so the
// client sees what the server said, and names the server in everything else.
func (u *server) featureError(ctx, callCtx context.Context, op string, err error) error {
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return ctx.Err()
	case isWireError(err):
		return err
	case callCtx.Err() != nil:
		return &ServerError{Server: u.name, Op: op, Err: fmt.Errorf("no answer within %s: %w", u.src.opts.callTimeout, context.DeadlineExceeded)}
	}
	return &ServerError{Server: u.name, Op: op, Err: err}
}

// Subscribe subscribes the client of ctx to a resource of u (by the server's own URI). A per-client server gets
// the subscription on the client's own session; a shared one once, however many clients hold it, and again
// whenever its session starts anew.
func (u *server) Subscribe(ctx context.Context, uri string) error {
	op := "subscribe to " + uri
	if u.ownScope(ctx) == nil {
		e := &u.src.events
		e.mu.Lock()
		if e.subs == nil {
			e.subs = map[subscription]int{}
		}
		key := subscription{u, uri}
		e.subs[key]++
		first := e.subs[key] == 1
		e.mu.Unlock()
		if !first {
			return nil
		}
		if err := u.subscribeOn(ctx, op, uri, true); err != nil {
			e.mu.Lock()
			e.subs[key]--
			if e.subs[key] <= 0 {
				delete(e.subs, key)
			}
			e.mu.Unlock()
			return err
		}
		return nil
	}
	return u.subscribeOn(ctx, op, uri, true)
}

// Unsubscribe undoes one Subscribe.
func (u *server) Unsubscribe(ctx context.Context, uri string) error {
	op := "unsubscribe from " + uri
	if u.ownScope(ctx) == nil {
		e := &u.src.events
		e.mu.Lock()
		key := subscription{u, uri}
		if e.subs[key] > 0 {
			e.subs[key]--
		}
		last := e.subs[key] == 0
		if last {
			delete(e.subs, key)
		}
		e.mu.Unlock()
		if !last {
			return nil
		}
	}
	return u.subscribeOn(ctx, op, uri, false)
}

func (u *server) subscribeOn(ctx context.Context, op, uri string, on bool) error {
	sess, callCtx, done, err := u.featureSession(ctx, op)
	if err != nil {
		return err
	}
	defer done()
	if res := sess.InitializeResult(); res == nil || res.Capabilities == nil || res.Capabilities.Resources == nil ||
		!res.Capabilities.Resources.Subscribe {
		if !on {
			return nil
		}
		return &ServerError{Server: u.name, Op: op, Err: ErrNotSupported}
	}
	method := "resources/unsubscribe"
	if on {
		method = "resources/subscribe"
	}
	began := time.Now()
	callCtx, span := u.startRequest(callCtx, method, uri)
	if on {
		params := &sdk.SubscribeParams{URI: uri}
		withTraceContext(callCtx, params)
		err = sess.Subscribe(callCtx, params)
	} else {
		params := &sdk.UnsubscribeParams{URI: uri}
		withTraceContext(callCtx, params)
		err = sess.Unsubscribe(callCtx, params)
	}
	u.endRequest(callCtx, span, began, method, uri, err, false)
	return u.featureError(ctx, callCtx, op, err)
}
