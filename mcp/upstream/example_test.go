package upstream_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"sort"

	"github.com/toolsearch/toolsearch/mcp/upstream"
	"github.com/toolsearch/toolsearch/runtime"
)

func ExampleParseConfig() {
	cfg, err := upstream.ParseConfig([]byte(`{
  // the section other MCP clients use, pasted as it is
  "mcpServers": {
    "memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]},
    "remote": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer token"}},
  },
  "tools": {"toolSearch": {"mode": "code"}},
}`))
	if err != nil {
		log.Fatal(err)
	}
	names := make([]string, 0, len(cfg.Servers))
	for name := range cfg.Servers {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		s := cfg.Servers[name]
		fmt.Printf("%s: command=%q url=%q\n", name, s.Command, s.URL)
	}

	_, err = upstream.ParseConfig([]byte(`{"mcpServers": {"broken": {"type": "sse", "url": "https://example.com/sse"}}}`))
	fmt.Println(err)
	// Output:
	// memory: command="npx" url=""
	// remote: command="" url="https://example.com/mcp"
	// mcp config: server "broken": type "sse" (the deprecated HTTP+SSE transport) is not supported; use a streamable HTTP endpoint
}

// Example_catalogSource shows the MCP servers of a config becoming the tools of a Tool Search run, which is
// rebuilt when a server's tools change.
func Example_catalogSource() {
	ctx := context.Background()
	cfg, err := upstream.LoadConfig("config.json")
	if err != nil {
		log.Fatal(err)
	}
	src, err := upstream.New(ctx, cfg, &upstream.Options{Progress: os.Stderr})
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
