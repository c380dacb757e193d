package upstream_test

import (
	"context"
	"log"
	"os"

	"github.com/toolsearch/toolsearch/config"
	"github.com/toolsearch/toolsearch/mcp/upstream"
	"github.com/toolsearch/toolsearch/runtime"
)

// Example_catalogSource shows the MCP servers of a config becoming the tools of a Tool Search run, which is
// rebuilt when a server's tools change.
func Example_catalogSource() {
	ctx := context.Background()
	cfg, err := config.Load(ctx, "config.json")
	if err != nil {
		log.Fatal(err)
	}
	src, err := upstream.New(ctx, cfg.Servers, &upstream.Options{Progress: os.Stderr})
	if err != nil {
		log.Fatal(err)
	}
	defer src.Close(ctx)

	rt, err := runtime.New(ctx, &runtime.Options{Config: runtime.Config{Enabled: true, Mode: runtime.ModeCode}})
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Close(ctx)
	for {
		changed := src.Changed() // before Tools, so no change is missed
		run, err := rt.StartRun(ctx, runtime.RunRequest{SessionID: "session-1", Tools: src.Tools()})
		if err != nil {
			log.Fatal(err)
		}
		_ = run.Tools() // send these to the model; run.Execute each call it makes
		<-changed
		run.Close()
	}
}
