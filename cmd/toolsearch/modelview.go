package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/config"
	"github.com/toolsearch/toolsearch/runtime"
)

// searchModelView runs query as the model's tool_search in tools mode over the source's tools, through the
// runtime with the limits of the source's config, and prints the text the model would get, byte for byte, and a
// newline. A search the runtime refuses prints the refusal the model would read, and fails.
func searchModelView(ctx context.Context, source toolSource, tools []catalog.Tool, query string, limit int, stdout, stderr io.Writer) int {
	cfg, err := modelViewConfig(ctx, source)
	if err != nil {
		fmt.Fprintf(stderr, "toolsearch search: %v\n", err)
		return exitFailure
	}
	rt, err := runtime.New(ctx, &runtime.Options{Config: cfg})
	if err != nil {
		fmt.Fprintf(stderr, "toolsearch search: %v\n", err)
		return exitFailure
	}
	defer rt.Close(ctx)
	run, err := rt.StartRun(ctx, runtime.RunRequest{RunID: "cli-model-view", Tools: tools})
	if err != nil {
		fmt.Fprintf(stderr, "toolsearch search: %s: %v\n", source.name(), err)
		return exitFailure
	}
	defer run.Close()

	req := map[string]any{"query": query}
	if limit > 0 {
		req["limit"] = limit
	}
	args, _ := json.Marshal(req)
	res, err := run.Execute(ctx, runtime.ToolCall{ID: "cli-model-view", Name: runtime.ToolSearchName, Arguments: args})
	if err != nil {
		fmt.Fprintf(stderr, "toolsearch search: %v\n", err)
		return exitFailure
	}
	fmt.Fprintln(stdout, res.Content)
	if res.IsError {
		return exitFailure
	}
	return exitOK
}

// modelViewConfig is tools.toolSearch of the --mcp-config file, read as `mcp serve --config` reads it, or the
// defaults for a catalog file; always in tools mode.
func modelViewConfig(ctx context.Context, source toolSource) (runtime.Config, error) {
	if source.mcpConfigPath == "" {
		return runtime.Config{Enabled: true, Mode: runtime.ModeTools}, nil
	}
	lc, err := config.Load(ctx, source.mcpConfigPath)
	if err != nil {
		return runtime.Config{}, err
	}
	cfg := lc.ToolSearch
	cfg.Enabled, cfg.Mode = true, runtime.ModeTools
	return cfg, nil
}
