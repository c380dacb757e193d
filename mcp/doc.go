// Package mcp is toolsearch and the Model Context Protocol in both directions. It holds no code; its two
// packages each do one job, and meet at a narrow seam:
//
//   - mcp/upstream connects to MCP servers and makes their tools a catalog source (upstream.New, Source.Tools,
//     Source.Changed, Source.Status): config, dial and processes, listings and their bounds, lazy start and its
//     schema cache, header secrets, tool handlers, per-client sessions of per-client servers.
//   - mcp/front makes toolsearch an MCP server before a Source (front.NewServer): the SDK server, client
//     sessions and their runs, resource and prompt mirroring, relaying progress, cancellation and logs, the HTTP
//     guard.
//
// The arrows run one way: front imports upstream (for the Source type) and mcp/internal/seam; upstream imports
// the seam and never the front; the seam imports neither. seam.Upstream is everything the front uses of a
// Source, including the one Status value it reads about the servers; no front file touches an upstream field
// (seam_test.go checks both, file by file). These three, and the helpers of their tests (mcp/internal/mcptest),
// are the only packages of toolsearch that import the MCP Go SDK, and none shows the SDK in its API.
// docs/architecture.md draws the seam.
//
// A program that only needs MCP tools in a catalog imports mcp/upstream; `toolsearch mcp serve` wires both:
//
//	src, _ := upstream.New(ctx, cfg, &upstream.Options{Progress: os.Stderr})
//	srv, _ := front.NewServer(ctx, rt, src, nil)
//	_ = srv.Run(ctx, os.Stdin, os.Stdout)
package mcp
