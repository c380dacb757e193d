package front

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/mcp/upstream"
	"github.com/toolsearch/toolsearch/runtime"
)

// TestRealServerThroughTheFront puts the front before server-everything, the reference server that exercises
// every MCP feature, and drives it with the go-sdk client: off mode over stdio (the protocol of today's clients),
// tools mode over streamable HTTP (the go-sdk's newest protocol).
func TestRealServerThroughTheFront(t *testing.T) {
	node, dir := requireNPMServers(t)
	src, err := upstream.New(t.Context(), &upstream.Config{Servers: map[string]upstream.ServerConfig{
		"everything": {Command: node, Args: []string{filepath.Join(dir, "server-everything/dist/index.js"), "stdio"}},
	}}, &upstream.Options{StartTimeout: time.Minute})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, src.Close(context.Background())) })
	require.Equal(t, upstream.StateReady, src.Status()[0].State, "%v", src.Status()[0].Err)

	t.Run("off mode over stdio", func(t *testing.T) {
		rt := newTestRuntime(t, runtime.ModeOff)
		srv := newTestServer(t, rt, src, nil)
		n := &notes{}
		sess := connectStdioWith(t, srv, n.options(), legacyProtocol)

		// Tools as the server describes them, structuredContent as it sends it.
		var structured *sdk.Tool
		for tool, err := range sess.Tools(t.Context(), nil) {
			require.NoError(t, err)
			if tool.Name == "get-structured-content" {
				structured = tool
			}
		}
		require.NotNil(t, structured, "every tool of the server, under its own name")
		assert.Equal(t, "Get Structured Content Tool", structured.Title)
		assert.Contains(t, string(mustJSON(structured.OutputSchema)), `"temperature"`)
		require.NotNil(t, structured.Annotations)
		assert.True(t, structured.Annotations.ReadOnlyHint)
		res, err := sess.CallTool(t.Context(), &sdk.CallToolParams{Name: "get-structured-content", Arguments: map[string]any{"location": "New York"}})
		require.NoError(t, err)
		require.False(t, res.IsError)
		assert.Equal(t, map[string]any{"temperature": 33.0, "conditions": "Cloudy", "humidity": 82.0}, res.StructuredContent)

		// Progress of a long operation.
		params := &sdk.CallToolParams{Name: "trigger-long-running-operation", Arguments: map[string]any{"duration": 0.4, "steps": 4}}
		params.SetProgressToken("long-1")
		res, err = sess.CallTool(t.Context(), params)
		require.NoError(t, err)
		require.False(t, res.IsError)
		require.Eventually(t, n.check(func(n *notes) bool { return len(n.progress) == 4 }), 10*time.Second, 10*time.Millisecond)
		n.mu.Lock()
		for i, p := range n.progress {
			assert.Equal(t, "long-1", p.ProgressToken)
			assert.Equal(t, float64(i+1), p.Progress)
			assert.Equal(t, 4.0, p.Total)
		}
		n.mu.Unlock()

		// Logging at the client's level.
		require.NoError(t, sess.SetLoggingLevel(t.Context(), &sdk.SetLoggingLevelParams{Level: "debug"}))
		res, err = sess.CallTool(t.Context(), &sdk.CallToolParams{Name: "toggle-simulated-logging", Arguments: map[string]any{}})
		require.NoError(t, err)
		require.False(t, res.IsError)
		require.Eventually(t, n.check(func(n *notes) bool { return len(n.logs) > 0 }), 15*time.Second, 20*time.Millisecond)
		n.mu.Lock()
		assert.Equal(t, "everything", n.logs[0].Logger)
		n.mu.Unlock()
		_, err = sess.CallTool(t.Context(), &sdk.CallToolParams{Name: "toggle-simulated-logging", Arguments: map[string]any{}})
		require.NoError(t, err)

		// Resources, templates and prompts, listed, read and fetched through the front.
		var docs []string
		for r, err := range sess.Resources(t.Context(), nil) {
			require.NoError(t, err)
			docs = append(docs, r.URI)
		}
		require.NotEmpty(t, docs)
		assert.True(t, strings.HasPrefix(docs[0], "demo://resource/static/document/"), docs[0])
		read, err := sess.ReadResource(t.Context(), &sdk.ReadResourceParams{URI: docs[0]})
		require.NoError(t, err)
		require.NotEmpty(t, read.Contents)
		assert.NotEmpty(t, read.Contents[0].Text)
		var templates []string
		for tmpl, err := range sess.ResourceTemplates(t.Context(), nil) {
			require.NoError(t, err)
			templates = append(templates, tmpl.URITemplate)
		}
		assert.Contains(t, templates, "demo://resource/dynamic/text/{resourceId}")
		read, err = sess.ReadResource(t.Context(), &sdk.ReadResourceParams{URI: "demo://resource/dynamic/text/3"})
		require.NoError(t, err)
		assert.Contains(t, read.Contents[0].Text, "Resource 3")
		got, err := sess.GetPrompt(t.Context(), &sdk.GetPromptParams{Name: "args-prompt", Arguments: map[string]string{"city": "Lisbon"}})
		require.NoError(t, err)
		assert.Contains(t, string(mustJSON(got.Messages)), "Lisbon")
		done, err := sess.Complete(t.Context(), &sdk.CompleteParams{
			Ref:      &sdk.CompleteReference{Type: "ref/prompt", Name: "completable-prompt"},
			Argument: sdk.CompleteParamsArgument{Name: "department", Value: "Eng"},
		})
		require.NoError(t, err)
		assert.Contains(t, done.Completion.Values, "Engineering")

		// A resource the server adds for the session reaches the client with resources/list_changed.
		res, err = sess.CallTool(t.Context(), &sdk.CallToolParams{Name: "gzip-file-as-resource", Arguments: map[string]any{
			"name": "hello.gz", "data": "data:text/plain;base64,aGVsbG8=", "outputType": "resourceLink"}})
		require.NoError(t, err)
		require.False(t, res.IsError, "%v", res.Content)
		require.Eventually(t, n.check(func(n *notes) bool { return n.resourcesChanged > 0 }), 10*time.Second, 20*time.Millisecond)
		require.Eventually(t, func() bool {
			for r, err := range sess.Resources(t.Context(), nil) {
				if err == nil && r.URI == "demo://resource/session/hello.gz" {
					return true
				}
			}
			return false
		}, 10*time.Second, 20*time.Millisecond)

		// Subscriptions reach the server; its updates come back.
		require.NoError(t, sess.Subscribe(t.Context(), &sdk.SubscribeParams{URI: docs[0]}))
		_, err = sess.CallTool(t.Context(), &sdk.CallToolParams{Name: "toggle-subscriber-updates", Arguments: map[string]any{}})
		require.NoError(t, err)
		require.Eventually(t, n.check(func(n *notes) bool { return len(n.updated) > 0 }), 15*time.Second, 20*time.Millisecond)
		n.mu.Lock()
		assert.Equal(t, docs[0], n.updated[0])
		n.mu.Unlock()
		_, err = sess.CallTool(t.Context(), &sdk.CallToolParams{Name: "toggle-subscriber-updates", Arguments: map[string]any{}})
		require.NoError(t, err)
	})

	t.Run("tools mode over streamable HTTP", func(t *testing.T) {
		rt := newTestRuntime(t, runtime.ModeTools)
		srv := newTestServer(t, rt, src, nil)
		ts := httptest.NewServer(srv.Handler())
		t.Cleanup(ts.Close)
		n := &notes{}
		sess := connectHTTP(t, ts.URL, n.options(), "")

		text, isErr := callText(t, sess, "tool_call", map[string]any{"id": "mcp:everything:get-structured-content",
			"args": map[string]any{"location": "Chicago"}})
		require.False(t, isErr, text)
		var env struct {
			Result struct {
				Details map[string]any `json:"details"`
			} `json:"result"`
		}
		require.NoError(t, json.Unmarshal([]byte(text), &env), text)
		assert.Equal(t, map[string]any{"temperature": 36.0, "conditions": "Light rain / drizzle", "humidity": 82.0},
			env.Result.Details, "structuredContent is in tool_call's envelope")

		params := &sdk.CallToolParams{Name: "tool_call", Arguments: map[string]any{
			"id": "mcp:everything:trigger-long-running-operation", "args": map[string]any{"duration": 0.3, "steps": 3}}}
		params.SetProgressToken(7)
		res, err := sess.CallTool(t.Context(), params)
		require.NoError(t, err)
		require.False(t, res.IsError)
		require.Eventually(t, n.check(func(n *notes) bool { return len(n.progress) == 3 }), 10*time.Second, 10*time.Millisecond)

		read, err := sess.ReadResource(t.Context(), &sdk.ReadResourceParams{URI: "demo://resource/dynamic/blob/2"})
		require.NoError(t, err)
		assert.NotEmpty(t, read.Contents[0].Blob)
	})
}
