package front

import (
	"strings"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

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

// Report takes one upstream notification. server names the upstream, for a message that would otherwise not
// say where it came from when several calls report at once.
func (p *progressRelay) Report(server string, n *sdk.ProgressNotificationParams) {
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
