// Package gateway is the agent turn loop an application embeds: it puts Tool Search between a model behind an
// OpenAI-compatible Chat Completions endpoint and the application's tools.
//
// A Gateway holds a *runtime.Runtime and a provider (base URL, API key, model). Each Turn starts a runtime Run,
// then loops: it builds a request from the system prompt (with the run's tool directory in directory mode), the
// history, the user message and exactly the tool definitions the run exposes; sends it; executes every tool call
// of the answer through Run.Execute (so policy, approval, hooks and validation always apply); appends the results;
// and stops when the model answers with text, or fails with ErrMaxRounds when it keeps calling tools.
//
// The model only ever sees the control tools' results. Calls made inside tool_search_code or through tool_call
// are projected into the transcript (TurnResult.Transcript) and the session log as their own call/result pairs,
// with ids tool_search_code:<parentCallId>:<toolName>:<n>; they are never sent to the provider.
//
// # What a request costs
//
// Every request body is captured as it leaves for the provider (an openai-go middleware), and measured from those
// bytes: the whole body, the tools array, the messages array (system prompt included) and the number of tools
// declared. The numbers go to TurnResult.Requests, to the run's telemetry (Run.RecordRequest) and to the session
// log, so the savings of Tool Search are read off the wire rather than estimated.
//
// # Session logs
//
// The runtime writes the session log (configure runtime.Options.SessionLog, e.g. with runtime.NewSessionLogDir);
// the gateway adds a RecordMessage record for the user message and for each assistant answer, and a request
// record per provider call.
//
// Package mockprovider is a scripted Chat Completions server for tests; package scenario runs the
// end-to-end scenario with both, for tests and `toolsearch demo`.
//
// # Concurrency
//
// A Gateway is safe for concurrent use: turns are independent, and the tool calls of one answer are executed
// one after the other, in the order the model made them.
package gateway
