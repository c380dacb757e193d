// Package mcp connects toolsearch to the Model Context Protocol in both directions: MCP servers become a catalog
// source, and toolsearch itself becomes an MCP server that any MCP client can use. It is the only package of
// toolsearch that imports the MCP Go SDK; nothing of the SDK appears in its API.
//
// # MCP servers as a catalog source
//
// A Config is the "mcpServers" section that Claude Desktop, Cursor and most MCP clients use, so an existing one
// can be pasted as it is (ParseConfig reads JSON5: comments, trailing commas, unquoted keys):
//
//	{"mcpServers": {
//	  "memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"], "env": {"MEMORY_FILE_PATH": "/tmp/m.jsonl"}},
//	  "remote": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ..."}}
//	}}
//
// New starts or connects every server in parallel, initializes each session and lists every page of its
// tools. Source.Tools maps them to catalog tools of source "mcp": ids like mcp:memory:create_entities, names
// made safe by catalog.SafeMCPNames, and the server's schemas kept as raw JSON — untrusted, so the catalog never
// renders them into hints, unless the config marks the server "trusted" (catalog.Tool.TrustedByUser). Tool
// annotations are kept (catalog.Tool.Annotations); the policy believes them only from a trusted server. Each
// tool's Handler sends tools/call with a timeout: a result with isError is a
// failed tool result, structuredContent becomes the result's Details (where the runtime checks the tool's
// outputSchema), and a JSON-RPC error from a live server is a failed result too, since the model can correct
// the call. A transport failure — no answer in time, a dead connection, an unreadable answer — is a Go error,
// a *ServerError naming the server. notifications/tools/list_changed makes the Source list the server's tools
// again; Source.Changed tells the caller when to rebuild its catalog.
//
// # Servers fail, the catalog does not
//
// A server that cannot start, exits, stops answering (a call times out and a ping then fails), or sends
// something that breaks the connection is marked unavailable: its tools stay in the catalog, and calls to them
// fail at once with an error that names the server and the reason (its exit status and last stderr line for
// a child process), through the runtime's availability check. The other servers never notice. The server is
// retried with exponential backoff and jitter (Options.RetryDelay, Options.MaxRetryDelay); once it is back, the
// same tools work again. Nothing a server sends is trusted to be finite: listings are bounded
// (MaxToolsPerServer, MaxSchemaBytes, a cursor that repeats), and broken tools are dropped one by one.
//
// Child processes get their own process group. Source.Close closes every session and stops every child the
// way the MCP spec asks — stdin closed, then SIGTERM, then SIGKILL to the whole group — within a bound
// (Options.CloseTimeout, or ctx's deadline if earlier); a transport that still does not let go is abandoned
// and named in the error.
//
// # toolsearch as an MCP server
//
// NewServer exposes a runtime's Tool Search surface — tool_search_code in code mode; tool_search,
// tool_describe and tool_call in tools and directory mode — over the tools of a Source and any in-process
// tools, and runs every tools/call through runtime.Run.Execute, so each real call passes the runtime's
// pipeline. Server.Run serves stdio; Server.Handler serves streamable HTTP. `toolsearch mcp serve` wires it up;
// an MCP client adds it with one entry:
//
//	{"mcpServers": {"toolsearch": {"command": "toolsearch", "args": ["mcp", "serve", "--config", "/home/me/.config/toolsearch/config.json"]}}}
//
// # Rough edges
//
//   - In directory mode the directory goes to clients as the server's instructions, which a client reads once
//     when it connects: tools that appear later are searchable at once but listed in the directory only for
//     clients that connect after the change.
//   - All clients of one Server share one runtime run, so the counters in tool_search_code results (searches,
//     describes, calls) add up over the server's life rather than per client.
//   - Server.Run does not close the reader it is given; when ctx ends first, a read blocked on it returns only
//     when the reader does (for standard input, when the process exits).
//   - A streamable HTTP server's dropped event stream is first retried by the SDK itself; only when that gives
//     up does the Source mark the server unavailable and reconnect.
//
// # Concurrency
//
// Source and Server are safe for concurrent use; tool handlers may be called from many goroutines at once
// (code mode runs the calls of one script in parallel).
package mcp
