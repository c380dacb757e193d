// Package hostfns is the JavaScript surface of code mode: the model's code runs as the body of an async function
// in the wasm sandbox and sees exactly these globals from the host:
//
//	console.log(...args), console.warn(...args), console.error(...args)
//	openclaw.tools.search(query, options?)  // also search({queries: [...]}) and search(query, limit)
//	openclaw.tools.describe(id)
//	openclaw.tools.call(id, args?)
//
// each openclaw.tools function returning a Promise. Timers (setTimeout, setInterval) run on the sandbox's virtual
// clock. The QuickJS extras (std, os, print, ...) are removed from the global object; import('qjs:std') still
// resolves, but WASI gives it no files, environment, arguments or processes to reach.
//
// The Go side is the Bridge interface, which the runtime implements. Calls a script starts without awaiting
// each other run concurrently on the host (Promise.all is really parallel); a run waits for every call it started
// before it returns.
//
// # Limits and their defaults
//
// Every limit is enforced, and each one has a test that trips it. Zero values in Options and RunOptions mean:
//
//	limit                      default         error
//	RunOptions.Timeout         10 s            *wasm.LimitError{Kind: timeout}; errors.Is(err, context.DeadlineExceeded)
//	RunOptions.Fuel            2,000,000,000   *wasm.LimitError{Kind: fuel}   (~10 s of pure JS on one core)
//	RunOptions.MemoryBytes     64 MiB          *wasm.LimitError{Kind: memory} (linear memory, incl. ArrayBuffers)
//	wasm.Options.HeapLimitBytes 48 MiB         *wasm.LimitError{Kind: memory} (QuickJS's own allocator limit)
//	wasm.Options.StackBytes    1 MiB           *wasm.LimitError{Kind: stack}  (~3,600 JS frames, JSON.parse nested 65,000 deep)
//	RunOptions.MaxOutputBytes  64 KiB          *wasm.LimitError{Kind: output} (console output)
//	RunOptions.MaxResultBytes  1 MiB           *wasm.LimitError{Kind: result} (JSON of the returned value)
//	RunOptions.MaxSourceBytes  256 KiB         *wasm.LimitError{Kind: source}
//	RunOptions.MaxCalls        100             *wasm.LimitError{Kind: calls}  (search, describe and call all count)
//	RunOptions.MaxPayloadBytes 1 MiB           the one call is rejected inside the script (catchable)
//	WASI stdout/stderr         64 KiB          kept, the rest dropped (scripts cannot reach them without qjs:std)
package hostfns
