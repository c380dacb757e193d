package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/mcp/internal/seam"
)

// list fetches every page of tools/list and maps the tools to catalog tools. Each page is reduced to the raw
// definitions it keeps before the next one is asked for, so what a listing holds is bounded by MaxListingBytes
// plus one page, whatever the server sends (see listing.go). It guards against pagination that never ends.
func (u *server) list(ctx context.Context, sess *sdk.ClientSession) (*listing, error) {
	l := newListing(u)
	seenCursor := map[string]bool{}
	params := &sdk.ListToolsParams{}
	for page := 0; ; page++ {
		began := time.Now()
		lctx, span := u.startRequest(ctx, "tools/list", "")
		res, err := sess.ListTools(lctx, params)
		u.endRequest(lctx, span, began, "tools/list", "", err, false)
		if err != nil {
			return nil, err
		}
		full, err := l.addPage(res)
		if err != nil {
			return nil, err
		}
		if full || res.NextCursor == "" {
			break
		}
		if seenCursor[res.NextCursor] || page > MaxToolsPerServer {
			return nil, fmt.Errorf("tools/list pagination does not end (cursor %q repeats)", cutUTF8(res.NextCursor, 100))
		}
		seenCursor[res.NextCursor] = true
		params = &sdk.ListToolsParams{Cursor: res.NextCursor}
	}
	if err := l.checkDisabled(); err != nil {
		return nil, err
	}
	return l, nil
}

// checkDisabled fails the listing when a disabledTools (or excludeTools) entry names no tool the server lists:
// the server renamed a tool the user meant to hide, or the entry is misspelt, and either way the tool it was
// written to stop may be among those listed under another name. None of the server's tools is served then (a
// listing is adopted whole or not at all), until the entry names a listed tool or is removed. Entries are
// resolved as the policy resolves them (catalog.UnresolvedListed), so an entry that passes here hides exactly
// the tools it names.
func (l *listing) checkDisabled() error {
	cfg := l.u.cfg
	if len(cfg.DisabledTools)+len(cfg.ExcludeTools) == 0 {
		return nil
	}
	var missing []string
	for _, list := range []struct {
		key     string
		entries []string
	}{{"disabledTools", cfg.DisabledTools}, {"excludeTools", cfg.ExcludeTools}} {
		for _, e := range catalog.UnresolvedListed(list.entries, l.seen) {
			missing = append(missing, list.key+" "+strconv.QuoteToASCII(e))
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return &UnresolvedDisabledError{Entries: missing, Listed: slices.Clone(l.seen)}
}

func newListing(u *server) *listing { return &listing{u: u, offered: map[string]bool{}} }

// listing is one tools/list in progress: the tools kept so far, raw, and the bytes received and kept.
type listing struct {
	u         *server
	kept      []remoteTool
	offered   map[string]bool // remote names kept
	received  int
	keptBytes int
	// seen are the names of every tool the server listed, kept or dropped, for checkDisabled: a disabled tool
	// the listing dropped is still one the server lists.
	seen []string
}

// addPage keeps the usable tools of one page. Tools without a name, repeated names and oversized definitions
// or schemas are dropped with a progress line rather than failing the whole server. full reports that a bound
// was reached and the listing must stop.
func (l *listing) addPage(res *sdk.ListToolsResult) (full bool, err error) {
	u := l.u
	report, ok := pageReportOf(res)
	if !ok {
		return false, errors.New("the listing did not pass the size filter") // a transport without listingTransport
	}
	l.received += report.Bytes
	for _, d := range report.Dropped {
		if d.Name != "" {
			l.seen = append(l.seen, d.Name)
		}
		if d.Name == "" {
			u.src.progressf("mcp: %s: skipping a tool: %s", u.name, d.Reason)
		} else {
			u.src.progressf("mcp: %s: skipping tool %q: %s", u.name, d.Name, d.Reason)
		}
	}
	for _, t := range res.Tools {
		rt, err := parseCarrier(t)
		if rt.Name != "" {
			l.seen = append(l.seen, rt.Name)
		}
		if err != nil {
			u.src.progressf("mcp: %s: skipping tool %q: %v", u.name, cutUTF8(t.Name, maxDroppedName), err)
			continue
		}
		full, err := l.keep(rt)
		if full {
			u.src.progressf("mcp: %s: %v; keeping the first %d tool(s)", u.name, err, len(l.kept))
			return true, nil
		}
		if err != nil {
			u.src.progressf("mcp: %s: %v", u.name, err)
		}
	}
	if l.received > MaxListingBytes && res.NextCursor != "" {
		u.src.progressf("mcp: %s: the listing passed %d bytes; keeping the first %d tool(s)", u.name, MaxListingBytes, len(l.kept))
		return true, nil
	}
	return false, nil
}

// keep adds one tool to the listing unless a rule drops it, and says why it did: a tool without a name, a
// repeated name, an oversized schema. full means the listing reached MaxListingBytes or MaxToolsPerServer and
// must stop (the tool is not kept).
func (l *listing) keep(rt remoteTool) (full bool, err error) {
	switch {
	case rt.Name == "":
		return false, errors.New("skipping a tool without a name")
	case l.offered[rt.Name]:
		return false, fmt.Errorf("skipping a second tool named %q", cutUTF8(rt.Name, maxDroppedName))
	}
	if rt.InputSchema, err = compactSchema(rt.InputSchema, `{"type":"object"}`); err != nil {
		return false, fmt.Errorf("skipping tool %q: input schema: %w", cutUTF8(rt.Name, maxDroppedName), err)
	}
	if rt.OutputSchema, err = compactSchema(rt.OutputSchema, ""); err != nil {
		return false, fmt.Errorf("skipping tool %q: output schema: %w", cutUTF8(rt.Name, maxDroppedName), err)
	}
	switch {
	case l.keptBytes+rt.size() > MaxListingBytes:
		return true, fmt.Errorf("the listing passed %d bytes", MaxListingBytes)
	case len(l.kept) == MaxToolsPerServer:
		return true, fmt.Errorf("lists more than %d tools", MaxToolsPerServer)
	}
	l.offered[rt.Name] = true
	l.kept = append(l.kept, rt)
	l.keptBytes += rt.size()
	return false, nil
}

// compactSchema re-encodes a schema compactly, bounded in size. A missing schema (or null) becomes missing, or
// "" for none.
func compactSchema(raw json.RawMessage, missing string) (json.RawMessage, error) {
	if len(raw) == 0 || string(raw) == "null" {
		if missing == "" {
			return nil, nil
		}
		return json.RawMessage(missing), nil
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return nil, err
	}
	if b.Len() > MaxSchemaBytes {
		return nil, fmt.Errorf("%d bytes, more than %d", b.Len(), MaxSchemaBytes)
	}
	return b.Bytes(), nil
}

// mapTools turns the kept tools of a listing into catalog tools: safe names, the schemas kept as raw JSON (they
// are untrusted and never rendered into hints), and a handler per tool.
func (u *server) mapTools(kept []remoteTool) []catalog.Tool {
	names := make([]string, len(kept))
	for i, t := range kept {
		names[i] = t.Name
	}
	_, safe := catalog.SafeMCPNames(u.sourceName, names)
	tools := make([]catalog.Tool, 0, len(kept))
	for i, t := range kept {
		label := t.Title
		if label == "" && t.Annotations != nil {
			label = t.Annotations.Title
		}
		tools = append(tools, catalog.Tool{
			Source:        catalog.SourceMCP,
			SourceName:    u.sourceName,
			Name:          safe[i],
			ListedName:    t.Name,
			Label:         label,
			Description:   t.Description,
			Parameters:    t.InputSchema,
			OutputSchema:  t.OutputSchema,
			Annotations:   annotations(t.Annotations),
			TrustedByUser: u.config().Trusted,
			Handler:       &toolHandler{u: u, remote: t.Name, listed: &t},
		})
	}
	return tools
}

// adoptListing makes a listing current, and refreshes the schema cache of a lazy server when it changed.
func (u *server) adoptListing(l *listing) (changed bool) {
	changed = u.adopt(u.mapTools(l.kept), l.offered)
	if changed && u.config().Lazy {
		u.saveCache(l.kept)
	}
	return changed
}

// adopt makes a new listing current and reports whether it differs from the one before. Tools whose remote name
// was listed before keep their handler value, so a relisting (or a reconnect) that changed nothing leaves every
// tool identical, and the catalog fingerprints (which include handler identity) of consumers unchanged: a server
// that floods tools/list_changed cannot make every consumer rebuild its catalog.
func (u *server) adopt(tools []catalog.Tool, offered map[string]bool) (changed bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	handlers := make(map[string]catalog.Handler, len(u.tools))
	for _, t := range u.tools {
		if h, ok := t.Handler.(*toolHandler); ok {
			handlers[h.remote] = h
		}
	}
	changed = len(tools) != len(u.tools)
	for i := range tools {
		h := tools[i].Handler.(*toolHandler)
		if old := handlers[h.remote]; old != nil && sameJSON(old.(*toolHandler).listed, h.listed) {
			tools[i].Handler = old
		}
		if !changed && !seam.SameTool(&tools[i], &u.tools[i]) { // same length, so u.tools[i] exists
			changed = true
		}
	}
	if changed {
		u.tools, u.offered = tools, offered
	}
	return changed
}

// lists reports whether the server's current listing of h's tool is the definition h stands for: adopt keeps a
// tool's handler exactly while the server lists the tool unchanged.
func (u *server) lists(h *toolHandler) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, t := range u.tools {
		if th, ok := t.Handler.(*toolHandler); ok && th.remote == h.remote {
			return th == h
		}
	}
	return false
}

// annotations maps a tool's MCP annotations (the title goes to the label). readOnlyHint and idempotentHint
// count only when true: false is their default, and servers built on the Go SDK send false for every tool.
func annotations(a *remoteAnnotations) *catalog.Annotations {
	if a == nil {
		return nil
	}
	onlyTrue := func(b *bool) *bool {
		if b == nil || !*b {
			return nil
		}
		return b
	}
	out := &catalog.Annotations{ReadOnlyHint: onlyTrue(a.ReadOnlyHint), DestructiveHint: a.DestructiveHint,
		IdempotentHint: onlyTrue(a.IdempotentHint), OpenWorldHint: a.OpenWorldHint}
	if *out == (catalog.Annotations{}) {
		return nil // only a title
	}
	return out
}

func (u *server) snapshot() []catalog.Tool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]catalog.Tool(nil), u.tools...)
}
