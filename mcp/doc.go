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
// same tools work again. Nothing a server sends is trusted to be finite: every message is bounded
// (MaxMessageBytes); each page of a listing is cut into raw tool definitions before the SDK decodes anything of
// it, so an oversized tool (MaxToolBytes, MaxSchemaBytes) is dropped there and no schema is ever decoded into
// maps; a listing stops at MaxListingBytes, MaxToolsPerServer or a cursor that repeats; broken tools are dropped
// one by one. Each attempt to start a server is bounded by its ServerConfig.StartTimeoutMs or
// Options.StartTimeout, and New says on the progress writer which servers it is still waiting for.
//
// # Credentials, lazy servers
//
// A streamable HTTP server's headers take ${NAME} references to environment variables, resolved at each start
// (a variable that is not set fails the start, naming it). Their values are never logged or put into errors,
// and every message the server sends has them replaced by Redacted before anything reads it, so a server that
// echoes a token cannot leak it into an error, a log or the model's context. RedactConfigValue hides literal
// header values from commands that print config values.
//
// A lazy server (ServerConfig.Lazy) is started on its first call. Until then its tools come from the schema
// cache (Options.SchemaCacheDir), one file per server config holding its last listing, checked by the rules of
// a listing when it is read; a server without a usable entry starts at once, and progress says why.
//
// Child processes get their own process group. Source.Close closes every session and stops every child the
// way the MCP spec asks — stdin closed, then SIGTERM, then SIGKILL to the whole group — within a bound
// (Options.CloseTimeout, or ctx's deadline if earlier); a transport that still does not let go is abandoned
// and named in the error.
//
// # toolsearch as an MCP server
//
// NewServer puts a front before the servers of a Source (and any in-process tools). In code, tools and
// directory mode it shows the runtime's Tool Search surface — tool_search_code, or tool_search, tool_describe and
// tool_call — and those tools do not change when servers come and go; in off mode it is a plain aggregating
// proxy that offers every tool directly, as its server listed it (title, schemas, annotations, _meta), and
// passes results on unchanged, with tools/list_changed when the set changes. Either way every tools/call runs
// through runtime.Run.Execute, so each real call passes the runtime's pipeline (policy, approval, hooks,
// validation, output contract). Server.Run serves stdio; Server.Handler serves streamable HTTP, with a bearer
// token and an Origin check (ServerOptions). `toolsearch mcp serve` wires it up; an MCP client adds it with one
// entry:
//
//	{"mcpServers": {"toolsearch": {"command": "toolsearch", "args": ["mcp", "serve", "--config", "/home/me/.config/toolsearch/config.json"]}}}
//
// Besides tools, the front passes on what clients and servers rely on:
//
//   - Resources, resource templates and prompts of every server, listed (paginated), read and fetched through
//     the front, with resources/list_changed, prompts/list_changed, subscriptions and completions. A URI or
//     template two servers share becomes toolsearch://<server>/<uri>, a shared prompt name <server>__<name>;
//     everything else keeps its own. A URI no server listed (a tool result's resource link) is tried on each
//     server that has resources.
//   - Progress: a client's progress token reaches the upstream call (as a token of ours), and the server's
//     notifications come back on the client's; the calls of one tool_search_code script report their summed
//     progress on the script's call.
//   - Cancellation: notifications/cancelled ends the client's request, which ends the script and cancels its
//     upstream calls with notifications/cancelled of their own.
//   - Logging: servers' log messages reach every client that set a level (logging/setLevel), filtered by it,
//     with the server's name as the logger; servers are asked for the most verbose level any client wants.
//   - _meta: what a client sends with a call (trace context) goes to the upstream call, without the keys the
//     protocol reserves for the client's own connection.
//
// Every client session — the one client of Run, each Mcp-Session-Id of Handler — has runs of its own: its own
// telemetry, session log (<SessionID>-c<n>), directory hydration and call ids, over one catalog shared by all. A
// server configured with Isolation "per-client" gets one session (one process) per client, started at the
// client's first use; a client's runs and sessions are closed when it goes away.
//
// # Rough edges
//
//   - In directory mode the directory goes to clients as the server's instructions, which a client reads once
//     when it connects: tools that appear later are searchable at once but listed in the directory only for
//     clients that connect after the change.
//   - A client's counters start again when the upstream tools change, since its next call starts a new run over
//     the new catalog.
//   - Log messages and resource updates of a shared server go to every client that asked for them: a shared
//     session cannot tell which client a message concerns. A per-client server's go to its client only, except
//     resource updates, which the SDK sends to every client subscribed to that URI.
//   - Clients of the 2026-07-28 protocol get no forwarded log messages: that protocol sets log levels per
//     request and deprecates logging.
//   - Server-initiated requests (sampling, elicitation, roots) and tasks are not proxied: a shared upstream
//     session cannot tell which client should answer, so the front declares no client capabilities and servers
//     do not ask.
//   - Server.Run does not close the reader it is given; when ctx ends first, a read blocked on it returns only
//     when the reader does (for standard input, when the process exits).
//   - A streamable HTTP server's dropped event stream is first retried by the SDK itself; only when that gives
//     up does the Source mark the server unavailable and reconnect.
//   - Tools reach the SDK without their schemas (see listing.go), so the SDK cannot mirror arguments into HTTP
//     headers for tools that declare x-mcp-header (MCP protocol version 2026-07-28 and later).
//   - The SDK's own framing of a stdio message allocates about eight times its size (garbage, not live memory):
//     a listing that MaxListingBytes stops after two 16 MiB pages costs about 500 MiB of allocation and 150 MiB
//     of heap at its peak.
//
// # Concurrency
//
// Source and Server are safe for concurrent use; tool handlers may be called from many goroutines at once
// (code mode runs the calls of one script in parallel).
package mcp
