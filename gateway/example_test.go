package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/gateway"
	"github.com/toolsearch/toolsearch/gateway/mockprovider"
	"github.com/toolsearch/toolsearch/runtime"
)

// ExampleGateway_Turn embeds Tool Search in an agent loop. The provider is a scripted stand-in for any
// OpenAI-compatible endpoint; the model sees one tool, tool_search_code, and reaches lookup_order through it.
func ExampleGateway_Turn() {
	ctx := context.Background()
	provider := mockprovider.New("lookup_order", nil)
	defer provider.Close()

	lookupOrder := catalog.Tool{
		Source: catalog.SourceOpenClaw, SourceName: "shop", Name: "lookup_order",
		Description: "Look up an order by its marker.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"marker":{"type":"string"}},"required":["marker"]}`),
		Handler: catalog.HandlerFunc(func(_ context.Context, args json.RawMessage) (*catalog.Result, error) {
			return &catalog.Result{Content: []catalog.Content{{Type: "text", Text: "FAKE_PLUGIN_OK " + string(args)}}}, nil
		}),
	}
	rt, err := runtime.New(ctx, &runtime.Options{Config: runtime.Config{Enabled: true}}) // code mode
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Close(ctx)
	gw, err := gateway.New(rt, &gateway.Options{BaseURL: provider.URL(), Model: "mock-model"})
	if err != nil {
		log.Fatal(err)
	}
	turn, err := gw.Turn(ctx, gateway.TurnRequest{Run: runtime.RunRequest{
		SessionID: "session-1", Tools: []catalog.Tool{lookupOrder}, UserMessage: "Where is my order?",
	}})
	if err != nil {
		log.Fatal(err)
	}
	call := turn.Telemetry.Calls[0]
	fmt.Println("declared:", turn.Requests[0].Tools)
	fmt.Println("called:", call.ToolID, "via", call.Via, "as", call.CallID)
	fmt.Println("answer:", turn.Answer)
	// Output:
	// declared: [tool_search_code]
	// called: openclaw:shop:lookup_order via code as tool_search_code:call_1:lookup_order:1
	// answer: FAKE_PLUGIN_OK lookup_order
}
