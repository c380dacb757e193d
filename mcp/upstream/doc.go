// Package upstream connects toolsearch to MCP servers and makes their tools a catalog source: the config,
// starting or dialing each server, keeping it connected, listing its tools within bounds, the schema cache of
// lazy servers, header secrets, and the handler that calls a tool. It knows nothing of MCP clients; mcp/front
// serves those, over a Source of this package (see the seam below). Nothing of the MCP SDK appears in its API.
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
// # The seam with the front
//
// A front (mcp/front) uses a Source through mcp/internal/seam only: seam.Open gives it the Source as a
// seam.Upstream — its tools, one Status value (each server idle, starting, ready, failed with the reason and
// the next attempt, retrying, or closed), Changed, the servers as seam.Server (their resources, templates and
// prompts, read, get, complete, subscribe), log levels, the notifications of shared sessions, and each client's
// own sessions of per-client servers (seam.Client). What the front attaches to a request's context (seam.Call:
// the client, its _meta, where progress goes, the raw result for off mode) reaches the tool handler through the
// runtime's pipeline. The interface speaks the SDK's types, which is why it is internal rather than part of this
// package's API, and nothing in this package imports the front.
//
// # Rough edges
//
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
// A Source is safe for concurrent use; tool handlers may be called from many goroutines at once (code mode runs
// the calls of one script in parallel).
package upstream
