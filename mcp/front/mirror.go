package front

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/yosida95/uritemplate/v3"

	"github.com/toolsearch/toolsearch/mcp/internal/seam"
)

// namespaceScheme starts the URI of a resource (or template) that two servers offer under the same URI:
// toolsearch://<server>/<the server's own URI>. Stripping the prefix gives the server's URI back, so the
// mapping is reversible and needs no table; a template keeps working as a template, since the prefix is literal.
const namespaceScheme = "toolsearch://"

// namespaced is the URI clients see for a server's own URI (or template) that another server offers too.
func namespaced(server, own string) string { return namespaceScheme + server + "/" + own }

// splitNamespaced reverses namespaced. Server names never hold a "/" (they are made safe), so the first one
// after the scheme ends the name, whatever the URI holds.
func splitNamespaced(seen string) (server, own string, ok bool) {
	rest, ok := strings.CutPrefix(seen, namespaceScheme)
	if !ok {
		return "", "", false
	}
	return strings.Cut(rest, "/")
}

// mirror offers the upstream servers' resources, resource templates and prompts through the front's SDK server,
// which lists them (paginated) and sends resources/list_changed and prompts/list_changed when they change.
// What a server offers under a URI or name that no other server uses keeps it; colliding URIs and templates are
// namespaced with namespaceScheme and colliding prompt names get "<server>__" in front.
type mirror struct {
	s *Server

	mu        sync.Mutex
	resources map[string]mirrored // by the URI clients see
	templates map[string]mirrored // by the template clients see
	prompts   map[string]mirrored // by the name clients see

	notifyMu sync.Mutex         // held while resources/updated is sent
	only     *sdk.ServerSession // the one session it goes to, nil for every subscriber; see notifyUpdated
}

// mirrored is one entry as registered: the server it belongs to, the server's own URI, template or name, and
// the entry as offered (JSON, to tell a change from a relisting).
type mirrored struct {
	u    seam.Server
	name string
	key  string
	seen *uritemplate.Template // for templates: the template clients see, to match the URIs they read
}

func newMirror(s *Server) *mirror {
	return &mirror{s: s, resources: map[string]mirrored{}, templates: map[string]mirrored{}, prompts: map[string]mirrored{}}
}

// offered is one entry a server offers: its own URI, template or name, and its definition.
type offered struct {
	u    seam.Server
	name string
	def  any
}

// kind is what differs between resources, templates and prompts when they are mirrored.
type kind struct {
	what      string
	namespace func(u seam.Server, own string) string
	rename    func(def any, seen string) any // a copy of def under the name clients see
	add       func(def any, route mirrored)  // registers it with the SDK, which may panic on it
	remove    func(seen ...string)           // unregisters
	template  bool                           // compile the seen name as a URI template
}

// sync registers what the upstreams offer now and removes what they no longer offer. Only real differences
// reach the SDK, since each one notifies every client.
func (m *mirror) sync() {
	// Held while the features are read too: two syncs at once (the follower's and a request's that waits for a
	// server) must not apply an older snapshot after a newer one.
	m.mu.Lock()
	defer m.mu.Unlock()
	var res, tmpls, prompts []offered
	for _, u := range m.s.up.Servers() {
		f := u.Features()
		for _, x := range f.Resources {
			res = append(res, offered{u, x.URI, x})
		}
		for _, x := range f.Templates {
			tmpls = append(tmpls, offered{u, x.URITemplate, x})
		}
		for _, x := range f.Prompts {
			prompts = append(prompts, offered{u, x.Name, x})
		}
	}
	nsURI := func(u seam.Server, uri string) string { return namespaced(u.SourceName(), uri) }
	srv := m.s.sdk
	m.resources = m.syncKind(kind{
		what:      "resource",
		namespace: nsURI,
		rename: func(def any, seen string) any {
			r := *def.(*sdk.Resource)
			r.URI = seen
			return &r
		},
		add:    func(def any, route mirrored) { srv.AddResource(def.(*sdk.Resource), m.read(route)) },
		remove: srv.RemoveResources,
	}, m.resources, res)
	m.templates = m.syncKind(kind{
		what:      "resource template",
		namespace: nsURI,
		rename: func(def any, seen string) any {
			t := *def.(*sdk.ResourceTemplate)
			t.URITemplate = seen
			return &t
		},
		add:      func(def any, route mirrored) { srv.AddResourceTemplate(def.(*sdk.ResourceTemplate), m.read(route)) },
		remove:   srv.RemoveResourceTemplates,
		template: true,
	}, m.templates, tmpls)
	m.prompts = m.syncKind(kind{
		what:      "prompt",
		namespace: func(u seam.Server, name string) string { return u.SourceName() + "__" + name },
		rename: func(def any, seen string) any {
			p := *def.(*sdk.Prompt)
			p.Name = seen
			return &p
		},
		add:    func(def any, route mirrored) { srv.AddPrompt(def.(*sdk.Prompt), m.getPrompt(route)) },
		remove: srv.RemovePrompts,
	}, m.prompts, prompts)
}

// syncKind mirrors the entries of one kind and returns what is registered now, by the name clients see. An
// entry keeps its own name unless another server offers the same one, in which case both are namespaced.
func (m *mirror) syncKind(k kind, current map[string]mirrored, entries []offered) map[string]mirrored {
	count := map[string]int{}
	for _, e := range entries {
		count[e.name]++
	}
	want := map[string]mirrored{}
	for _, e := range entries {
		seen := e.name
		if count[e.name] > 1 {
			seen = k.namespace(e.u, e.name)
		}
		if _, dup := want[seen]; dup {
			continue
		}
		def := k.rename(e.def, seen)
		route := mirrored{u: e.u, name: e.name, key: string(mustJSON(def))}
		if k.template {
			t, err := uritemplate.New(seen)
			if err != nil {
				m.s.log.Warn("mcp serve: not offering an invalid "+k.what, "server", e.u.Name(), "name", e.name, "error", err)
				continue
			}
			route.seen = t
		}
		want[seen] = route
		if old, ok := current[seen]; ok && old.key == route.key && old.u == e.u {
			continue
		}
		if err := addSafely(func() { k.add(def, route) }); err != nil {
			m.s.log.Warn("mcp serve: not offering a "+k.what+" the MCP SDK refuses", "server", e.u.Name(), "name", e.name, "error", err)
			delete(want, seen)
		}
	}
	var gone []string
	for seen := range current {
		if _, ok := want[seen]; !ok {
			gone = append(gone, seen)
		}
	}
	if len(gone) > 0 {
		k.remove(gone...)
	}
	return want
}

// scopeOf is the call scope of a request of a client session: its own sessions of per-client servers, and the
// _meta it sent.
func (m *mirror) scopeOf(ctx context.Context, ss *sdk.ServerSession, meta sdk.Meta) (context.Context, error) {
	cs := &seam.Call{Meta: passMeta(meta)}
	if ss != nil {
		c, err := m.s.clientOf(ss)
		if err != nil {
			return nil, err
		}
		cs.Client = c.scope
	}
	return seam.WithCall(ctx, cs), nil
}

// read reads a mirrored resource, or a resource of a mirrored template, from its server.
func (m *mirror) read(route mirrored) sdk.ResourceHandler {
	return func(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		own := route.name
		if route.seen != nil {
			own = route.ownURI(req.Params.URI)
		}
		return m.readFrom(ctx, req.Session, route.u, req.Params, own)
	}
}

// ownURI is the server's own URI of a URI clients read through a template: without the namespace prefix when
// the template has one.
func (r mirrored) ownURI(seen string) string {
	if r.seen != nil && r.seen.Raw() != r.name {
		if _, own, ok := splitNamespaced(seen); ok {
			return own
		}
	}
	return seen
}

func (m *mirror) readFrom(ctx context.Context, ss *sdk.ServerSession, u seam.Server, p *sdk.ReadResourceParams, own string) (*sdk.ReadResourceResult, error) {
	ctx, err := m.scopeOf(ctx, ss, p.Meta)
	if err != nil {
		return nil, err
	}
	params := *p
	params.URI, params.Meta = own, seam.CallFrom(ctx).Meta
	res, err := u.ReadResource(ctx, &params)
	if err != nil {
		return nil, err
	}
	// The contents name the resource by the server's URI; the client asked by its own.
	for _, c := range res.Contents {
		if c != nil && (c.URI == own || c.URI == "") {
			c.URI = p.URI
		}
	}
	return res, nil
}

// readUnlisted reads a resource that no server listed and no template matched — a URI from a tool result's
// resource link, say, or a server's resource that appeared since the last listing: a namespaced URI goes to
// the server it names, any other to each server that offers resources, in name order, until one has it. When
// none has it, the client gets the original "not found".
func (m *mirror) readUnlisted(ctx context.Context, ss *sdk.ServerSession, p *sdk.ReadResourceParams, notFound error) (sdk.Result, error) {
	if u, own, ok := m.route(p.URI); ok {
		res, err := m.readFrom(ctx, ss, u, p, own)
		if err != nil {
			return nil, err // not a typed nil in the interface
		}
		return res, nil
	}
	for _, u := range m.s.up.Servers() {
		if u.Features().Caps.Resources == nil {
			continue
		}
		res, err := m.readFrom(ctx, ss, u, p, p.URI)
		if err == nil {
			return res, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	return nil, notFound
}

func isResourceNotFound(err error) bool {
	var wire *jsonrpc.Error
	return errors.As(err, &wire) && wire.Code == sdk.CodeResourceNotFound
}

// getPrompt gets a mirrored prompt from its server, by the server's own name, and returns its messages as they
// came.
func (m *mirror) getPrompt(route mirrored) sdk.PromptHandler {
	return func(ctx context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
		ctx, err := m.scopeOf(ctx, req.Session, req.Params.Meta)
		if err != nil {
			return nil, err
		}
		params := *req.Params
		params.Name, params.Meta = route.name, seam.CallFrom(ctx).Meta
		return route.u.GetPrompt(ctx, &params)
	}
}

// route finds the server of a URI clients see, and the server's own URI: a listed resource, a namespaced URI,
// or a URI one of the listed templates matches.
func (m *mirror) route(uri string) (seam.Server, string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r, ok := m.resources[uri]; ok {
		return r.u, r.name, true
	}
	for _, name := range slices.Sorted(maps.Keys(m.templates)) {
		if t := m.templates[name]; t.seen.Regexp().MatchString(uri) {
			return t.u, t.ownURI(uri), true
		}
	}
	if server, own, ok := splitNamespaced(uri); ok {
		for _, u := range m.s.up.Servers() {
			if u.SourceName() == server {
				return u, own, true
			}
		}
	}
	return nil, "", false
}

// subscribe passes a client's resources/subscribe on to the resource's server. The SDK remembers the client's
// subscription and sends it the updates that updated reports.
func (m *mirror) subscribe(ctx context.Context, req *sdk.SubscribeRequest) error {
	u, own, ok := m.route(req.Params.URI)
	if !ok {
		return sdk.ResourceNotFoundError(req.Params.URI)
	}
	c, err := m.s.clientOf(req.Session)
	if err != nil {
		return err
	}
	ctx, err = m.scopeOf(ctx, req.Session, req.Params.Meta)
	if err != nil {
		return err
	}
	if err := u.Subscribe(ctx, own); err != nil {
		return err
	}
	c.mu.Lock()
	if c.subs != nil {
		c.subs[req.Params.URI]++
	}
	c.mu.Unlock()
	return nil
}

// unsubscribe undoes a subscribe of the same client.
func (m *mirror) unsubscribe(ctx context.Context, req *sdk.UnsubscribeRequest) error {
	c, err := m.s.clientOf(req.Session)
	if err != nil {
		return err
	}
	c.mu.Lock()
	held := c.subs[req.Params.URI] > 0
	if held {
		c.subs[req.Params.URI]--
		if c.subs[req.Params.URI] == 0 {
			delete(c.subs, req.Params.URI)
		}
	}
	c.mu.Unlock()
	if !held {
		return nil
	}
	u, own, ok := m.route(req.Params.URI)
	if !ok {
		return nil
	}
	ctx, err = m.scopeOf(ctx, req.Session, req.Params.Meta)
	if err != nil {
		return err
	}
	return u.Unsubscribe(ctx, own)
}

// release drops the subscriptions of a client that went away.
func (m *mirror) release(c *client, subs map[string]int) {
	ctx := seam.WithCall(context.Background(), &seam.Call{Client: c.scope})
	for uri, n := range subs {
		u, own, ok := m.route(uri)
		if !ok {
			continue
		}
		for range n {
			_ = u.Unsubscribe(ctx, own)
		}
	}
}

// updated tells the subscribed clients that a resource of a shared session of u (by the server's own URI)
// changed, under every URI clients may have subscribed to it by.
func (m *mirror) updated(u seam.Server, own string) { m.notifyUpdated(nil, u, own) }

// updatedFor is updated for the resources of a client's own session of a per-client server: only that client
// (ss) hears of them, though others may be subscribed to the same URI on instances of their own.
func (m *mirror) updatedFor(ss *sdk.ServerSession) func(u seam.Server, own string) {
	return func(u seam.Server, own string) {
		if ss != nil { // an in-process client has no session to tell
			m.notifyUpdated(ss, u, own)
		}
	}
}

// notifyUpdated sends resources/updated through the SDK, which alone knows who subscribed by which request
// (newer protocols name it in _meta), to the subscribed sessions; with only set, to that one alone. The SDK
// offers no per-session resources/updated, so sendingFilter drops the copies meant for others: the SDK sends
// synchronously from this goroutine, and notifyMu makes the filter this call's while it does.
func (m *mirror) notifyUpdated(only *sdk.ServerSession, u seam.Server, own string) {
	m.notifyMu.Lock()
	defer m.notifyMu.Unlock()
	m.only = only
	defer func() { m.only = nil }()
	for _, uri := range []string{own, namespaced(u.SourceName(), own)} {
		_ = m.s.sdk.ResourceUpdated(context.Background(), &sdk.ResourceUpdatedNotificationParams{URI: uri})
	}
}

// sendingFilter is the SDK server's sending middleware that keeps a per-client resources/updated to its client.
// Only notifyUpdated sends resources/updated, and it holds notifyMu meanwhile, so only is read in its goroutine.
func (m *mirror) sendingFilter(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if method == "notifications/resources/updated" && m.only != nil && req.GetSession() != m.only {
			return nil, nil
		}
		return next(ctx, method, req)
	}
}

// complete passes completion/complete on to the server of the prompt or resource template it is about.
func (m *mirror) complete(ctx context.Context, req *sdk.CompleteRequest) (*sdk.CompleteResult, error) {
	ref := req.Params.Ref
	if ref == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "completion/complete needs a ref"}
	}
	params := *req.Params
	own := *ref
	var u seam.Server
	m.mu.Lock()
	switch ref.Type {
	case "ref/prompt":
		if p, ok := m.prompts[ref.Name]; ok {
			u, own.Name = p.u, p.name
		}
	case "ref/resource":
		if t, ok := m.templates[ref.URI]; ok {
			u, own.URI = t.u, t.name
		} else if r, ok := m.resources[ref.URI]; ok {
			u, own.URI = r.u, r.name
		}
	}
	m.mu.Unlock()
	if u == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("no prompt or resource template %q", ref.Name+ref.URI)}
	}
	if u.Features().Caps.Completions == nil {
		return &sdk.CompleteResult{Completion: sdk.CompletionResultDetails{Values: []string{}}}, nil
	}
	ctx, err := m.scopeOf(ctx, req.Session, req.Params.Meta)
	if err != nil {
		return nil, err
	}
	params.Ref, params.Meta = &own, seam.CallFrom(ctx).Meta
	return u.Complete(ctx, &params)
}
