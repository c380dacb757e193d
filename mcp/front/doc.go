// Package front is toolsearch as an MCP server: a front before the MCP servers of an upstream.Source (and any
// in-process tools) that any MCP client can use. It holds the SDK server, the client sessions and what each one
// owns, the mirror of the servers' resources and prompts, what it relays between clients and servers (progress,
// cancellation, logs, _meta), and the HTTP guard. It reaches the servers only through mcp/internal/seam (see
// package upstream's "The seam with the front"), never through the Source's fields. Nothing of the MCP SDK
// appears in its API.
//
// NewServer puts a front before the servers of an upstream.Source (and any in-process tools). In code, tools and
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
// # Approvals and profiles
//
// Each client's runs bring their own approver (runtime.RunRequest.Approver). A call that needs approval — a
// policy Ask entry, or a tool whose pinned definition changed — is put to the user of the client that made it,
// with MCP elicitation in form mode: the tool's id, server and title, its arguments as JSON (cut at
// MaxApprovalArgumentBytes), its annotations, and for a pin what changed. Accepting runs the call (and pins the
// new definition); declining or dismissing blocks it with a reason the model can read; no answer within
// approvalTimeoutMs blocks it, and the request is cancelled so that a late answer approves nothing. In code mode
// the script is suspended meanwhile, its deadline held. The form has an "approve for this session" box, which
// covers later calls of that tool, as defined when approved, in that client session only. Calls that need no
// approval run without asking anyone. A client that did not declare elicitation gets a blocked call naming the
// rule and how to allow the tool (ServerOptions.ApprovalHint). ServerOptions.Approver gives the embedding program
// a veto over every call.
//
// Over HTTP, ServerOptions.Profiles give each bearer token a policy of its own: a session keeps the profile of
// its first request's token, its runs use that policy, and in off mode its tools/list holds only what that
// policy allows.
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
//     session cannot tell which client a message concerns. A per-client server's go to its client only.
//   - Clients of the 2026-07-28 protocol get no forwarded log messages: that protocol sets log levels per
//     request and deprecates logging.
//   - Server-initiated requests (sampling, elicitation, roots) and tasks are not proxied: a shared upstream
//     session cannot tell which client should answer, so the front declares no client capabilities and servers
//     do not ask.
//   - Clients that speak the 2026-07-28 protocol (the go-sdk client's default) are asked for approvals through
//     the call's result: that protocol forbids a server's request while it serves one, so their calls run
//     parked (roundtrip.go), an approval is returned as an input request, and the client's retry answers it
//     while the run waits. At most MaxPendingRoundTrips of one client's questions wait at once.
//   - With Profiles, a profile whose policy denies the mode's control tools still sees them listed (its run
//     falls back to off mode, whose tools are not registered with the SDK server).
//   - Server.Run does not close the reader it is given; when ctx ends first, a read blocked on it returns only
//     when the reader does (for standard input, when the process exits).
//
// # Concurrency
//
// A Server is safe for concurrent use.
package front
