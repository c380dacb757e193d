package wasm_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/toolsearch/toolsearch/wasm"
)

func ExampleEngine_Run() {
	ctx := context.Background()
	engine, err := wasm.New(ctx, nil) // compile once; share across goroutines
	if err != nil {
		fmt.Println("no sandbox on this host:", err)
		return
	}
	defer engine.Close(ctx)

	res, err := engine.Run(ctx, "[1, 2, 3].map(x => x * x).join(' ')", nil)
	fmt.Println(res.Value, err)

	_, err = engine.Run(ctx, "while (true) {}", &wasm.RunOptions{Timeout: 100 * time.Millisecond})
	var limit *wasm.LimitError
	fmt.Println(errors.As(err, &limit), limit.Kind, errors.Is(err, context.DeadlineExceeded))
	// Output:
	// 1 4 9 <nil>
	// true timeout true
}
