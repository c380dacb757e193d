// Package config is the one home of toolsearch's config file: reading it (JSON5), checking every key at every
// level, the policy and profiles built from it, and editing it in place under a lock.
//
// Load reads a file and gives a program exactly what `toolsearch mcp serve --config FILE` gets: the MCP servers
// (hand Config.Servers to upstream.New), tools.toolSearch as a runtime.Config, the policy (runtime.Options.Policy),
// the profiles of `mcp serve --http`, and the warnings the command prints:
//
//	cfg, err := config.Load(ctx, path)
//	if err != nil {
//		return err // names the key and what to write
//	}
//	for _, w := range cfg.Warnings {
//		log.Print(w)
//	}
//	src, err := upstream.New(ctx, cfg.Servers, nil)
//	rt, err := runtime.New(ctx, &runtime.Options{Config: cfg.ToolSearch, Policy: cfg.Policy})
//
// The file is shared with MCP clients and OpenClaw, so a key toolsearch does not read is a warning, not an error,
// unless it is one edit from a key it reads (a typo); fields other clients define (Claude Desktop, Claude Code,
// Cursor, VS Code, Windsurf, Gemini CLI, Cline, Roo Code, Zed) are named with what toolsearch reads instead.
// What cannot work as written is an *Error (errors.Is(err, ErrInvalid)) naming every problem.
//
// File edits the file keeping its comments and layout (File.Set changes only the bytes of the value it sets);
// UpdateFile does so under the file's lock, so edits made at the same time by several processes all land.
//
// Import moves the MCP servers of another client's config file (Claude Desktop, Claude Code, Cursor, VS Code,
// Windsurf, Gemini CLI) into a toolsearch config, and makes `toolsearch mcp serve` that client's only MCP server.
//
// Package config reads into the types of runtime, catalog and mcp/upstream; only programs import it.
package config
