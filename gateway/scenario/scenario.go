// Package scenario is the end-to-end proof that Tool Search works and pays off, as reusable code: a fake plugin with
// a large catalog, the scripted provider of package mockprovider, and the gateway run once per Tool Search mode and
// catalog size. The scenario test and `toolsearch demo` both run it.
//
// Each run is one gateway turn in a fresh runtime session. Its Result holds the evidence read from three
// independent places: the requests as the provider received them, the run's telemetry, and the session log
// read back from its JSON Lines. Nothing is inferred from text mentions.
package scenario

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/gateway"
	"github.com/toolsearch/toolsearch/gateway/mockprovider"
	"github.com/toolsearch/toolsearch/hostfns"
	"github.com/toolsearch/toolsearch/runtime"
)

const (
	// Target is the fake tool every run must end up calling.
	Target = "fake_plugin_tool_17"
	// PluginName is the fake plugin's source name: its tools' ids are openclaw:fake-plugin:<name>.
	PluginName = "fake-plugin"
	// StatusTool is a direct-only core tool: it stays declared in every mode, which the scenario checks.
	StatusTool = "session_status"
	// UserMessage is what the user asks. It matches no tool on purpose: directory mode ranks the catalog
	// against it and exposes the best matches' schemas for the turn, and the scenario checks that Tool Search
	// modes declare control and direct-only tools only. The scripted model knows its target without being told.
	UserMessage = "Run the smoke test and report what happened."
	// SystemPrompt opens every request.
	SystemPrompt = "You are the agent of an end-to-end check. Use the declared tools to do what the user asks."
	// Model is the model name sent to the mock provider.
	Model = "mock-model"
)

// DefaultSizes are the catalog sizes the scenario runs at.
func DefaultSizes() []int { return []int{36, 500} }

// Modes are the modes the scenario runs in, Tool Search off first: the other modes compare against it.
func Modes() []runtime.Mode {
	return []runtime.Mode{runtime.ModeOff, runtime.ModeCode, runtime.ModeTools, runtime.ModeDirectory}
}

// ToolName is the name of the i-th fake tool, from 1: fake_plugin_tool_01, ..., fake_plugin_tool_500.
func ToolName(i int) string { return fmt.Sprintf("fake_plugin_tool_%02d", i) }

const markerSchema = `{"type":"object","properties":{"marker":{"type":"string",` +
	`"description":"Marker string chosen by the caller; echoed back verbatim in the result so the caller can ` +
	`match the answer to its request."}},"required":["marker"],"additionalProperties":false}`

// FakePlugin returns n plugin tools with long descriptions and one required string, marker. Each handler answers
// "FAKE_PLUGIN_OK <name> <input JSON>" with details {status: "ok", tool, input}.
func FakePlugin(n int) []catalog.Tool {
	tools := make([]catalog.Tool, n)
	for i := range tools {
		name := ToolName(i + 1)
		tools[i] = catalog.Tool{
			Source:     catalog.SourceOpenClaw,
			SourceName: PluginName,
			Name:       name,
			Description: fmt.Sprintf("Fake plugin tool number %d of a deliberately large plugin catalog. It stands "+
				"in for a real plugin capability so the gateway end-to-end scenario can measure what declaring "+
				"every schema up front costs, and prove that Tool Search still reaches the tool. Call it with a "+
				"marker string; it answers with that marker and its own name.", i+1),
			Parameters: json.RawMessage(markerSchema),
			Handler:    fakeHandler(name),
		}
	}
	return tools
}

func fakeHandler(name string) catalog.HandlerFunc {
	return func(_ context.Context, args json.RawMessage) (*catalog.Result, error) {
		input := json.RawMessage(bytes.TrimSpace(args))
		if len(input) == 0 {
			input = json.RawMessage("{}")
		}
		details, err := json.Marshal(struct {
			Status string          `json:"status"`
			Tool   string          `json:"tool"`
			Input  json.RawMessage `json:"input"`
		}{"ok", name, input})
		if err != nil {
			return nil, err
		}
		return &catalog.Result{
			Content: []catalog.Content{{Type: "text", Text: mockprovider.ResultMarker + " " + name + " " + string(input)}},
			Details: details,
		}, nil
	}
}

// statusTool is the direct-only tool of every run.
func statusTool() catalog.Tool {
	return catalog.Tool{
		Source: catalog.SourceOpenClaw, SourceName: "core", Name: StatusTool,
		Description: "Show the status of the current session.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`),
		CatalogMode: catalog.CatalogModeDirectOnly,
		Handler: catalog.HandlerFunc(func(context.Context, json.RawMessage) (*catalog.Result, error) {
			return &catalog.Result{Content: []catalog.Content{{Type: "text", Text: "ok"}}}, nil
		}),
	}
}

// Options configure Run. A nil *Options runs every mode at DefaultSizes with an in-memory session log.
type Options struct {
	// Sizes are the catalog sizes; nil means DefaultSizes. Each must be at least 17, so the target exists.
	Sizes []int
	// Modes are the modes to run, in order; nil means Modes(). Savings are reported against ModeOff when it is
	// among them.
	Modes []runtime.Mode
	// Sandbox runs tool_search_code; nil means Run creates one when code mode is asked for, and closes it.
	Sandbox *hostfns.Sandbox
	// SessionLogDir keeps the session logs as JSON Lines files in this directory (one per run); "" keeps them
	// in memory, still serialized as JSON Lines and read back.
	SessionLogDir string
	// Logger receives the runtime's and the gateway's logs; nil discards.
	Logger *slog.Logger
}

// Result is the evidence of one run: one mode at one catalog size.
type Result struct {
	Mode          runtime.Mode // the mode asked for
	EffectiveMode runtime.Mode // the mode the run had (code falls back to tools when the sandbox cannot start)
	Tools         int          // fake plugin tools in the run
	SessionID     string

	// Answer is the model's final text; Err is why the turn failed, or "".
	Answer string
	Err    string

	// Provider is every request as the mock provider received it, with what it answered.
	Provider []mockprovider.Request
	// Turn is the gateway's account of the turn: messages, transcript (with the projected hidden calls) and
	// the requests as measured when they left.
	Turn *gateway.TurnResult
	// Telemetry is the run's telemetry.
	Telemetry runtime.Telemetry
	// SessionLog is the run's session log, read back; Summary is runtime.Summarize of it.
	SessionLog     []runtime.Record
	Summary        runtime.SessionSummary
	SessionLogPath string // with Options.SessionLogDir

	// Figures of the last provider request (the largest of the turn).
	DeclaredTools int
	RequestBytes  int
	ToolBytes     int
	PromptBytes   int
	// TotalRequestBytes adds up every request of the turn.
	TotalRequestBytes int

	// CalledTarget: the target ran and succeeded (a call record in the session log). TargetCalledDirectly: the
	// model itself called the target as a declared tool. TargetDeclared: its schema was sent to the provider.
	CalledTarget         bool
	TargetCalledDirectly bool
	TargetDeclared       bool
	// PlannedTools are the tools the model called, one per provider answer that called one.
	PlannedTools []string
	// SearchCount, DescribeCount and CallCount are read from the session log.
	SearchCount, DescribeCount, CallCount int
	// BridgedCallID is the hidden call id of the target's call when it went through a control tool
	// (tool_search_code:<parentCallId>:<toolName>:<n>), and BridgedVia how (code or tool_call).
	BridgedCallID string
	BridgedVia    runtime.Via
}

// Run runs the scenario in every mode at every size, and returns the results size by size, in the order of
// Options.Sizes and then Options.Modes. A turn that fails is reported in its Result (Err); the
// error is for what stops the scenario itself: a runtime or sandbox that cannot be created, a cancelled ctx.
func Run(ctx context.Context, opts *Options) ([]Result, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Sizes == nil {
		o.Sizes = DefaultSizes()
	}
	if o.Modes == nil {
		o.Modes = Modes()
	}
	for _, n := range o.Sizes {
		if n < 17 {
			return nil, fmt.Errorf("scenario: a catalog of %d tools has no %s", n, Target)
		}
	}
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}

	var store logStore
	if o.SessionLogDir != "" {
		dir, err := runtime.NewSessionLogDir(o.SessionLogDir)
		if err != nil {
			return nil, err
		}
		store = fileStore{dir}
	} else {
		store = &memoryStore{files: make(map[string]*bytes.Buffer)}
	}

	sb := o.Sandbox
	for _, m := range o.Modes {
		if m == runtime.ModeCode && sb == nil {
			var err error
			if sb, err = hostfns.New(ctx, nil); err != nil {
				return nil, fmt.Errorf("scenario: %w", err)
			}
			defer func() {
				closeCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				_ = sb.Close(closeCtx)
			}()
			break
		}
	}

	var results []Result
	for _, mode := range o.Modes {
		rtOpts := &runtime.Options{
			Config:     runtime.Config{Enabled: mode != runtime.ModeOff, Mode: mode},
			Logger:     logger,
			SessionLog: store,
		}
		if mode == runtime.ModeCode {
			rtOpts.Sandbox = sb
		}
		rt, err := runtime.New(ctx, rtOpts)
		if err != nil {
			return results, fmt.Errorf("scenario: %s mode: %w", mode, err)
		}
		for _, n := range o.Sizes {
			res, err := runOne(ctx, rt, store, mode, n, logger)
			if err != nil {
				_ = rt.Close(context.Background())
				return results, err
			}
			results = append(results, res)
		}
		if err := rt.Close(ctx); err != nil {
			return results, err
		}
	}
	// Runs went mode by mode (one runtime each); they are reported size by size, as they are compared.
	slices.SortStableFunc(results, func(a, b Result) int {
		return slices.Index(o.Sizes, a.Tools) - slices.Index(o.Sizes, b.Tools)
	})
	return results, nil
}

func runOne(ctx context.Context, rt *runtime.Runtime, store logStore, mode runtime.Mode, n int, logger *slog.Logger) (Result, error) {
	mock := mockprovider.New(Target, nil)
	defer mock.Close()
	gw, err := gateway.New(rt, &gateway.Options{
		BaseURL:      mock.URL(),
		Model:        Model,
		Getenv:       func(string) string { return "" },
		SystemPrompt: SystemPrompt,
		MaxRounds:    6,
		Logger:       logger,
	})
	if err != nil {
		return Result{}, err
	}
	res := Result{Mode: mode, EffectiveMode: rt.Mode(), Tools: n, SessionID: fmt.Sprintf("scenario-%s-%d", mode, n)}
	turn, err := gw.Turn(ctx, gateway.TurnRequest{Run: runtime.RunRequest{
		SessionID:   res.SessionID,
		RunID:       res.SessionID + "-turn-1",
		AgentID:     "scenario",
		Tools:       append(FakePlugin(n), statusTool()),
		UserMessage: UserMessage,
	}})
	if err != nil {
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		res.Err = err.Error()
	}
	res.Turn = turn
	if turn != nil {
		res.Answer, res.Telemetry, res.EffectiveMode = turn.Answer, turn.Telemetry, turn.Mode
	}
	res.Provider = mock.Requests()

	records, path, err := store.read(res.SessionID)
	if err != nil {
		return res, fmt.Errorf("scenario: reading the session log of %s: %w", res.SessionID, err)
	}
	res.SessionLog, res.SessionLogPath, res.Summary = records, path, runtime.Summarize(records)
	res.fill()
	return res, nil
}

// fill derives the figures from the evidence.
func (r *Result) fill() {
	for _, req := range r.Provider {
		r.TotalRequestBytes += len(req.Raw)
		if req.Reply.Tool != "" {
			r.PlannedTools = append(r.PlannedTools, req.Reply.Tool)
		}
		if req.Reply.Tool == Target {
			r.TargetCalledDirectly = true
		}
		for _, t := range req.Tools {
			if t == Target {
				r.TargetDeclared = true
			}
		}
	}
	if len(r.Provider) > 0 {
		last := r.Provider[len(r.Provider)-1]
		r.DeclaredTools, r.RequestBytes, r.ToolBytes = len(last.Tools), len(last.Raw), last.ToolBytes
	}
	if r.Turn != nil && len(r.Turn.Requests) > 0 {
		r.PromptBytes = r.Turn.Requests[len(r.Turn.Requests)-1].PromptBytes
	}
	r.SearchCount, r.DescribeCount, r.CallCount = r.Summary.Searches, r.Summary.Describes, len(r.Summary.Calls)
	for _, c := range r.Summary.Calls {
		if c.Name != Target || c.IsError {
			continue
		}
		r.CalledTarget = true
		if c.ParentCallID != "" {
			r.BridgedCallID, r.BridgedVia = c.CallID, c.Via
		}
	}
}

// logStore is a session logger whose records can be read back by session.
type logStore interface {
	runtime.SessionLogger
	read(key string) (records []runtime.Record, path string, err error)
}

type fileStore struct{ dir *runtime.SessionLogDir }

func (f fileStore) WriteRecords(key string, records []runtime.Record) error {
	return f.dir.WriteRecords(key, records)
}

func (f fileStore) read(key string) ([]runtime.Record, string, error) {
	path := f.dir.Path(key)
	records, err := runtime.ReadSessionLog(path)
	return records, path, err
}

// memoryStore keeps JSON Lines in memory, so the demo writes no files and still reads back what was serialized.
type memoryStore struct {
	mu    sync.Mutex
	files map[string]*bytes.Buffer
}

func (m *memoryStore) WriteRecords(key string, records []runtime.Record) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	buf := m.files[key]
	if buf == nil {
		buf = &bytes.Buffer{}
		m.files[key] = buf
	}
	enc := json.NewEncoder(buf)
	for _, rec := range records {
		if err := enc.Encode(rec); err != nil {
			return err
		}
	}
	return nil
}

func (m *memoryStore) read(key string) ([]runtime.Record, string, error) {
	m.mu.Lock()
	buf, ok := m.files[key]
	var data []byte
	if ok {
		data = append(data, buf.Bytes()...)
	}
	m.mu.Unlock()
	if !ok {
		return nil, "", os.ErrNotExist
	}
	var out []runtime.Record
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		var rec runtime.Record
		err := dec.Decode(&rec)
		if errors.Is(err, io.EOF) {
			return out, "", nil
		}
		if err != nil {
			return out, "", err
		}
		out = append(out, rec)
	}
}

// Savings is how many bytes the last request of r saved against the same size run with Tool Search off, and the
// fraction of the off request that is; ok is false when results holds no such run.
func Savings(results []Result, r Result) (saved int, fraction float64, ok bool) {
	for _, off := range results {
		if off.Mode == runtime.ModeOff && off.Tools == r.Tools && off.RequestBytes > 0 {
			saved = off.RequestBytes - r.RequestBytes
			return saved, float64(saved) / float64(off.RequestBytes), true
		}
	}
	return 0, 0, false
}
