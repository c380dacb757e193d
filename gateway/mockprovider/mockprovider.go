// Package mockprovider is a scripted OpenAI-compatible Chat Completions server for tests and the demo. It
// records every request as received and plays the end-to-end scenario of package scenario against one target tool:
//
//   - when tool_search_code is declared, it answers with a tool_search_code call whose script searches the target
//     with {limit: 1}, takes the hit whose name matches, and calls it with {"marker": <marker>};
//   - otherwise, when tool_search is declared, it calls tool_search for the target, then tool_call with the hit
//     whose name matches;
//   - otherwise, when the target itself is declared, it calls it directly;
//   - after a tool result containing ResultMarker, it answers "FAKE_PLUGIN_OK <target>".
//
// NewCaller plays a second script, for any tool by its id (an MCP tool such as "mcp:memory:read_graph", a Go
// tool, a client tool): it calls that tool once, through whatever the request declares — a tool_search_code
// script that calls openclaw.tools.call(id, args) and returns the result, a tool_call {id, args}, or the tool
// itself when it is declared directly (by its name, or as "<server>__<name>", the name off mode gives an MCP
// tool whose name is taken) — and after the result answers CalledPrefix, the id and the result.
//
// The script reads only the request (its declared tools and last message), so one server can serve any number
// of conversations at once. Streaming is not supported: a request with "stream": true gets HTTP 400.
package mockprovider

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"

	"github.com/toolsearch/toolsearch/internal/textcut"
)

// ResultMarker is the text the scenario's tools put in their results; a tool result containing it ends the
// conversation.
const ResultMarker = "FAKE_PLUGIN_OK"

// DefaultMarker is the value of the target's "marker" argument when Options.Marker is empty.
const DefaultMarker = "normal"

// maxBodyBytes bounds a request body; the scenario's largest (500 tools declared directly) is far below it.
const maxBodyBytes = 64 << 20

// Names of the control tools the script recognizes (package runtime defines them; they are repeated here so
// that a mock of the provider does not depend on the implementation it tests).
const (
	toolSearchCode = "tool_search_code"
	toolSearch     = "tool_search"
	toolCall       = "tool_call"
)

// CalledPrefix starts NewCaller's final answer: "CALLED <tool id>: <the result as the model saw it>".
const CalledPrefix = "CALLED"

// Options configure New and NewCaller. A nil *Options is the zero value.
type Options struct {
	// Marker is passed as the target's "marker" argument; "" means DefaultMarker.
	Marker string
	// Arguments are the arguments NewCaller's call passes, a JSON object; nil means {"marker": Marker}. New
	// ignores it.
	Arguments json.RawMessage
}

// Server is a running mock provider. It is safe for concurrent use.
type Server struct {
	srv    *httptest.Server
	target string
	marker string
	// toolID and args are NewCaller's: the tool to call by id, and with what.
	toolID string
	args   json.RawMessage

	mu       sync.Mutex
	requests []Request
}

// Reply kinds: what the server answered a request with.
const (
	ReplyCode   = "code"   // a tool_search_code call
	ReplySearch = "search" // a tool_search call
	ReplyCall   = "call"   // a tool_call call
	ReplyDirect = "direct" // a direct call of the target
	ReplyText   = "text"   // a final text answer
	ReplyError  = "error"  // an HTTP error (malformed request, streaming)
)

// Reply is what the server answered one request with.
type Reply struct {
	Kind string `json:"kind"`
	// Tool is the tool the model called (the planned tool), "" for text and errors.
	Tool      string          `json:"tool,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Text      string          `json:"text,omitempty"`
}

// Request is one recorded request.
type Request struct {
	// Raw is the request body exactly as received.
	Raw   []byte `json:"-"`
	Model string `json:"model"`
	// Tools are the names of the declared tools, in order; ToolBytes is the size of the "tools" array as sent.
	Tools     []string `json:"tools"`
	ToolBytes int      `json:"toolBytes"`
	Messages  int      `json:"messages"`
	Reply     Reply    `json:"reply"`
}

// New starts a server that plays the scenario for target (a tool name such as "fake_plugin_tool_17").
// Close it when done.
func New(target string, opts *Options) *Server {
	s := &Server{target: target, marker: DefaultMarker}
	if opts != nil && opts.Marker != "" {
		s.marker = opts.Marker
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// NewCaller starts a server that calls the tool with id toolID ("<source>:<sourceName>:<name>") once, by its id,
// and then answers with its result (see the package doc). Close it when done.
func NewCaller(toolID string, opts *Options) *Server {
	s := New(toolName(toolID), opts)
	s.toolID = toolID
	s.args, _ = json.Marshal(map[string]string{"marker": s.marker})
	if opts != nil && len(opts.Arguments) > 0 {
		s.args = nil // the script says so when it would call
		if json.Valid(opts.Arguments) {
			s.args = append(json.RawMessage(nil), opts.Arguments...)
		}
	}
	return s
}

// toolName is the name part of a tool id.
func toolName(id string) string {
	parts := strings.SplitN(id, ":", 3)
	return parts[len(parts)-1]
}

// URL is the OpenAI-compatible base URL, ending in /v1.
func (s *Server) URL() string { return s.srv.URL + "/v1" }

// Target is the tool the script calls.
func (s *Server) Target() string { return s.target }

// Close shuts the server down, waiting for requests in flight.
func (s *Server) Close() { s.srv.Close() }

// Requests returns a copy of every request received so far, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// wire is the part of a Chat Completions request the script reads.
type wire struct {
	Model    string          `json:"model"`
	Stream   bool            `json:"stream"`
	Messages []wireMessage   `json:"messages"`
	Tools    json.RawMessage `json:"tools"`
}

type wireMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCallID string          `json:"tool_call_id"`
	ToolCalls  []wireToolCall  `json:"tool_calls"`
}

type wireToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// text reads a message's content, a string or an array of text parts.
func (m wireMessage) text() string {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(m.Content, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.Error(w, "mockprovider: only POST /v1/chat/completions is served", http.StatusNotFound)
		return
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, maxBodyBytes+1))
	if err != nil {
		apiError(w, http.StatusBadRequest, "reading the body: "+err.Error())
		return
	}
	rec := Request{Raw: raw}
	var req wire
	if err := json.Unmarshal(raw, &req); err != nil || len(raw) > maxBodyBytes {
		s.record(rec, Reply{Kind: ReplyError, Text: "malformed request"})
		apiError(w, http.StatusBadRequest, "the body is not a Chat Completions request")
		return
	}
	rec.Model, rec.Messages, rec.ToolBytes = req.Model, len(req.Messages), len(req.Tools)
	var tools []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if len(req.Tools) > 0 && json.Unmarshal(req.Tools, &tools) != nil {
		s.record(rec, Reply{Kind: ReplyError, Text: "malformed tools"})
		apiError(w, http.StatusBadRequest, "tools must be an array of function tools")
		return
	}
	for _, t := range tools {
		rec.Tools = append(rec.Tools, t.Function.Name)
	}
	switch {
	case req.Model == "" || len(req.Messages) == 0:
		s.record(rec, Reply{Kind: ReplyError, Text: "missing model or messages"})
		apiError(w, http.StatusBadRequest, "model and messages are required")
		return
	case req.Stream:
		s.record(rec, Reply{Kind: ReplyError, Text: "streaming requested"})
		apiError(w, http.StatusBadRequest, "streaming is not supported by mockprovider")
		return
	}

	reply := s.script(req, rec.Tools)
	s.record(rec, reply)
	writeCompletion(w, req, reply, len(raw))
}

func (s *Server) record(rec Request, reply Reply) {
	rec.Reply = reply
	s.mu.Lock()
	s.requests = append(s.requests, rec)
	s.mu.Unlock()
}

// script decides the next move of the scripted model from the request alone.
func (s *Server) script(req wire, tools []string) Reply {
	declared := make(map[string]bool, len(tools))
	for _, t := range tools {
		declared[t] = true
	}
	last := req.Messages[len(req.Messages)-1]
	if s.toolID != "" {
		return s.callerScript(last, declared)
	}
	if last.Role == "tool" {
		content := last.text()
		if strings.Contains(content, ResultMarker) {
			return Reply{Kind: ReplyText, Text: ResultMarker + " " + s.target}
		}
		if callName(req.Messages, last.ToolCallID) == toolSearch && declared[toolCall] {
			return s.callHit(content)
		}
		return Reply{Kind: ReplyText, Text: "MOCK_FAILED the tool result did not contain " + ResultMarker + ": " +
			clip(content, 300)}
	}
	args := func(v any) json.RawMessage {
		b, _ := json.Marshal(v)
		return b
	}
	switch {
	case declared[toolSearchCode]:
		return Reply{Kind: ReplyCode, Tool: toolSearchCode, Arguments: args(map[string]string{"code": s.code()})}
	case declared[toolSearch] && declared[toolCall]:
		return Reply{Kind: ReplySearch, Tool: toolSearch,
			Arguments: args(map[string]any{"query": s.target, "limit": 1})}
	case declared[s.target]:
		return Reply{Kind: ReplyDirect, Tool: s.target, Arguments: args(map[string]string{"marker": s.marker})}
	}
	return Reply{Kind: ReplyText, Text: "MOCK_FAILED neither a Tool Search control tool nor " + s.target +
		" is declared"}
}

// callerScript is NewCaller's script: call the tool by id through what is declared, then report the result.
func (s *Server) callerScript(last wireMessage, declared map[string]bool) Reply {
	if last.Role == "tool" {
		return Reply{Kind: ReplyText, Text: CalledPrefix + " " + s.toolID + ": " + clip(last.text(), 2000)}
	}
	if s.args == nil {
		return Reply{Kind: ReplyText, Text: "MOCK_FAILED Options.Arguments is not valid JSON"}
	}
	id, _ := json.Marshal(s.toolID)
	parts := strings.SplitN(s.toolID, ":", 3)
	switch {
	case declared[toolSearchCode]:
		code := fmt.Sprintf("return await openclaw.tools.call(%s, %s);", id, s.args)
		b, _ := json.Marshal(map[string]string{"code": code})
		return Reply{Kind: ReplyCode, Tool: toolSearchCode, Arguments: b}
	case declared[toolCall]:
		b, _ := json.Marshal(map[string]any{"id": s.toolID, "args": s.args})
		return Reply{Kind: ReplyCall, Tool: toolCall, Arguments: b}
	case declared[s.target]:
		return Reply{Kind: ReplyDirect, Tool: s.target, Arguments: s.args}
	case len(parts) == 3 && declared[parts[1]+"__"+parts[2]]:
		return Reply{Kind: ReplyDirect, Tool: parts[1] + "__" + parts[2], Arguments: s.args}
	}
	return Reply{Kind: ReplyText, Text: "MOCK_FAILED neither tool_search_code, tool_call nor " + s.target +
		" is declared"}
}

// code is the tool_search_code script: find the target by searching for it, then call the hit by its id.
func (s *Server) code() string {
	target, _ := json.Marshal(s.target)
	marker, _ := json.Marshal(s.marker)
	return fmt.Sprintf(`const target = %s;
const hits = await openclaw.tools.search(target, { limit: 1 });
const hit = hits.find((h) => h.name === target);
if (!hit) throw new Error("no search hit is named " + target);
return await openclaw.tools.call(hit.id, { marker: %s });`, target, marker)
}

// callHit answers a tool_search result with a tool_call of the hit named like the target.
func (s *Server) callHit(content string) Reply {
	var hits []struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	}
	if err := json.Unmarshal([]byte(content), &hits); err != nil {
		return Reply{Kind: ReplyText, Text: "MOCK_FAILED tool_search did not return hits: " + clip(content, 300)}
	}
	for _, h := range hits {
		if h.Name == s.target {
			b, _ := json.Marshal(map[string]any{"id": h.ID, "args": map[string]string{"marker": s.marker}})
			return Reply{Kind: ReplyCall, Tool: toolCall, Arguments: b}
		}
	}
	return Reply{Kind: ReplyText, Text: "MOCK_FAILED no search hit is named " + s.target}
}

// callName finds the name of the tool call a tool message answers.
func callName(msgs []wireMessage, id string) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		for _, c := range msgs[i].ToolCalls {
			if c.ID == id {
				return c.Function.Name
			}
		}
	}
	return ""
}

// callCount numbers tool calls across the conversation, so call ids are stable for a given history.
func callCount(msgs []wireMessage) int {
	n := 0
	for _, m := range msgs {
		n += len(m.ToolCalls)
	}
	return n
}

func writeCompletion(w http.ResponseWriter, req wire, reply Reply, requestBytes int) {
	type toolCall struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	}
	type message struct {
		Role      string     `json:"role"`
		Content   *string    `json:"content"`
		Refusal   *string    `json:"refusal"`
		ToolCalls []toolCall `json:"tool_calls,omitempty"`
	}
	n := callCount(req.Messages) + 1
	msg := message{Role: "assistant"}
	finish := "stop"
	if reply.Kind == ReplyText {
		msg.Content = &reply.Text
	} else {
		var c toolCall
		c.ID, c.Type = fmt.Sprintf("call_%d", n), "function"
		c.Function.Name, c.Function.Arguments = reply.Tool, string(reply.Arguments)
		msg.ToolCalls = []toolCall{c}
		finish = "tool_calls"
	}
	completion := map[string]any{
		"id":      fmt.Sprintf("chatcmpl-mock-%d", n),
		"object":  "chat.completion",
		"created": 0,
		"model":   req.Model,
		"choices": []any{map[string]any{
			"index": 0, "message": msg, "finish_reason": finish, "logprobs": nil,
		}},
		// Token counts are a rough bytes/4 estimate: the mock has no tokenizer.
		"usage": map[string]int{
			"prompt_tokens": requestBytes / 4, "completion_tokens": 16, "total_tokens": requestBytes/4 + 16,
		},
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(completion)
}

func apiError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	// The client must not retry a request the script refuses.
	w.Header().Set("x-should-retry", "false")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
		"message": "mockprovider: " + msg, "type": "invalid_request_error", "param": nil, "code": nil,
	}})
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return textcut.Prefix(s, n) + "..."
}
