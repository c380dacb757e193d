package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/toolsearch/toolsearch/runtime"
)

// Defaults of Options.
const (
	DefaultBaseURL        = "https://api.openai.com/v1"
	DefaultMaxRounds      = 16
	DefaultRequestTimeout = 2 * time.Minute
)

// Environment variables read (through Options.Getenv) for the provider settings left empty.
const (
	EnvBaseURL = "OPENAI_BASE_URL"
	EnvAPIKey  = "OPENAI_API_KEY"
	EnvModel   = "TOOLSEARCH_MODEL"
)

// RecordMessage is the session log record type of a user message or an assistant answer; its Data is a Message.
const RecordMessage runtime.RecordType = "message"

var (
	// ErrNoModel is returned by New when neither Options.Model nor TOOLSEARCH_MODEL names a model.
	ErrNoModel = errors.New("gateway: no model: set Options.Model or " + EnvModel)
	// ErrMaxRounds is returned by Turn when the model still calls tools after Options.MaxRounds requests.
	ErrMaxRounds = errors.New("gateway: the model did not answer with text")
	// ErrEmptyAnswer is returned by Turn when the provider answers with neither text nor tool calls.
	ErrEmptyAnswer = errors.New("gateway: the provider returned no message")
)

// ProviderError is a failed provider request: an HTTP status with the provider's message, or a transport
// failure (StatusCode 0).
type ProviderError struct {
	Round      int // the request of the turn that failed, from 1
	StatusCode int
	Message    string
	err        error
}

func (e *ProviderError) Error() string {
	if e.StatusCode != 0 {
		return fmt.Sprintf("gateway: provider request %d failed with HTTP %d: %s", e.Round, e.StatusCode, e.Message)
	}
	return fmt.Sprintf("gateway: provider request %d failed: %s", e.Round, e.Message)
}

// Unwrap returns the underlying error (a context error when the turn was cancelled).
func (e *ProviderError) Unwrap() error { return e.err }

// Options configure New. A nil *Options is the zero value: the provider comes from the environment and every
// other field takes its default.
type Options struct {
	// BaseURL is the OpenAI-compatible API root, e.g. "http://localhost:11434/v1". "" reads OPENAI_BASE_URL,
	// then uses DefaultBaseURL.
	BaseURL string
	// APIKey is sent as a bearer token. "" reads OPENAI_API_KEY; local servers usually need none.
	APIKey string
	// Model is required, from here or from TOOLSEARCH_MODEL.
	Model string
	// Getenv reads the environment variables above; nil means os.Getenv. Pass a function returning "" to
	// ignore the environment.
	Getenv func(string) string
	// SystemPrompt opens every request's system message; the run's tool directory (directory mode) follows it.
	// "" with no directory sends no system message.
	SystemPrompt string
	// MaxRounds bounds the provider requests of one turn; 0 means DefaultMaxRounds.
	MaxRounds int
	// HTTPClient sends the requests; nil means a new http.Client. Its transport sees the final bytes.
	HTTPClient *http.Client
	// RequestTimeout bounds each attempt of a provider request; 0 means DefaultRequestTimeout.
	RequestTimeout time.Duration
	// Logger receives one line per provider request; nil discards.
	Logger *slog.Logger
}

// Gateway runs agent turns against one provider and model, with Tool Search from one runtime. It is safe for
// concurrent use.
type Gateway struct {
	rt        *runtime.Runtime
	chat      openai.ChatCompletionService
	baseURL   string
	model     string
	system    string
	maxRounds int
	log       *slog.Logger
}

// New builds a gateway over rt. It fails when rt is nil or no model is configured; it does not contact the
// provider.
func New(rt *runtime.Runtime, opts *Options) (*Gateway, error) {
	if rt == nil {
		return nil, errors.New("gateway: New needs a runtime")
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	pick := func(v, env, def string) string {
		if v = strings.TrimSpace(v); v != "" {
			return v
		}
		if v = strings.TrimSpace(getenv(env)); v != "" {
			return v
		}
		return def
	}
	g := &Gateway{
		rt:        rt,
		baseURL:   pick(o.BaseURL, EnvBaseURL, DefaultBaseURL),
		model:     pick(o.Model, EnvModel, ""),
		system:    o.SystemPrompt,
		maxRounds: o.MaxRounds,
		log:       o.Logger,
	}
	if g.model == "" {
		return nil, ErrNoModel
	}
	if g.maxRounds <= 0 {
		g.maxRounds = DefaultMaxRounds
	}
	if g.log == nil {
		g.log = slog.New(slog.DiscardHandler)
	}
	client := o.HTTPClient
	if client == nil {
		client = &http.Client{}
	}
	timeout := o.RequestTimeout
	if timeout <= 0 {
		timeout = DefaultRequestTimeout
	}
	// The service is built without openai.NewClient so that nothing but what we pass here (in particular no
	// other OPENAI_* variable) shapes the requests.
	g.chat = openai.NewChatCompletionService(
		option.WithBaseURL(g.baseURL),
		option.WithAPIKey(pick(o.APIKey, EnvAPIKey, "")),
		option.WithHTTPClient(client),
		option.WithRequestTimeout(timeout),
		option.WithMiddleware(captureBody),
	)
	return g, nil
}

// Model is the model the gateway asks.
func (g *Gateway) Model() string { return g.model }

// BaseURL is the provider's API root.
func (g *Gateway) BaseURL() string { return g.baseURL }

// Runtime is the runtime the gateway runs tools with.
func (g *Gateway) Runtime() *runtime.Runtime { return g.rt }

// Roles of Message.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Message is one message of a conversation as the provider sees it. Assistant messages carry the tool calls the
// model made; tool messages answer one call (ToolCallID) with the text the model reads.
type Message struct {
	Role       string             `json:"role"`
	Content    string             `json:"content,omitempty"`
	ToolCalls  []runtime.ToolCall `json:"toolCalls,omitempty"`
	ToolCallID string             `json:"toolCallId,omitempty"`
}

// TurnRequest is one user message and what the turn may use.
type TurnRequest struct {
	// Run is the runtime run of the turn: its scope (SessionID, RunID, AgentID), its tools, its policy, and the
	// user message (Run.UserMessage), which is both sent to the model and used to rank directory mode's likely
	// tools. Client tools run through their Handler: this loop has no client to hand calls back to.
	Run runtime.RunRequest
	// History are earlier messages of the conversation (TurnResult.Messages of earlier turns), without the
	// system prompt, which the gateway adds.
	History []Message
}

// Request is one provider request of a turn, measured on the bytes that were sent.
type Request struct {
	runtime.RequestStats
	// Tools are the names of the tools the request declared, in order.
	Tools []string `json:"tools"`
	// Body is the serialized request exactly as it was sent (the last attempt, when the client retried).
	Body json.RawMessage `json:"-"`
	// Duration is the time from sending the request to decoding the answer.
	Duration time.Duration `json:"durationNs"`
}

// TurnResult is what a turn did. Turn returns it also when the turn fails after its run started, with what
// happened up to the failure.
type TurnResult struct {
	// Answer is the model's final text.
	Answer string
	// Mode is the Tool Search mode the run had.
	Mode runtime.Mode
	// Messages are the turn's messages in order — the user message, each assistant message with its tool calls
	// and the tool results, the final answer — to append to the history of the next turn.
	Messages []Message
	// Transcript has every executed call and its result and, right after a control tool's result, the calls it
	// made as their own call/result pairs (runtime.Project). Only Messages went to the provider.
	Transcript []runtime.TranscriptEntry
	// Requests are the provider requests of the turn, in order.
	Requests []Request
	// Telemetry is the run's telemetry when the turn ended.
	Telemetry runtime.Telemetry
}

// Turn runs one agent turn: it starts a run with req.Run, asks the model, executes its tool calls through the
// run, and repeats until the model answers with text. The run is closed (and its session log flushed) before
// Turn returns. Errors: those of StartRun; *ProviderError for a failed request; ErrMaxRounds; ErrEmptyAnswer;
// the context's error. A tool that fails is not an error: the model reads the failure and decides.
func (g *Gateway) Turn(ctx context.Context, req TurnRequest) (res *TurnResult, err error) {
	run, err := g.rt.StartRun(ctx, req.Run)
	if err != nil {
		return nil, err
	}
	res = &TurnResult{Mode: run.Mode()}
	defer func() {
		res.Telemetry = run.Telemetry()
		if cerr := run.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}()

	defs := run.Tools()
	tools, err := toolParams(defs)
	if err != nil {
		return res, err
	}
	system := joinPrompt(g.system, run.SystemPromptSection())
	user := Message{Role: RoleUser, Content: req.Run.UserMessage}
	res.Messages = append(res.Messages, user)
	g.logMessage(run, user)

	for round := 1; round <= g.maxRounds; round++ {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		history := make([]Message, 0, len(req.History)+len(res.Messages))
		history = append(append(history, req.History...), res.Messages...)
		answer, sent, err := g.send(ctx, round, system, history, tools)
		if sent != nil {
			res.Requests = append(res.Requests, *sent)
			run.RecordRequest(sent.RequestStats)
		}
		if err != nil {
			return res, err
		}
		res.Messages = append(res.Messages, answer)
		if len(answer.ToolCalls) == 0 {
			if answer.Content == "" {
				return res, ErrEmptyAnswer
			}
			res.Answer = answer.Content
			g.logMessage(run, answer)
			return res, nil
		}
		for _, call := range answer.ToolCalls {
			out, err := run.Execute(ctx, call)
			if err != nil {
				return res, err
			}
			res.Transcript = append(res.Transcript, runtime.Project(call, out)...)
			res.Messages = append(res.Messages, Message{Role: RoleTool, Content: out.Content, ToolCallID: call.ID})
		}
	}
	return res, fmt.Errorf("%w within %d rounds (Options.MaxRounds)", ErrMaxRounds, g.maxRounds)
}

func (g *Gateway) logMessage(run *runtime.Run, m Message) {
	if err := run.Log(RecordMessage, m); err != nil {
		g.log.Warn("gateway: session log", "error", err)
	}
}

func joinPrompt(parts ...string) string {
	var kept []string
	for _, p := range parts {
		if strings.TrimSpace(p) != "" {
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, "\n\n")
}
