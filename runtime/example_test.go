package runtime_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/runtime"
)

// Example shows a gateway embedding Tool Search: build the runtime from config, start a run per turn with the
// turn's tools, send the model what Tools and SystemPromptSection return, and hand every tool call to Execute.
func Example() {
	ctx := context.Background()
	cfg, _ := runtime.ParseConfig(json.RawMessage(`{"mode": "tools"}`)) // the value of tools.toolSearch
	rt, _ := runtime.New(ctx, &runtime.Options{Config: cfg})
	defer rt.Close(ctx)

	weather := catalog.Tool{
		Source: catalog.SourceOpenClaw, SourceName: "core", Name: "weather",
		Description: "Current weather for a city.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`),
		Handler: catalog.HandlerFunc(func(ctx context.Context, args json.RawMessage) (*catalog.Result, error) {
			return &catalog.Result{Details: json.RawMessage(`{"tempC":21}`)}, nil
		}),
	}
	run, _ := rt.StartRun(ctx, runtime.RunRequest{SessionID: "s1", RunID: "turn-1", Tools: []catalog.Tool{weather}})
	defer run.Close()

	for _, def := range run.Tools() { // what the provider request declares
		fmt.Println("declared:", def.Function.Name)
	}
	res, _ := run.Execute(ctx, runtime.ToolCall{ID: "call_1", Name: "tool_call",
		Arguments: json.RawMessage(`{"id": "weather", "args": {"city": "Paris"}}`)})
	fmt.Println("called:", res.Hidden[0].ID, string(res.Hidden[0].Result.Details))
	fmt.Println("calls:", run.Telemetry().CallCount)
	// Output:
	// declared: tool_search
	// declared: tool_describe
	// declared: tool_call
	// called: tool_search_code:call_1:weather:1 {"tempC":21}
	// calls: 1
}

// ExampleParseConfig resolves tools.toolSearch with its defaults and clamps.
func ExampleParseConfig() {
	cfg, err := runtime.ParseConfig(json.RawMessage(`{"mode": "directory", "maxSearchLimit": 500}`))
	fmt.Println(cfg.Enabled, cfg.Mode, cfg.MaxSearchLimit, cfg.SearchDefaultLimit, cfg.CodeTimeoutMs, err)
	_, err = runtime.ParseConfig(json.RawMessage(`{"codeTimeoutMs": -1}`))
	fmt.Println(err)
	// Output:
	// true directory 50 8 10000 <nil>
	// tools.toolSearch: codeTimeoutMs must be a positive integer from 1000 to 60000 (ms), for example 10000 (got -1)
}
