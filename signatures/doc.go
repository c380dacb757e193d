// Package signatures renders JSON Schemas as bounded, TypeScript-like hints, such as
//
//	{ owner: string; repo: string; title: string; labels?: Array<string>; ... }
//
// A search hit shows the model a tool's input hint, and an output hint when there is a complete one. The model
// reads those hints in every hit of every search, so they must be short enough to be cheap and exact enough to
// call the tool from, often without asking for the full schema. A hint is therefore bounded on every axis (depth,
// properties, union variants, enum values, characters; see Options), and what does not fit is replaced by "..."
// rather than silently dropped, so the model knows when to call describe.
//
// # Input and output hints
//
// [Input] always renders: a best-effort hint is better than none, and it never fails, whatever the bytes. The
// schemas of untrusted tools (MCP servers, clients) are never passed to it at all; their hint is [Unknown].
//
// [Output] renders only complete hints: closed objects (additionalProperties: false) all the way down, within
// every bound, with nothing in the schema that the hint cannot say. An output hint is a promise about every value
// a tool can return, so a partial one is worse than none.
//
// # How schemas read
//
//   - Objects list required properties first, then optional ones (marked ?), each group sorted by name, so the
//     order of the JSON keys never matters. A required name that properties does not declare is listed as
//     unknown. Keys that are not ASCII identifiers are JSON-quoted. A closed object without properties is {};
//     an object without properties whose additionalProperties is a schema is Record<string, T>.
//   - integer renders as number; arrays as Array<T>; prefixItems and the older array form of items as tuples
//     [A, B]; a type list, anyOf and oneOf as unions; const and enum as literals, strings JSON-quoted with JSON's
//     escapes. nullable: true adds | null. Identical members of a union are written once.
//   - true (and {}, and a schema with only annotations) is unknown; false is never.
//   - Annotations and value constraints are not shown: description (the descriptor carries the tool's own),
//     title, default, examples, format, pattern, minimum, minItems, not and the like. The hint's budget is for
//     shape.
//   - Only additionalProperties: false closes an object; unevaluatedProperties does not (it depends on
//     what other keywords evaluated, which a hint cannot show).
//   - $ref is never followed, which is what keeps rendering finite on cyclic schemas; it renders as unknown.
//     $ref, allOf, if/then/else, patternProperties, prefixItems, dependentSchemas (and the older dependencies),
//     anyOf with oneOf, anyOf or oneOf beside a shape of its own, a non-boolean nullable, an open object and
//     anything cut by a bound all make an output hint incomplete; Input renders what it can of the rest.
//   - Bytes that are not one JSON value, and JSON that is not a schema (a string, an array, null), render as
//     unknown. Duplicate keys keep the last value, as JavaScript's JSON.parse does.
//
// # Bounds
//
// When a hint is longer than MaxChars, Input folds nested objects to { ... }, the deepest level first, before it
// cuts any property at the top: the names of a tool's parameters are what the model needs most. Characters are
// counted in bytes. Work is bounded too (schema nodes visited per character of budget), so rendering is linear
// in the size of the schema whatever it nests, and it never panics.
package signatures
