package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/config"
	"github.com/toolsearch/toolsearch/gateway"
	"github.com/toolsearch/toolsearch/gateway/mockprovider"
	"github.com/toolsearch/toolsearch/mcp/upstream"
	"github.com/toolsearch/toolsearch/runtime"
)

// Example_library embeds Tool Search in an agent with one MCP server and one Go tool of its own. README's
// library section shows it condensed, with npx's memory server where this example starts the test binary
// playing a mail server (see upstreamEnv), and a scripted model that calls the MCP tool by its id.
func Example_library() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "library-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "config.json5")
	if err := os.WriteFile(path, fmt.Appendf(nil, `{mcpServers: {
		mail: {command: %q, args: ["-test.run=^$"], env: {%s: "mail"}},
	}}`, os.Args[0], upstreamEnv), 0o600); err != nil {
		log.Fatal(err)
	}
	cfg, err := config.Load(ctx, path) // what `toolsearch mcp serve --config path` serves
	if err != nil {
		log.Fatal(err)
	}
	src, err := upstream.New(ctx, cfg.Servers, nil) // starts the servers; returns once each is ready or has failed
	if err != nil {
		log.Fatal(err)
	}
	defer src.Close(ctx)

	// A tool of this program, with a Go handler.
	lookupOrder := catalog.Tool{
		Source: catalog.SourceProgram, SourceName: "shop", Name: "lookup_order",
		Description: "Look up an order by its number.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"number":{"type":"string"}},"required":["number"]}`),
		Handler: catalog.HandlerFunc(func(_ context.Context, args json.RawMessage) (*catalog.Result, error) {
			return &catalog.Result{Content: []catalog.Content{{Type: "text", Text: "shipped"}}}, nil
		}),
	}

	provider := mockprovider.NewCaller("mcp:mail:send_email", &mockprovider.Options{
		Arguments: json.RawMessage(`{"title": "hello"}`)}) // a scripted stand-in for the model
	defer provider.Close()
	rt, err := runtime.New(ctx, &runtime.Options{Config: cfg.ToolSearch, Policy: cfg.Policy}) // code mode
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Close(ctx)
	gw, err := gateway.New(rt, &gateway.Options{BaseURL: provider.URL(), Model: "mock-model"})
	if err != nil {
		log.Fatal(err)
	}
	turn, err := gw.Turn(ctx, gateway.TurnRequest{Run: runtime.RunRequest{
		SessionID:   "session-1",
		Tools:       append(src.Tools(), lookupOrder),
		UserMessage: "Email me hello.",
	}})
	if err != nil {
		log.Fatal(err)
	}
	call := turn.Telemetry.Calls[0]
	fmt.Println("declared:", turn.Requests[0].Tools)
	fmt.Println("called:", call.ToolID, "via", call.Via)
	fmt.Println("the model read the result:", strings.Contains(turn.Answer, `"text":"sent: hello"`))
	// Output:
	// declared: [tool_search_code]
	// called: mcp:mail:send_email via code
	// the model read the result: true
}
