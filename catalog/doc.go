// Package catalog is the tool model of toolsearch and everything a model does with it before a call: the
// effective catalog of a run after policy, compact descriptors, lookup with recoverable errors, and search
// ranking.
//
// # Tools and ids
//
// A [Tool] has an id "<source>:<sourceName>:<name>" ("openclaw:core:web_search", "mcp:github:create_issue",
// "client:client:pick_file"). OpenClaw core and plugin tools are trusted: their schemas are rendered into
// TypeScript-like hints by package signatures. MCP and client schemas are never traversed for hints; a search hit
// says input "unknown" and the model calls describe first. [SafeMCPNames] makes MCP names provider-safe.
//
// # Catalogs
//
// [New] builds the catalog of one run: tools the [Policy] denies are not in it at all (search cannot return them,
// lookup calls them unknown), and direct-only tools are never cataloged. A tool that cannot be cataloged (a name
// that cannot be shown, a schema that is not a bounded JSON object) is left out and reported by [Catalog.Rejected],
// and the rest is built. A [Catalog] is immutable apart from its counters and safe for concurrent use. There is no
// global registry: a [Cache] holds one catalog per run or session scope, reuses it while the tool set's fingerprint
// is unchanged, keeps the scope's counters across rebuilds, and refuses an empty scope ([ErrNoScope]).
//
// # Search
//
// [Catalog.Search] ranks with BM25F over the tool name, label, source name, description and parameter names,
// descriptions and short enum values (of untrusted tools too: indexing shows the model nothing), each field with
// its own weight. Words are split at camelCase, snake_case and kebab-case boundaries, stop words dropped and
// lightly stemmed; text in scripts written without spaces (Chinese, Japanese, Korean, Thai ...) is split into
// overlapping pairs of characters. Each query word then stands for a group of index terms: itself, its synonyms and abbreviations,
// the longer words it is a prefix of, and for words the catalog lacks, the words one or two typos away
// (sahilm/fuzzy for dropped letters, an edit distance for the rest). A tool scores the best term of each group, a
// bonus for matching more of the query's distinct words, and a little more when a word is written exactly as in the
// tool's name, label, source name or description. A query that names a tool (its id, an identifier-shaped name, a
// quoted name, or the whole query) ranks that tool first. A request of more than six content words is ranked as a
// request, with its own posting weights and a small bonus for a tool whose name's action (create, list, delete
// ...) is one the request asks for, which decides between look-alikes; shorter queries are not affected. An empty
// query or one that matches nothing returns no hits, and ties are broken by id, so results are deterministic.
// On a large catalog a search skips the tools that cannot reach its top k (MaxScore pruning, with the tools near
// the top scored again in full) and returns exactly what scoring every tool would, scores included.
// [Catalog.Explain] shows, with the search's own scoring, what each query word matched in a tool and added.
//
// The ranker is measured, not guessed: TestSearchQuality compares hit@1, hit@5, all@5 and MRR@10 with a plain BM25
// baseline on the development sets under testdata (tools written here with short agent-phrased queries, real
// ChatGPT plugins with real user requests, real MCP tools with long requests of several needs, BFCL's
// user-contributed functions with requests carrying their arguments; testdata/README.md says which were tuned
// on). Run it with -v for the table and ablations; the rankings goldens under testdata hold every query's top ten. The command `toolsearch search --catalog
// FILE --batch QUERIES.jsonl` runs the same ranking on any catalog file (see [ParseFile]).
package catalog
