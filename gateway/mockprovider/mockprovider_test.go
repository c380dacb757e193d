package mockprovider_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/gateway/mockprovider"
)

const target = "fake_plugin_tool_17"

type msg = map[string]any

func tools(names ...string) []any {
	out := make([]any, len(names))
	for i, n := range names {
		out[i] = map[string]any{"type": "function", "function": map[string]any{"name": n, "parameters": map[string]any{}}}
	}
	return out
}

type completion struct {
	Choices []struct {
		Message struct {
			Content   *string `json:"content"`
			ToolCalls []struct {
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
}

func post(t *testing.T, s *mockprovider.Server, body any) (int, completion, []byte) {
	t.Helper()
	raw, ok := body.([]byte)
	if !ok {
		var err error
		raw, err = json.Marshal(body)
		require.NoError(t, err)
	}
	resp, err := http.Post(s.URL()+"/chat/completions", "application/json", bytes.NewReader(raw))
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var c completion
	if resp.StatusCode == http.StatusOK {
		require.NoError(t, json.Unmarshal(data, &c))
		require.Len(t, c.Choices, 1)
	}
	return resp.StatusCode, c, raw
}

func request(declared []any, messages ...msg) map[string]any {
	r := map[string]any{"model": "m", "messages": messages}
	if declared != nil {
		r["tools"] = declared
	}
	return r
}

func assistantCall(id, name, args string) msg {
	return msg{"role": "assistant", "tool_calls": []any{map[string]any{
		"id": id, "type": "function", "function": map[string]any{"name": name, "arguments": args}}}}
}

func TestScript(t *testing.T) {
	user := msg{"role": "user", "content": "go"}
	hits := func(names ...string) string {
		var hs []map[string]string
		for _, n := range names {
			hs = append(hs, map[string]string{"id": "openclaw:p:" + n, "name": n})
		}
		b, _ := json.MarshalIndent(hs, "", "  ")
		return string(b)
	}
	tests := []struct {
		name     string
		req      map[string]any
		kind     string
		tool     string
		args     string // JSON, compared semantically; "" for text
		text     string
		callID   string
		contains []string // in the code argument
	}{
		{name: "code mode", req: request(tools("tool_search_code", "session_status"), user),
			kind: mockprovider.ReplyCode, tool: "tool_search_code", callID: "call_1",
			contains: []string{`const target = "fake_plugin_tool_17";`, `openclaw.tools.search(target, { limit: 1 })`,
				`hits.find((h) => h.name === target)`, `openclaw.tools.call(hit.id, { marker: "normal" })`}},
		{name: "tools mode", req: request(tools("tool_search", "tool_describe", "tool_call"), user),
			kind: mockprovider.ReplySearch, tool: "tool_search", args: `{"query":"fake_plugin_tool_17","limit":1}`,
			callID: "call_1"},
		{name: "control tools win over a declared target",
			req:  request(tools("tool_search", "tool_describe", "tool_call", target), user),
			kind: mockprovider.ReplySearch, tool: "tool_search"},
		{name: "direct", req: request(tools("fake_plugin_tool_01", target), user),
			kind: mockprovider.ReplyDirect, tool: target, args: `{"marker":"normal"}`, callID: "call_1"},
		{name: "call the hit named like the target, not the first",
			req: request(tools("tool_search", "tool_call"), user,
				assistantCall("call_1", "tool_search", `{}`),
				msg{"role": "tool", "tool_call_id": "call_1", "content": hits("fake_plugin_tool_1", target)}),
			kind: mockprovider.ReplyCall, tool: "tool_call", callID: "call_2",
			args: `{"id":"openclaw:p:fake_plugin_tool_17","args":{"marker":"normal"}}`},
		{name: "no hit named like the target",
			req: request(tools("tool_search", "tool_call"), user,
				assistantCall("call_1", "tool_search", `{}`),
				msg{"role": "tool", "tool_call_id": "call_1", "content": hits("fake_plugin_tool_1")}),
			kind: mockprovider.ReplyText, text: "MOCK_FAILED no search hit is named fake_plugin_tool_17"},
		{name: "final answer after the marker",
			req: request(tools("tool_search_code"), user,
				assistantCall("call_1", "tool_search_code", `{}`),
				msg{"role": "tool", "tool_call_id": "call_1", "content": `{"ok":true,"value":"FAKE_PLUGIN_OK x"}`}),
			kind: mockprovider.ReplyText, text: "FAKE_PLUGIN_OK fake_plugin_tool_17"},
		{name: "content parts are read too",
			req: request(tools(target), user, assistantCall("call_1", target, `{}`),
				msg{"role": "tool", "tool_call_id": "call_1", "content": []any{
					map[string]any{"type": "text", "text": "FAKE_PLUGIN_"}, map[string]any{"type": "text", "text": "OK"}}}),
			kind: mockprovider.ReplyText, text: "FAKE_PLUGIN_OK fake_plugin_tool_17"},
		{name: "a failed tool result ends the script",
			req: request(tools(target), user, assistantCall("call_1", target, `{}`),
				msg{"role": "tool", "tool_call_id": "call_1", "content": "boom"}),
			kind: mockprovider.ReplyText, text: "MOCK_FAILED the tool result did not contain FAKE_PLUGIN_OK: boom"},
		{name: "nothing to call", req: request(nil, user),
			kind: mockprovider.ReplyText, text: "MOCK_FAILED neither a Tool Search control tool nor fake_plugin_tool_17 is declared"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := mockprovider.New(target, nil)
			defer s.Close()
			status, c, raw := post(t, s, tc.req)
			require.Equal(t, http.StatusOK, status)
			reqs := s.Requests()
			require.Len(t, reqs, 1)
			rec := reqs[0]
			assert.Equal(t, raw, rec.Raw)
			assert.Equal(t, "m", rec.Model)
			assert.Equal(t, tc.kind, rec.Reply.Kind)

			m := c.Choices[0].Message
			if tc.kind == mockprovider.ReplyText {
				require.NotNil(t, m.Content)
				assert.Equal(t, tc.text, *m.Content)
				assert.Equal(t, tc.text, rec.Reply.Text)
				assert.Empty(t, m.ToolCalls)
				assert.Equal(t, "stop", c.Choices[0].FinishReason)
				return
			}
			require.Len(t, m.ToolCalls, 1)
			got := m.ToolCalls[0]
			assert.Equal(t, "function", got.Type)
			assert.Equal(t, tc.tool, got.Function.Name)
			assert.Equal(t, tc.tool, rec.Reply.Tool)
			assert.Equal(t, "tool_calls", c.Choices[0].FinishReason)
			assert.JSONEq(t, got.Function.Arguments, string(rec.Reply.Arguments))
			if tc.callID != "" {
				assert.Equal(t, tc.callID, got.ID)
			}
			if tc.args != "" {
				assert.JSONEq(t, tc.args, got.Function.Arguments)
			}
			if tc.contains != nil {
				var args struct{ Code string }
				require.NoError(t, json.Unmarshal([]byte(got.Function.Arguments), &args))
				for _, want := range tc.contains {
					assert.Contains(t, args.Code, want)
				}
			}
		})
	}
}

func TestMarkerOption(t *testing.T) {
	s := mockprovider.New(target, &mockprovider.Options{Marker: "lane-b"})
	defer s.Close()
	_, c, _ := post(t, s, request(tools(target), msg{"role": "user", "content": "go"}))
	assert.JSONEq(t, `{"marker":"lane-b"}`, c.Choices[0].Message.ToolCalls[0].Function.Arguments)
	assert.Equal(t, target, s.Target())
}

func TestRecordsToolsAsSent(t *testing.T) {
	s := mockprovider.New(target, nil)
	defer s.Close()
	raw := []byte(`{"model":"m","messages":[{"role":"user","content":"go"}],"tools":[` +
		`{"type":"function","function":{"name":"a"}},{"type":"function","function":{"name":"b"}}]}`)
	status, _, _ := post(t, s, raw)
	require.Equal(t, http.StatusOK, status)
	rec := s.Requests()[0]
	assert.Equal(t, []string{"a", "b"}, rec.Tools)
	assert.Equal(t, len(`[{"type":"function","function":{"name":"a"}},{"type":"function","function":{"name":"b"}}]`), rec.ToolBytes)
	assert.Equal(t, 1, rec.Messages)
}

func TestRefusedRequests(t *testing.T) {
	tests := []struct {
		name string
		body string
	}{
		{"streaming", `{"model":"m","stream":true,"messages":[{"role":"user","content":"go"}]}`},
		{"not JSON", `{"model":`},
		{"no model", `{"messages":[{"role":"user","content":"go"}]}`},
		{"no messages", `{"model":"m","messages":[]}`},
		{"tools not an array", `{"model":"m","messages":[{"role":"user","content":"go"}],"tools":{}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := mockprovider.New(target, nil)
			defer s.Close()
			resp, err := http.Post(s.URL()+"/chat/completions", "application/json", strings.NewReader(tc.body))
			require.NoError(t, err)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
			assert.Equal(t, "false", resp.Header.Get("x-should-retry"))
			assert.Contains(t, string(body), `"message":"mockprovider: `)
			reqs := s.Requests()
			require.Len(t, reqs, 1, "refused requests are recorded too")
			assert.Equal(t, mockprovider.ReplyError, reqs[0].Reply.Kind)
			assert.Equal(t, tc.body, string(reqs[0].Raw))
		})
	}

	s := mockprovider.New(target, nil)
	defer s.Close()
	resp, err := http.Get(s.URL() + "/models")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	assert.Empty(t, s.Requests())
}

func TestConcurrentConversations(t *testing.T) {
	s := mockprovider.New(target, nil)
	defer s.Close()
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			body, _ := json.Marshal(request(tools(target), msg{"role": "user", "content": fmt.Sprint(i)}))
			resp, err := http.Post(s.URL()+"/chat/completions", "application/json", bytes.NewReader(body))
			if err == nil {
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
	reqs := s.Requests()
	require.Len(t, reqs, 16)
	for _, r := range reqs {
		assert.Equal(t, mockprovider.ReplyDirect, r.Reply.Kind)
	}
}
