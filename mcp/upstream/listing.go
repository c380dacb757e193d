package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolsearch/toolsearch/internal/textcut"
)

// A tools/list page is rewritten before the SDK decodes it. The SDK would decode every schema into
// map[string]any, which costs the host 15 to 45 times the bytes on the wire ([{},{},...] is the worst case): one
// 16 MiB page could hold most of a gigabyte before any size check ran. So each tool of a page is cut out as raw
// JSON first; an oversized one is dropped there, and each kept one travels through the SDK as a single JSON
// string (the "carrier") in place of its inputSchema, which list parses into raw schemas without ever building a
// map. The page reports its size and what was dropped under pageMetaKey in its _meta.
//
// The carrier is the tool's _meta, {"io.toolsearch/tool": "<the tool's JSON>"}, because the SDK leaves a
// tool's _meta alone, while it re-encodes every inputSchema to look for header annotations.

// pageMetaKey is the key of the filter's report in the _meta of a rewritten tools/list result; toolMetaKey that
// of the carrier in the _meta of each tool.
const (
	pageMetaKey = "io.toolsearch/page"
	toolMetaKey = "io.toolsearch/tool"
)

// pageReport is what the filter says about one page.
type pageReport struct {
	Bytes   int           `json:"bytes"` // the page's result as the server sent it
	Dropped []droppedTool `json:"dropped,omitempty"`
}

type droppedTool struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// maxDroppedName bounds the name quoted for a dropped tool: the name itself may be what made it oversized.
const maxDroppedName = 80

var errPageShape = errors.New("not a tools/list result")

// filterToolsPage rewrites one tools/list result. A result it cannot read is returned unchanged: the SDK then
// fails the listing with its own error, and since encoding/json checks that the whole input is valid before it
// decodes anything, and skips a "tools" value of the wrong type, that costs no more than the bytes already held.
func filterToolsPage(result []byte) []byte {
	out, err := rewriteToolsPage(result)
	if err != nil {
		return result
	}
	return out
}

func rewriteToolsPage(result []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(result))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errPageShape
	}
	var out bytes.Buffer
	out.WriteByte('{')
	report := pageReport{Bytes: len(result)}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		if key == "_meta" {
			// The server's _meta of a tools/list result means nothing to us, and decoded it could be as large
			// as a schema: the filter's report replaces it.
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, err
			}
			continue
		}
		if out.Len() > 1 {
			out.WriteByte(',')
		}
		writeJSONString(&out, []byte(key))
		out.WriteByte(':')
		if key == "tools" {
			if err := rewriteTools(dec, &out, &report); err != nil {
				return nil, err
			}
			continue
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		out.Write(raw)
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF { // nothing may follow
		return nil, errPageShape
	}
	meta, err := json.Marshal(map[string]pageReport{pageMetaKey: report})
	if err != nil {
		return nil, err
	}
	if out.Len() > 1 {
		out.WriteByte(',')
	}
	out.WriteString(`"_meta":`)
	out.Write(meta)
	out.WriteByte('}')
	return out.Bytes(), nil
}

// rewriteTools replaces the value of "tools": each element that fits MaxToolBytes and is an object becomes a
// carrier, the others are dropped and reported.
func rewriteTools(dec *json.Decoder, out *bytes.Buffer, report *pageReport) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok != json.Delim('[') {
		if _, ok := tok.(json.Delim); ok {
			return errPageShape // an object: the SDK refuses it without decoding its contents
		}
		b, err := json.Marshal(tok) // null, or a scalar the SDK will refuse
		if err != nil {
			return err
		}
		out.Write(b)
		return nil
	}
	out.WriteByte('[')
	first := true
	for dec.More() {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return err
		}
		switch {
		case len(raw) > MaxToolBytes:
			var head struct {
				Name json.RawMessage `json:"name"`
			}
			_ = json.Unmarshal(raw, &head) // scans the tool without keeping more than its name
			report.Dropped = append(report.Dropped, droppedTool{Name: quotedName(head.Name),
				Reason: fmt.Sprintf("its definition is %d bytes, more than %d", len(raw), MaxToolBytes)})
			continue
		case raw[0] != '{':
			report.Dropped = append(report.Dropped, droppedTool{Reason: "an entry of the listing is not an object"})
			continue
		}
		if !first {
			out.WriteByte(',')
		}
		first = false
		out.WriteString(`{"_meta":{"` + toolMetaKey + `":`)
		writeJSONString(out, raw)
		out.WriteString(`}}`)
	}
	if _, err := dec.Token(); err != nil { // the closing bracket
		return err
	}
	out.WriteByte(']')
	return nil
}

// quotedName is a dropped tool's name for a message: its string value, cut at a rune boundary.
func quotedName(raw json.RawMessage) string {
	var name string
	if json.Unmarshal(raw, &name) != nil {
		return ""
	}
	return cutUTF8(name, maxDroppedName)
}

// cutUTF8 cuts s to at most n bytes without splitting a UTF-8 sequence, marking the cut.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return textcut.Prefix(s, n) + "..."
}

// writeJSONString writes s (a tool's JSON, or a key the decoder unquoted) as a JSON string. Unlike
// encoding/json, it does not escape <, > and & for HTML, which would make a schema full of them six times
// larger, and it writes straight into out.
func writeJSONString(out *bytes.Buffer, s []byte) {
	out.Grow(len(s) + len(s)/8 + 2)
	out.WriteByte('"')
	from := 0
	for i, c := range s {
		if c != '"' && c != '\\' && c >= 0x20 {
			continue
		}
		out.Write(s[from:i])
		switch c {
		case '\n':
			out.WriteString(`\n`)
		case '\r':
			out.WriteString(`\r`)
		case '\t':
			out.WriteString(`\t`)
		case '"', '\\':
			out.WriteByte('\\')
			out.WriteByte(c)
		default:
			fmt.Fprintf(out, `\u%04x`, c)
		}
		from = i + 1
	}
	out.Write(s[from:])
	out.WriteByte('"')
}

// pageReportOf reads the filter's report back from a result the SDK decoded.
func pageReportOf(res *sdk.ListToolsResult) (pageReport, bool) {
	var r pageReport
	v, ok := res.Meta[pageMetaKey]
	if !ok {
		return r, false
	}
	b, err := json.Marshal(v)
	if err != nil || json.Unmarshal(b, &r) != nil {
		return r, false
	}
	return r, true
}

// remoteTool is one tool of a listing as list keeps it: raw schemas, no decoded maps.
type remoteTool struct {
	Name         string             `json:"name"`
	Title        string             `json:"title,omitempty"`
	Description  string             `json:"description,omitempty"`
	InputSchema  json.RawMessage    `json:"inputSchema,omitempty"`
	OutputSchema json.RawMessage    `json:"outputSchema,omitempty"`
	Annotations  *remoteAnnotations `json:"annotations,omitempty"`
	// Meta and Icons are kept raw for the front's off mode, which offers a tool as its server listed it.
	Meta  json.RawMessage `json:"_meta,omitempty"`
	Icons json.RawMessage `json:"icons,omitempty"`
}

// remoteAnnotations are a tool's MCP annotations; a hint the server left out is nil.
type remoteAnnotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    *bool  `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool  `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`
}

// parseCarrier turns a carrier back into the tool the server sent. A tool that did not come through the filter
// is refused rather than trusted: its schemas were decoded without a bound.
func parseCarrier(t *sdk.Tool) (remoteTool, error) {
	var rt remoteTool
	raw, ok := t.Meta[toolMetaKey].(string)
	if !ok {
		return rt, errors.New("the listing did not pass the size filter")
	}
	if err := json.Unmarshal([]byte(raw), &rt); err != nil {
		return rt, err
	}
	return rt, nil
}

// size is what a kept tool counts against MaxListingBytes.
func (rt *remoteTool) size() int {
	n := len(rt.Name) + len(rt.Title) + len(rt.Description) + len(rt.InputSchema) + len(rt.OutputSchema) +
		len(rt.Meta) + len(rt.Icons)
	if rt.Annotations != nil {
		n += len(rt.Annotations.Title)
	}
	return n
}

// listingTransport puts the listing filter and the bound on read results between a transport and the SDK. It is
// used for every transport whose connection the SDK does not need to see as its own (streamable HTTP filters in
// its RoundTripper instead: see httpUpstream).
type listingTransport struct {
	inner        sdk.Transport
	maxReadBytes int
}

func (t listingTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &listingConn{Connection: c, maxReadBytes: t.maxReadBytes}, nil
}

// listingConn rewrites the responses to the tools/list, resources/read and prompts/get requests it saw go out.
type listingConn struct {
	sdk.Connection
	pending      pendingLists
	maxReadBytes int
}

func (c *listingConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	c.pending.noteRequest(msg)
	return c.Connection.Write(ctx, msg)
}

func (c *listingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if resp, ok := msg.(*jsonrpc.Response); ok {
		filterReply(resp, c.pending.take(resp.ID), c.maxReadBytes)
	}
	return msg, err
}

// filterReply rewrites the response to a request of method (as pendingLists.take found it): a tools/list page
// goes through the listing filter, and a resources/read or prompts/get result over maxReadBytes, as sent, becomes
// an error before the SDK decodes it (a 15 MiB resource cost the front about 170 MB once decoded and relayed).
func filterReply(resp *jsonrpc.Response, method string, maxReadBytes int) {
	if resp.Error != nil {
		return
	}
	switch method {
	case "tools/list":
		resp.Result = filterToolsPage(resp.Result)
	case "resources/read", "prompts/get":
		if len(resp.Result) > maxReadBytes {
			resp.Error = &jsonrpc.Error{Code: codeResultTooLarge,
				Message: fmt.Sprintf("%s: the result is %d bytes, more than the %d bytes toolsearch relays", method, len(resp.Result), maxReadBytes)}
			resp.Result = nil
		}
	}
}

// codeResultTooLarge is the JSON-RPC error code filterReply puts in place of a result over the bound; featureCall
// turns it into ErrResultTooLarge. It is in the range JSON-RPC leaves to implementations.
const codeResultTooLarge = -32010

// filtered says whether filterReply rewrites the responses to requests of method.
func filtered(method string) bool {
	switch method {
	case "tools/list", "resources/read", "prompts/get":
		return true
	}
	return false
}

// pendingLists are the ids of the requests filterReply rewrites the responses to, whose responses have not arrived yet, with their
// methods. The zero value is ready to use.
type pendingLists struct {
	mu  sync.Mutex
	ids map[jsonrpc.ID]string
}

func (p *pendingLists) noteRequest(msg jsonrpc.Message) {
	req, ok := msg.(*jsonrpc.Request)
	if !ok || !req.IsCall() || !filtered(req.Method) {
		return
	}
	p.mu.Lock()
	if p.ids == nil {
		p.ids = map[jsonrpc.ID]string{}
	}
	p.ids[req.ID] = req.Method
	p.mu.Unlock()
}

// take returns the method of the request id answers, "" when filterReply has nothing to do with it.
func (p *pendingLists) take(id jsonrpc.ID) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	method := p.ids[id]
	delete(p.ids, id)
	return method
}

func (p *pendingLists) empty() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.ids) == 0
}
