// Package toolsearch is the root of a Go library and CLI that gives LLM agents one compact way to find and call
// tools in a catalog far too large to put in the prompt.
//
// The root package holds no code; it exists for repository-wide tests (see deps_test.go). The packages a user
// imports are:
//
//   - signatures: JSON Schema to bounded TypeScript-like input and output hints.
//   - catalog: the tool model, policy filtering, run-scoped catalogs, lookup and search ranking.
//   - wasm: the QuickJS-NG WASI sandbox on wazero (fuel, deadline, memory and stack limits).
//   - hostfns: the JavaScript surface of code mode (console and openclaw.tools) and its Go bridge.
//   - runtime: Tool Search itself: config, modes, the call pipeline, telemetry and session logs.
//   - mcp: MCP servers as a catalog source, and toolsearch as an MCP server.
//   - gateway: an agent turn loop against an OpenAI-compatible provider.
package toolsearch
