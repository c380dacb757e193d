package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/toolsearch/toolsearch/runtime"
)

// captureKey carries a *capture in a request's context, from send to the middleware.
type captureKey struct{}

// capture receives the body of the request sent under its context.
type capture struct{ body []byte }

// captureBody is the middleware that reads the serialized request on its way out: the only place where the bytes
// the provider receives exist. It runs once per attempt, so a retried request is captured as last sent.
func captureBody(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	c, ok := req.Context().Value(captureKey{}).(*capture)
	if !ok || req.Body == nil || req.Body == http.NoBody {
		return next(req)
	}
	body, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, err
	}
	c.body = body
	req.Body = io.NopCloser(bytes.NewReader(body))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	req.ContentLength = int64(len(body))
	return next(req)
}

// send makes one provider request and returns the assistant message. sent is set whenever a body went out,
// also when the request then failed.
func (g *Gateway) send(ctx context.Context, round int, system string, history []Message, tools []openai.ChatCompletionToolUnionParam) (answer Message, sent *Request, err error) {
	params := openai.ChatCompletionNewParams{Model: shared.ChatModel(g.model), Tools: tools}
	if system != "" {
		params.Messages = append(params.Messages, openai.SystemMessage(system))
	}
	for _, m := range history {
		p, err := messageParam(m)
		if err != nil {
			return Message{}, nil, err
		}
		params.Messages = append(params.Messages, p)
	}

	c := &capture{}
	start := time.Now()
	completion, err := g.chat.New(context.WithValue(ctx, captureKey{}, c), params)
	if c.body != nil {
		r, merr := measure(c.body)
		if merr != nil {
			return Message{}, nil, fmt.Errorf("gateway: measuring request %d: %w", round, merr)
		}
		r.Duration = time.Since(start)
		sent = &r
		g.log.Info("gateway: provider request", "round", round, "bytes", r.Bytes, "toolBytes", r.ToolBytes,
			"promptBytes", r.PromptBytes, "tools", r.ToolCount, "duration", r.Duration)
	}
	if err != nil {
		return Message{}, sent, providerError(round, err)
	}
	if len(completion.Choices) == 0 {
		return Message{}, sent, ErrEmptyAnswer
	}
	msg := completion.Choices[0].Message
	answer = Message{Role: RoleAssistant, Content: msg.Content}
	if answer.Content == "" && msg.Refusal != "" {
		answer.Content = msg.Refusal
	}
	for i, tc := range msg.ToolCalls {
		if tc.Type != "" && tc.Type != "function" {
			continue // custom (free-form) tools are never declared by this gateway
		}
		id := tc.ID
		if id == "" {
			// Some OpenAI-compatible servers omit ids; results and hidden calls need one to refer to.
			id = fmt.Sprintf("call_%d_%d", round, i+1)
		}
		answer.ToolCalls = append(answer.ToolCalls, runtime.ToolCall{
			ID: id, Name: tc.Function.Name, Arguments: rawArguments(tc.Function.Arguments),
		})
	}
	return answer, sent, nil
}

// rawArguments keeps the model's arguments as it wrote them. Text that is not JSON is passed on as a JSON
// string, so the runtime reports the bad arguments to the model instead of the request failing here.
func rawArguments(s string) json.RawMessage {
	if s == "" {
		return nil
	}
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	b, _ := json.Marshal(s)
	return b
}

func providerError(round int, err error) error {
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		msg := apiErr.Message
		if msg == "" {
			msg = http.StatusText(apiErr.StatusCode)
		}
		return &ProviderError{Round: round, StatusCode: apiErr.StatusCode, Message: msg, err: err}
	}
	return &ProviderError{Round: round, Message: err.Error(), err: err}
}

// measure reads the sizes of a serialized Chat Completions request.
func measure(body []byte) (Request, error) {
	var parts struct {
		Messages json.RawMessage `json:"messages"`
		Tools    json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(body, &parts); err != nil {
		return Request{}, err
	}
	var tools []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if len(parts.Tools) > 0 {
		if err := json.Unmarshal(parts.Tools, &tools); err != nil {
			return Request{}, err
		}
	}
	r := Request{
		RequestStats: runtime.RequestStats{
			Bytes:       len(body),
			ToolBytes:   len(parts.Tools),
			PromptBytes: len(parts.Messages),
			ToolCount:   len(tools),
		},
		Tools: make([]string, len(tools)),
		Body:  append(json.RawMessage(nil), body...),
	}
	for i, t := range tools {
		r.Tools[i] = t.Function.Name
	}
	return r, nil
}

// toolParams converts the run's tool definitions once per turn. Each schema's members are kept as raw JSON so
// that what the runtime rendered is what the provider gets, byte for byte below the top level.
func toolParams(defs []runtime.ToolDefinition) ([]openai.ChatCompletionToolUnionParam, error) {
	if len(defs) == 0 {
		return nil, nil // OpenAI refuses "tools": []
	}
	out := make([]openai.ChatCompletionToolUnionParam, 0, len(defs))
	for _, d := range defs {
		var members map[string]json.RawMessage
		if err := json.Unmarshal(d.Function.Parameters, &members); err != nil {
			return nil, fmt.Errorf("gateway: tool %s: parameters are not a JSON object: %w", d.Function.Name, err)
		}
		params := make(shared.FunctionParameters, len(members))
		for k, v := range members {
			params[k] = v
		}
		fn := shared.FunctionDefinitionParam{Name: d.Function.Name, Parameters: params}
		if d.Function.Description != "" {
			fn.Description = openai.String(d.Function.Description)
		}
		out = append(out, openai.ChatCompletionFunctionTool(fn))
	}
	return out, nil
}

func messageParam(m Message) (openai.ChatCompletionMessageParamUnion, error) {
	switch m.Role {
	case RoleSystem:
		return openai.SystemMessage(m.Content), nil
	case RoleUser:
		return openai.UserMessage(m.Content), nil
	case RoleTool:
		return openai.ToolMessage(m.Content, m.ToolCallID), nil
	case RoleAssistant:
		var a openai.ChatCompletionAssistantMessageParam
		if m.Content != "" || len(m.ToolCalls) == 0 {
			a.Content.OfString = openai.String(m.Content)
		}
		for _, c := range m.ToolCalls {
			args := string(c.Arguments)
			if args == "" {
				args = "{}"
			}
			a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
					ID:       c.ID,
					Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.Name, Arguments: args},
				},
			})
		}
		return openai.ChatCompletionMessageParamUnion{OfAssistant: &a}, nil
	}
	return openai.ChatCompletionMessageParamUnion{}, fmt.Errorf("gateway: message with unknown role %q", m.Role)
}
