package hostfns_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/toolsearch/toolsearch/hostfns"
)

// echoBridge answers every search with one hit and echoes every call's arguments.
type echoBridge struct{}

func (echoBridge) Search(_ context.Context, req json.RawMessage) (json.RawMessage, error) {
	return json.RawMessage(`[{"id":"openclaw:core:echo","name":"echo"}]`), nil
}

func (echoBridge) Describe(_ context.Context, req json.RawMessage) (json.RawMessage, error) {
	return req, nil
}

func (echoBridge) Call(_ context.Context, req json.RawMessage) (json.RawMessage, error) {
	var r struct {
		Args json.RawMessage `json:"args"`
	}
	if err := json.Unmarshal(req, &r); err != nil {
		return nil, err
	}
	return r.Args, nil
}

func ExampleSandbox_Run() {
	ctx := context.Background()
	sandbox, err := hostfns.New(ctx, nil)
	if err != nil {
		fmt.Println("no sandbox on this host:", err)
		return
	}
	defer sandbox.Close(ctx)

	res, err := sandbox.Run(ctx, `
		const [hit] = await openclaw.tools.search("echo something", {limit: 1});
		console.log("calling", hit.id);
		return await openclaw.tools.call(hit.id, {text: "hello"});
	`, echoBridge{}, nil)
	fmt.Println(string(res.Value), res.Logs, res.Calls, err)

	_, err = sandbox.Run(ctx, "const x = 1;\nmissing(x);", echoBridge{}, nil)
	fmt.Printf("%+v\n", hostfns.Describe(err))
	// Output:
	// {"text":"hello"} [calling openclaw:core:echo] 2 <nil>
	// {Kind:exception Message:ReferenceError: missing is not defined (line 2) Line:2 Stack:    at <anonymous> (<input>:2:1)}
}
