// Package jsprep turns the code a model wrote for code mode into the script the sandbox evaluates: TypeScript
// stripped to JavaScript, the forms models write (one function, a final expression, an export default) made
// into the body of one async function whose result is the script's answer, and a way back from positions in
// that script to positions in the code as written. Code in which no await can be written becomes the body of a
// plain function instead, which the interpreter runs for less and the sandbox's prelude settles exactly as an
// async function would settle its promise.
//
// Plain JavaScript takes a fast path: a JavaScript parser (goja's) reads it, and the only changes are a few
// inserted characters around the final expression. Only code that does not parse as JavaScript, or that looks
// like a TypeScript call with explicit type arguments, goes through esbuild's TypeScript transform, which costs
// about as much as a whole cold run of the sandbox.
package jsprep
