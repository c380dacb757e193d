// Package hostfns is the JavaScript surface of code mode: the model's code, JavaScript or TypeScript, runs in the
// wasm sandbox as the body of an async function and sees exactly these globals from the host:
//
//	console.log(...args), console.warn(...args), console.error(...args)
//	openclaw.tools.search(query, options?)  // also search({queries: [...]}) and search(query, limit)
//	openclaw.tools.describe(id)
//	openclaw.tools.call(id, args?)
//
// each openclaw.tools function returning a Promise. The run's value is what the body returns; a body without a
// top-level return gives the value of its last expression statement, and code that is one function (an arrow,
// `async function main() {...}`, an anonymous function, an `export default`) has it called and awaited.
// TypeScript's types are stripped before the interpreter sees them, and every position in an error points into
// the code as written (internal/jsprep does both). Static imports are syntax errors (there are no modules;
// `import type` is erased); a tool that ran and failed resolves openclaw.tools.call with result.isError set,
// and a call that could not run rejects. Timers (setTimeout, setInterval) run on the sandbox's virtual
// clock. The QuickJS extras (std, os, print, ...) are removed from the global object; import('qjs:std') still
// resolves, but WASI gives it no files, environment, arguments or processes to reach.
//
// The Go side is the Bridge interface, which the runtime implements: it gets each request as the script built it
// and decides what it means. Calls a script starts without awaiting each other run concurrently on the host
// (Promise.all is really parallel); a run waits for every call it started before it returns. A bridge call that
// must wait for something that is not the script's doing (a person approving it) calls Suspend: the script stops
// running and its deadline stops running down until the call resumes it.
//
// # Limits and their defaults
//
// Every limit is enforced, and each one has a test that trips it. Zero values in Options and RunOptions mean:
//
//	limit                      default         error
//	RunOptions.Timeout         10 s            *wasm.LimitError{Kind: timeout}; errors.Is(err, context.DeadlineExceeded)
//	RunOptions.Fuel            2,000,000,000   *wasm.LimitError{Kind: fuel}   (~10 s of pure JS on one core)
//	RunOptions.MemoryBytes     64 MiB          *wasm.LimitError{Kind: memory} (linear memory, incl. ArrayBuffers)
//	wasm.Options.StackBytes    1 MiB           *wasm.LimitError{Kind: stack}  (~3,600 JS frames, JSON.parse nested 65,000 deep)
//	RunOptions.MaxOutputBytes  64 KiB          *wasm.LimitError{Kind: output} (console entries as JSON, +1 byte each)
//	RunOptions.MaxResultBytes  1 MiB           *wasm.LimitError{Kind: result} (JSON of the returned value; an
//	                                           uncaught exception's message and stack are cut to fit, 16 KiB each)
//	RunOptions.MaxSourceBytes  256 KiB         *wasm.LimitError{Kind: source}
//	RunOptions.MaxCalls        100             *wasm.LimitError{Kind: calls}  (search, describe and call all count)
//	RunOptions.MaxPayloadBytes 1 MiB           the one call is rejected inside the script (catchable)
//	RunOptions.MaxBridgeBytes  8 MiB           all requests and responses together (4 MiB per second of a timeout under
//	                                           2 s); past it, calls are rejected
//	RunOptions.MaxHostTime     5% of Timeout   CPU of searches and describes together; past it, they are rejected
//	WASI stdout/stderr         64 KiB          kept, the rest dropped (scripts cannot reach them without qjs:std)
//	jsprep.MaxNodes            8,192           code runs unparsed: no TypeScript, no script forms (see below)
//	jsprep.MaxArrows           256             the same, for arrow functions
//	jsprep.MaxTypeScriptNodes  1,024           (and MaxTypeScriptArrows, 128) not read as TypeScript
//
// The two parse limits count operators, brackets and keywords, which bound how deeply a parser can recurse on the
// code (a Go stack overflow would end the process); code past them is evaluated as written, and a syntax error
// of such code says why. A guest trap (the interpreter crashing on what a script did) is wasm.ErrTrap, kind "crash" in ErrorInfo; a
// NUL character in the code is a syntax error. Bridge calls run at most 2 MiB of requests at once, the rest
// wait to start; results go back to the script in batches of about one payload.
package hostfns
