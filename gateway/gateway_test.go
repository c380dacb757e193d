package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/gateway"
	"github.com/toolsearch/toolsearch/runtime"
)

// provider is a Chat Completions endpoint whose answers a test scripts: reply gets the decoded request and
// returns the assistant message (or an HTTP error status).
type provider struct {
	*httptest.Server
	mu     sync.Mutex
	bodies [][]byte
	auth   []string
}

type reply struct {
	status    int // HTTP status; 0 means 200
	text      string
	toolCalls []call
}

type call struct{ id, name, args string }

type request struct {
	Model    string `json:"model"`
	Messages []struct {
		Role       string `json:"role"`
		Content    string `json:"content"`
		ToolCallID string `json:"tool_call_id"`
		ToolCalls  []struct {
			ID       string `json:"id"`
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"messages"`
	Tools []struct {
		Type     string `json:"type"`
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
}

func newProvider(t *testing.T, script func(req request) reply) *provider {
	t.Helper()
	p := &provider{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		p.mu.Lock()
		p.bodies = append(p.bodies, body)
		p.auth = append(p.auth, r.Header.Get("Authorization"))
		p.mu.Unlock()
		var req request
		if err := json.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		rep := script(req)
		w.Header().Set("Content-Type", "application/json")
		if rep.status != 0 {
			w.Header().Set("x-should-retry", "false")
			w.WriteHeader(rep.status)
			fmt.Fprintf(w, `{"error":{"message":%q,"type":"test"}}`, rep.text)
			return
		}
		msg := map[string]any{"role": "assistant", "content": nil}
		if rep.text != "" {
			msg["content"] = rep.text
		}
		var calls []any
		for _, c := range rep.toolCalls {
			calls = append(calls, map[string]any{"id": c.id, "type": "function",
				"function": map[string]any{"name": c.name, "arguments": c.args}})
		}
		if calls != nil {
			msg["tool_calls"] = calls
		}
		json.NewEncoder(w).Encode(map[string]any{
			"id": "x", "object": "chat.completion", "created": 0, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": "stop"}},
		})
	}))
	t.Cleanup(p.Close)
	return p
}

func (p *provider) requests(t *testing.T) []request {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]request, len(p.bodies))
	for i, b := range p.bodies {
		require.NoError(t, json.Unmarshal(b, &out[i]))
	}
	return out
}

func (p *provider) body(i int) []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.bodies[i]
}

func noEnv(string) string { return "" }

func newRuntime(t *testing.T, cfg runtime.Config, log runtime.SessionLogger) *runtime.Runtime {
	t.Helper()
	rt, err := runtime.New(context.Background(), &runtime.Options{Config: cfg, SessionLog: log})
	require.NoError(t, err)
	t.Cleanup(func() { rt.Close(context.Background()) })
	return rt
}

func newGateway(t *testing.T, rt *runtime.Runtime, url string, opts *gateway.Options) *gateway.Gateway {
	t.Helper()
	o := gateway.Options{}
	if opts != nil {
		o = *opts
	}
	o.BaseURL, o.Getenv = url+"/v1", noEnv
	if o.Model == "" {
		o.Model = "test-model"
	}
	gw, err := gateway.New(rt, &o)
	require.NoError(t, err)
	return gw
}

// echoTool answers with its arguments.
func echoTool(name string) catalog.Tool {
	return catalog.Tool{
		Source: catalog.SourceOpenClaw, SourceName: "core", Name: name,
		Description: "Echo the text back.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
		Handler: catalog.HandlerFunc(func(_ context.Context, args json.RawMessage) (*catalog.Result, error) {
			return &catalog.Result{Content: []catalog.Content{{Type: "text", Text: "echo " + string(args)}}}, nil
		}),
	}
}

// memLog is a session log in memory.
type memLog struct {
	mu      sync.Mutex
	records []runtime.Record
}

func (m *memLog) WriteRecords(_ string, records []runtime.Record) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.records = append(m.records, records...)
	return nil
}

func (m *memLog) all() []runtime.Record {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]runtime.Record(nil), m.records...)
}

func TestNewProviderSettings(t *testing.T) {
	rt := newRuntime(t, runtime.Config{}, nil)
	env := map[string]string{
		gateway.EnvBaseURL: "http://env.example/v1", gateway.EnvAPIKey: "env-key", gateway.EnvModel: "env-model",
	}
	getenv := func(k string) string { return env[k] }

	_, err := gateway.New(rt, &gateway.Options{Getenv: noEnv})
	assert.ErrorIs(t, err, gateway.ErrNoModel)
	_, err = gateway.New(nil, &gateway.Options{Model: "m"})
	assert.Error(t, err)

	gw, err := gateway.New(rt, &gateway.Options{Getenv: getenv})
	require.NoError(t, err)
	assert.Equal(t, "env-model", gw.Model())
	assert.Equal(t, "http://env.example/v1", gw.BaseURL())

	gw, err = gateway.New(rt, &gateway.Options{Getenv: getenv, Model: "own", BaseURL: "http://own/v1"})
	require.NoError(t, err)
	assert.Equal(t, "own", gw.Model(), "options win over the environment")
	assert.Equal(t, "http://own/v1", gw.BaseURL())

	gw, err = gateway.New(rt, &gateway.Options{Getenv: noEnv, Model: "m"})
	require.NoError(t, err)
	assert.Equal(t, gateway.DefaultBaseURL, gw.BaseURL())
	assert.Same(t, rt, gw.Runtime())
}

func TestAPIKeyFromEnvironment(t *testing.T) {
	p := newProvider(t, func(request) reply { return reply{text: "hi"} })
	rt := newRuntime(t, runtime.Config{}, nil)
	gw, err := gateway.New(rt, &gateway.Options{BaseURL: p.URL + "/v1", Model: "m",
		Getenv: func(k string) string {
			if k == gateway.EnvAPIKey {
				return "sk-test"
			}
			return ""
		}})
	require.NoError(t, err)
	_, err = gw.Turn(context.Background(), gateway.TurnRequest{Run: runtime.RunRequest{RunID: "r", UserMessage: "hi"}})
	require.NoError(t, err)
	assert.Equal(t, []string{"Bearer sk-test"}, p.auth)
}

// TestTurnToolLoop runs a direct tool call, then a text answer, and checks every request the provider got.
func TestTurnToolLoop(t *testing.T) {
	p := newProvider(t, func(req request) reply {
		if req.Messages[len(req.Messages)-1].Role == "tool" {
			return reply{text: "done: " + req.Messages[len(req.Messages)-1].Content}
		}
		return reply{toolCalls: []call{{"c1", "echo", `{"text":"a"}`}, {"c2", "echo", `{"text":"b"}`}}}
	})
	log := &memLog{}
	rt := newRuntime(t, runtime.Config{}, log)
	gw := newGateway(t, rt, p.URL, &gateway.Options{SystemPrompt: "Be brief."})

	res, err := gw.Turn(context.Background(), gateway.TurnRequest{Run: runtime.RunRequest{
		SessionID: "s1", Tools: []catalog.Tool{echoTool("echo")}, UserMessage: "say a and b",
	}})
	require.NoError(t, err)
	assert.Equal(t, `done: echo {"text":"b"}`, res.Answer)
	assert.Equal(t, runtime.ModeOff, res.Mode)

	reqs := p.requests(t)
	require.Len(t, reqs, 2)
	assert.Equal(t, "test-model", reqs[0].Model)
	require.Len(t, reqs[0].Tools, 1)
	assert.Equal(t, "function", reqs[0].Tools[0].Type)
	assert.Equal(t, "echo", reqs[0].Tools[0].Function.Name)
	assert.Equal(t, "Echo the text back.", reqs[0].Tools[0].Function.Description)
	assert.JSONEq(t, string(echoTool("echo").Parameters), string(reqs[0].Tools[0].Function.Parameters))

	second := reqs[1].Messages
	require.Len(t, second, 5, "system, user, assistant with two calls, two results")
	assert.Equal(t, "system", second[0].Role)
	assert.Equal(t, "Be brief.", second[0].Content)
	assert.Equal(t, "user", second[1].Role)
	assert.Equal(t, "say a and b", second[1].Content)
	require.Len(t, second[2].ToolCalls, 2)
	assert.Equal(t, "c1", second[2].ToolCalls[0].ID)
	assert.Equal(t, `{"text":"a"}`, second[2].ToolCalls[0].Function.Arguments)
	assert.Equal(t, "tool", second[3].Role)
	assert.Equal(t, "c1", second[3].ToolCallID)
	assert.Equal(t, `echo {"text":"a"}`, second[3].Content)
	assert.Equal(t, "c2", second[4].ToolCallID)

	assert.Equal(t, []gateway.Message{
		{Role: gateway.RoleUser, Content: "say a and b"},
		{Role: gateway.RoleAssistant, ToolCalls: []runtime.ToolCall{
			{ID: "c1", Name: "echo", Arguments: json.RawMessage(`{"text":"a"}`)},
			{ID: "c2", Name: "echo", Arguments: json.RawMessage(`{"text":"b"}`)},
		}},
		{Role: gateway.RoleTool, Content: `echo {"text":"a"}`, ToolCallID: "c1"},
		{Role: gateway.RoleTool, Content: `echo {"text":"b"}`, ToolCallID: "c2"},
		{Role: gateway.RoleAssistant, Content: `done: echo {"text":"b"}`},
	}, res.Messages)
	assert.Len(t, res.Transcript, 4, "two calls and their results")
	assert.EqualValues(t, 2, res.Telemetry.CallCount)

	// The session log has the messages and one request record per request, in order with the runtime's.
	var types []runtime.RecordType
	for _, r := range log.all() {
		types = append(types, r.Type)
	}
	assert.Equal(t, []runtime.RecordType{
		runtime.RecordRunStart, gateway.RecordMessage, runtime.RecordRequest,
		runtime.RecordCall, runtime.RecordTranscript, runtime.RecordTranscript,
		runtime.RecordCall, runtime.RecordTranscript, runtime.RecordTranscript,
		runtime.RecordRequest, gateway.RecordMessage, runtime.RecordRunEnd,
	}, types)
}

// TestRequestMeasurement checks the sizes against the bytes the server received.
func TestRequestMeasurement(t *testing.T) {
	p := newProvider(t, func(request) reply { return reply{text: "ok"} })
	rt := newRuntime(t, runtime.Config{}, nil)
	gw := newGateway(t, rt, p.URL, &gateway.Options{SystemPrompt: "S"})

	res, err := gw.Turn(context.Background(), gateway.TurnRequest{Run: runtime.RunRequest{
		RunID: "r", Tools: []catalog.Tool{echoTool("a"), echoTool("b")}, UserMessage: "hi",
	}})
	require.NoError(t, err)
	require.Len(t, res.Requests, 1)
	got := res.Requests[0]
	raw := p.body(0)
	var parts struct {
		Messages json.RawMessage `json:"messages"`
		Tools    json.RawMessage `json:"tools"`
	}
	require.NoError(t, json.Unmarshal(raw, &parts))
	assert.Equal(t, raw, []byte(got.Body))
	assert.Equal(t, len(raw), got.Bytes)
	assert.Equal(t, len(parts.Tools), got.ToolBytes)
	assert.Equal(t, len(parts.Messages), got.PromptBytes)
	assert.Equal(t, 2, got.ToolCount)
	assert.Equal(t, []string{"a", "b"}, got.Tools)
	assert.Equal(t, []runtime.RequestStats{got.RequestStats}, res.Telemetry.Requests)
}

func TestNoToolsNoSystemPrompt(t *testing.T) {
	p := newProvider(t, func(request) reply { return reply{text: "ok"} })
	rt := newRuntime(t, runtime.Config{}, nil)
	gw := newGateway(t, rt, p.URL, nil)
	res, err := gw.Turn(context.Background(), gateway.TurnRequest{Run: runtime.RunRequest{RunID: "r", UserMessage: "hi"}})
	require.NoError(t, err)
	raw := string(p.body(0))
	assert.NotContains(t, raw, `"tools"`, "no tools key when nothing is declared")
	assert.NotContains(t, raw, `"system"`)
	assert.Zero(t, res.Requests[0].ToolBytes)
	assert.Zero(t, res.Requests[0].ToolCount)
}

// TestHistory sends the previous turn's messages before the new user message.
func TestHistory(t *testing.T) {
	p := newProvider(t, func(req request) reply { return reply{text: fmt.Sprintf("%d", len(req.Messages))} })
	rt := newRuntime(t, runtime.Config{}, nil)
	gw := newGateway(t, rt, p.URL, nil)
	first, err := gw.Turn(context.Background(), gateway.TurnRequest{Run: runtime.RunRequest{SessionID: "s", UserMessage: "one"}})
	require.NoError(t, err)
	second, err := gw.Turn(context.Background(), gateway.TurnRequest{
		Run: runtime.RunRequest{SessionID: "s", UserMessage: "two"}, History: first.Messages,
	})
	require.NoError(t, err)
	assert.Equal(t, "3", second.Answer)
	msgs := p.requests(t)[1].Messages
	assert.Equal(t, []string{"one", "1", "two"}, []string{msgs[0].Content, msgs[1].Content, msgs[2].Content})
}

func TestMaxRounds(t *testing.T) {
	p := newProvider(t, func(req request) reply {
		return reply{toolCalls: []call{{fmt.Sprintf("c%d", len(req.Messages)), "echo", `{"text":"x"}`}}}
	})
	rt := newRuntime(t, runtime.Config{}, nil)
	gw := newGateway(t, rt, p.URL, &gateway.Options{MaxRounds: 3})
	res, err := gw.Turn(context.Background(), gateway.TurnRequest{Run: runtime.RunRequest{
		RunID: "r", Tools: []catalog.Tool{echoTool("echo")}, UserMessage: "loop",
	}})
	require.ErrorIs(t, err, gateway.ErrMaxRounds)
	assert.Contains(t, err.Error(), "3 rounds")
	require.NotNil(t, res, "a failed turn still reports what happened")
	assert.Len(t, res.Requests, 3)
	assert.EqualValues(t, 3, res.Telemetry.CallCount)
	assert.Empty(t, res.Answer)
}

func TestProviderError(t *testing.T) {
	p := newProvider(t, func(request) reply { return reply{status: http.StatusBadRequest, text: "bad model"} })
	rt := newRuntime(t, runtime.Config{}, nil)
	gw := newGateway(t, rt, p.URL, nil)
	res, err := gw.Turn(context.Background(), gateway.TurnRequest{Run: runtime.RunRequest{RunID: "r", UserMessage: "hi"}})
	var pe *gateway.ProviderError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, http.StatusBadRequest, pe.StatusCode)
	assert.Equal(t, "bad model", pe.Message)
	assert.Equal(t, 1, pe.Round)
	assert.Len(t, res.Requests, 1, "the request that failed was still sent and measured")
}

func TestEmptyAnswer(t *testing.T) {
	p := newProvider(t, func(request) reply { return reply{} })
	rt := newRuntime(t, runtime.Config{}, nil)
	gw := newGateway(t, rt, p.URL, nil)
	_, err := gw.Turn(context.Background(), gateway.TurnRequest{Run: runtime.RunRequest{RunID: "r", UserMessage: "hi"}})
	assert.ErrorIs(t, err, gateway.ErrEmptyAnswer)
}

func TestCancelledTurn(t *testing.T) {
	release := make(chan struct{})
	p := newProvider(t, func(request) reply {
		<-release
		return reply{text: "late"}
	})
	defer close(release)
	rt := newRuntime(t, runtime.Config{}, nil)
	gw := newGateway(t, rt, p.URL, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := gw.Turn(ctx, gateway.TurnRequest{Run: runtime.RunRequest{RunID: "r", UserMessage: "hi"}})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), 5*time.Second)
}

// TestBadArgumentsReachTheModel: arguments that are not JSON are a tool failure the model reads, not a Go error.
func TestBadArgumentsReachTheModel(t *testing.T) {
	p := newProvider(t, func(req request) reply {
		if last := req.Messages[len(req.Messages)-1]; last.Role == "tool" {
			return reply{text: last.Content}
		}
		return reply{toolCalls: []call{{"c1", "echo", `{"text":`}}}
	})
	rt := newRuntime(t, runtime.Config{}, nil)
	gw := newGateway(t, rt, p.URL, nil)
	res, err := gw.Turn(context.Background(), gateway.TurnRequest{Run: runtime.RunRequest{
		RunID: "r", Tools: []catalog.Tool{echoTool("echo")}, UserMessage: "hi",
	}})
	require.NoError(t, err)
	assert.Contains(t, res.Answer, "Invalid arguments")
	require.Len(t, res.Telemetry.Calls, 1)
	assert.True(t, res.Telemetry.Calls[0].IsError)
}

// TestToolsModeHidesCatalog: in tools mode the provider sees the control tools only, and a tool_call reaches the
// hidden tool; its call is projected into the transcript but never sent as a message.
func TestToolsModeHidesCatalog(t *testing.T) {
	p := newProvider(t, func(req request) reply {
		if last := req.Messages[len(req.Messages)-1]; last.Role == "tool" {
			return reply{text: "ok"}
		}
		return reply{toolCalls: []call{{"c1", runtime.ToolCallName, `{"id":"secret_echo","args":{"text":"x"}}`}}}
	})
	rt := newRuntime(t, runtime.Config{Enabled: true, Mode: runtime.ModeTools}, nil)
	gw := newGateway(t, rt, p.URL, nil)
	res, err := gw.Turn(context.Background(), gateway.TurnRequest{Run: runtime.RunRequest{
		RunID: "r", Tools: []catalog.Tool{echoTool("secret_echo")}, UserMessage: "hi",
	}})
	require.NoError(t, err)
	assert.Equal(t, []string{runtime.ToolSearchName, runtime.ToolDescribeName, runtime.ToolCallName}, res.Requests[0].Tools)
	for i := range res.Requests {
		assert.NotContains(t, string(p.body(i)), `"name":"secret_echo"`)
	}
	require.Len(t, res.Transcript, 4, "the tool_call pair, then the hidden call's pair")
	hidden := res.Transcript[2]
	assert.Equal(t, "tool_search_code:c1:secret_echo:1", hidden.CallID)
	assert.Equal(t, "c1", hidden.ParentCallID)
	assert.True(t, strings.HasPrefix(res.Transcript[3].Content, "echo "))
}

// TestConcurrentTurns runs turns of different sessions at once (go test -race).
func TestConcurrentTurns(t *testing.T) {
	p := newProvider(t, func(req request) reply {
		if last := req.Messages[len(req.Messages)-1]; last.Role == "tool" {
			return reply{text: last.Content}
		}
		return reply{toolCalls: []call{{"c1", "echo", fmt.Sprintf(`{"text":%q}`, req.Messages[len(req.Messages)-1].Content)}}}
	})
	rt := newRuntime(t, runtime.Config{}, nil)
	gw := newGateway(t, rt, p.URL, nil)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Go(func() {
			msg := fmt.Sprintf("m%d", i)
			res, err := gw.Turn(context.Background(), gateway.TurnRequest{Run: runtime.RunRequest{
				SessionID: msg, Tools: []catalog.Tool{echoTool("echo")}, UserMessage: msg,
			}})
			if err == nil && res.Answer != fmt.Sprintf(`echo {"text":%q}`, msg) {
				err = errors.New("turn " + msg + " got " + res.Answer)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		assert.NoError(t, err)
	}
}

func TestStartRunError(t *testing.T) {
	p := newProvider(t, func(request) reply { return reply{text: "ok"} })
	rt := newRuntime(t, runtime.Config{}, nil)
	gw := newGateway(t, rt, p.URL, nil)
	_, err := gw.Turn(context.Background(), gateway.TurnRequest{Run: runtime.RunRequest{UserMessage: "hi"}})
	assert.ErrorIs(t, err, catalog.ErrNoScope)
	assert.Empty(t, p.requests(t), "nothing is sent when the run cannot start")
}

// TestMissingCallIDs: a server that omits tool call ids still gets results it can match, in order.
func TestMissingCallIDs(t *testing.T) {
	p := newProvider(t, func(req request) reply {
		if last := req.Messages[len(req.Messages)-1]; last.Role == "tool" {
			return reply{text: last.ToolCallID}
		}
		return reply{toolCalls: []call{{"", "echo", `{"text":"a"}`}, {"", "echo", `{"text":"b"}`}}}
	})
	rt := newRuntime(t, runtime.Config{}, nil)
	gw := newGateway(t, rt, p.URL, nil)
	res, err := gw.Turn(context.Background(), gateway.TurnRequest{Run: runtime.RunRequest{
		RunID: "r", Tools: []catalog.Tool{echoTool("echo")}, UserMessage: "hi",
	}})
	require.NoError(t, err)
	assert.Equal(t, "call_1_2", res.Answer)
	assert.Equal(t, "call_1_1", res.Messages[1].ToolCalls[0].ID)
}
