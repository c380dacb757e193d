package front_test

import (
	"context"
	"log"
	"os"

	"github.com/toolsearch/toolsearch/config"
	"github.com/toolsearch/toolsearch/mcp/front"
	"github.com/toolsearch/toolsearch/mcp/upstream"
	"github.com/toolsearch/toolsearch/runtime"
)

// ExampleNewServer serves Tool Search over the servers of a config on stdio, as `toolsearch mcp serve` does.
func ExampleNewServer() {
	ctx := context.Background()
	cfg, err := config.Load(ctx, "config.json")
	if err != nil {
		log.Fatal(err)
	}
	src, err := upstream.New(ctx, cfg.Servers, &upstream.Options{Progress: os.Stderr}) // never stdout: it carries the protocol
	if err != nil {
		log.Fatal(err)
	}
	defer src.Close(ctx)
	rt, err := runtime.New(ctx, &runtime.Options{Config: cfg.ToolSearch, Policy: cfg.Policy})
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Close(ctx)
	srv, err := front.NewServer(ctx, rt, src, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	if err := srv.Run(ctx, os.Stdin, os.Stdout); err != nil {
		log.Fatal(err)
	}
}
