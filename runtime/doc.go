// Package runtime is Tool Search itself: it turns a run's tools into what the model sees, and runs every call
// the model makes.
//
// A Runtime holds what a deployment shares: the resolved tools.toolSearch Config (ParseConfig), the policy, the
// approver and before_tool_call hooks, the code sandbox and the catalog cache. Each turn (or MCP session) is a
// Run:
//
//	rt, err := runtime.New(ctx, &runtime.Options{Config: cfg, Policy: policy})
//	run, err := rt.StartRun(ctx, runtime.RunRequest{SessionID: sid, RunID: rid, Tools: tools, UserMessage: msg})
//	defer run.Close()
//	defs := run.Tools()                   // send these to the provider
//	sys := run.SystemPromptSection()      // append to the system prompt ("" outside directory mode)
//	res, err := run.Execute(ctx, call)    // for every tool call the model makes
//
// # Modes
//
// In code mode the model sees tool_search_code and writes JavaScript against openclaw.tools.search, describe and
// call, run in the QuickJS sandbox of package hostfns with the Run as its Bridge. In tools mode it sees
// tool_search, tool_describe and tool_call. Directory mode adds a bounded directory of trusted tools to the
// system prompt and exposes up to four likely or required schemas; a hidden tool called by its exact, unique
// name is resolved from the catalog. Off exposes every allowed tool directly. Direct-only tools are visible in
// every mode. When the sandbox cannot start, code mode falls back to tools mode (New logs why); when the policy
// denies a mode's control tools, the run is not compacted at all.
//
// # What the model sends
//
// The arguments of the control tools and of openclaw.tools.* are decoded, repaired and checked in one place
// before anything runs, so search, describe and the pipeline only ever see a well-formed request. A mistake
// with a single meaning is repaired and recorded as a Repair (Telemetry.Repairs and a "repair" session log
// record): "arguments", "params" or "input" for "args", "name" or "toolId" for "id", arguments as a string
// holding a JSON object, a whole {id, args} request nested inside the arguments (unless the tool declares such
// a property), code wrapped in a Markdown fence. A request that could mean two things — two names of one
// field, a field the operation does not have, a field sent twice — is refused with a message naming the field
// and showing the right shape. Arguments that do not match the tool's schema are refused with the JSON path,
// what was expected, what was given, and the tool's input signature (for a tool whose schema is never rendered,
// its required properties and their types).
//
// # The call pipeline
//
// Every real call, whichever way the model reached the tool, goes through one pipeline: the policy is checked
// again (a tool that became denied or unavailable fails), then the Approver, then each BeforeToolCallHook (which
// may block or rewrite the arguments), then the arguments are validated against the tool's JSON Schema, the
// tool's outputSchema is compiled before it runs, the tool runs, and its details are checked against the
// outputSchema; then the call is logged and counted. Schemas are compiled with santhosh-tekuri/jsonschema behind
// a loader that refuses every remote and file $ref, once per tool and schema, and cached. A block, a panic in a
// hook or tool, or a broken contract is a result with IsError — never a crash, never a bypass. Execute returns a
// Go error only when its context ends or the run is closed.
//
// # Approval, annotations and pinned definitions
//
// The Approver is asked before every real call, bounded by Config.ApprovalTimeoutMs (even if it ignores its
// context); the approvals of one Execute — all the calls of a script — share that bound, so approvals nobody
// answers cannot hold a turn for ApprovalTimeoutMs each. In code mode the script is suspended while its call waits for the approver, and its codeTimeoutMs
// clock stopped, so a person may take longer than the script's timeout; a denial rejects that call's promise
// with the reason. A tool_search_code timeout names the calls still running and what had completed. A policy's
// Ask entries
// (catalog.Rule.Ask) mark the calls that may not run without it: Invocation.ApprovalRequired says so, and with
// no approver configured those calls are blocked. Policy entries "annotation:readOnly", "annotation:destructive"
// and the like match tools by catalog.Tool.Behavior, which believes only trusted tools' MCP annotations. With
// Options.Pins or Config.PinFile, each tool's definition is pinned in a PinFile when it is first approved or
// called, and a call to a tool whose definition changed since is blocked, naming the change, until an approver
// accepts it (Decision.AcceptChange) or the pin is forgotten.
//
// # Tools that are still coming
//
// The tools of MCP servers arrive while runs are in progress: servers start in the background, fail and
// reconnect, and change their listings. A run given a ToolFeed (RunRequest.Feed) follows it, and never tells the
// model that a tool does not exist while the server that has it is merely late: a search, describe or call that
// would come up empty, unknown or partial while a server is still starting waits for it — until its start
// attempt ends (PendingSource.ReadyBy), RunRequest.MaxSourceWait for the whole Execute, or the call's context —
// and then answers from the fuller catalog. An answer it could not complete names the servers it lacks, why, and
// when to retry; an id of a server that is down is "server memory is not available: <reason>", not an unknown
// tool. A tool_search_code script waits before it starts (its searches may take only a small share of its time).
//
// # Telemetry and session logs
//
// Run.Telemetry reports the catalog size per source, search/describe/call counts, every final call with its id
// and source, sandbox fuel, time and memory, and the request sizes the gateway recorded with RecordRequest. With
// Options.SessionLog (NewSessionLogDir writes one JSON Lines file per session), each run writes records that
// answer how many schemas the model saw up front, which searches and describes it ran, and which final tools it
// called from which source; calls made inside tool_search_code appear as their own call/result pairs right after
// the wrapper's result, with ids tool_search_code:<parentCallId>:<toolName>:<n> (see Project).
//
// # OpenTelemetry
//
// With Options.TracerProvider and MeterProvider (nil: the global providers, no-ops until a program installs an
// SDK), a run is a span (SpanRun), each Execute an execute_tool span under the caller's span (or the run's),
// and each search, describe, script and real call a span under it, with the pipeline's steps (SpanPolicy,
// SpanApproval, SpanHook, SpanTool, SpanValidateOutput) below the call; the Metric* constants name the
// counters and histograms. Session log records carry the trace and span ids of sampled spans. Arguments,
// results and queries are recorded only with Options.TraceContent.
//
// # Configuration files
//
// The config file (JSON5) is read and edited by package config, which builds a Config from its
// tools.toolSearch with ParseConfig or CheckConfig. ConfigKeys describes every key of tools.toolSearch (type,
// default, range, meaning); parsing, clamping, validation and the README's key table all come from it.
//
// # Concurrency
//
// Runtime and Run are safe for concurrent use. Approvers, hooks and tool handlers are called from many
// goroutines at once (tool_search_code runs the calls a script starts together in parallel).
//
// This package is named like the standard library's runtime; files that need both import the standard one as
// goruntime.
package runtime
