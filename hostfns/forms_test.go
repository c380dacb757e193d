package hostfns

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/internal/jsprep"
)

// TestScriptForms: each form a model writes gives its answer; a top-level return works as it always has.
func TestScriptForms(t *testing.T) {
	for _, tc := range []struct {
		name, code, want string
	}{
		{"top-level return", "return 1 + 1", "2"},
		{"return inside a block", "if (true) { return 'a' }\n'b'", `"a"`},
		{"no result", "let x = 1;", "null"},
		{"last expression", "let x = 1; x", "1"},
		{"last expression after a semicolon", "let x = 1; x + 1;", "2"},
		{"last expression over several lines", "const a = [1, 2]\na\n  .map(v => v * 2)", "[2,4]"},
		{"last expression in parentheses", "const o = {a: 1};\n({...o, b: 2})", `{"a":1,"b":2}`},
		{"awaited last expression", "(await openclaw.tools.search('x'))[0].name", `"web_search"`},
		{"iife not returned", "(async () => { return 2 })()", "2"},
		{"async arrow", "async () => { const r = await openclaw.tools.search('q'); return r[0].name }", `"web_search"`},
		{"async arrow with expression body", "async () => 7", "7"},
		{"arrow", "() => 'sync'", `"sync"`},
		{"async function declaration", "async function main() {\n  return 'main'\n}", `"main"`},
		{"function declaration with a comment", "// the answer\nfunction main() { return 42 }\n", "42"},
		{"anonymous function", "function () { return 'anon' }", `"anon"`},
		{"anonymous async function", "  async function () { return 'anon' }", `"anon"`},
		{"anonymous generator is not called twice", "function* () { yield 1 }", "{}"},
		{"export default async function", "export default async function () {\n  return 3\n}", "3"},
		{"export default named function", "export default async function main() { return 'm' }", `"m"`},
		{"export default arrow", "export default async () => 4", "4"},
		{"export default value after helpers", "const k = 5\nexport default k * 2", "10"},
		{"exported declaration", "export async function main() { return 6 }", "6"},
		{"function declaration with other statements is not called", "const k = 1\nfunction f() { return 9 }", "null"},
		{"a returned function is not called", "return () => 1", "null"},
		{"import type is erased", "import type { Hit } from 'openclaw'\nconst n: number = 1\nn", "1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := run(t, tc.code, nil, nil)
			require.NoError(t, err)
			assert.JSONEq(t, tc.want, string(res.Value))
		})
	}
}

func TestImportsAreRefused(t *testing.T) {
	for _, code := range []string{"import * as std from 'qjs:std'\nreturn 1", "const a = 1\nimport { readFile } from 'fs'", "import 'qjs:os'"} {
		_, err := run(t, code, nil, nil)
		info := requireKind(t, err, "syntax")
		assert.Contains(t, info.Message, "no modules")
	}
	// A dynamic import still resolves to nothing that reaches the host (see TestQuickJSExtrasRemoved).
	res, err := run(t, "const m = await import('qjs:std'); return typeof m", nil, nil)
	require.NoError(t, err)
	assert.JSONEq(t, `"object"`, string(res.Value))
}

// TestTypeScript: each TypeScript construct is stripped and the script runs.
func TestTypeScript(t *testing.T) {
	for _, tc := range []struct {
		name, code, want string
	}{
		{"annotation", "const hits: Array<{id: string}> = await openclaw.tools.search('web search')\nreturn hits[0].name", `"web_search"`},
		{"interface", "interface Hit { id: string; score?: number }\nconst h: Hit = {id: 'a'}\nreturn h.id", `"a"`},
		{"type alias", "type Mode = 'drip' | 'flood'\nconst m: Mode = 'drip'\nreturn m", `"drip"`},
		{"as cast", "const v = JSON.parse('{\"a\":1}') as {a: number}\nreturn v.a", "1"},
		{"generic function", "function first<T>(xs: T[]): T { return xs[0] }\nreturn first<number>([5, 6])", "5"},
		{"generic call in plain JS", "const r = await openclaw.tools.call<Result>('t', {a: 1})\nreturn r.tool", `"t"`},
		{"generic arrow", "const id = <T,>(x: T): T => x\nreturn id(8)", "8"},
		{"enum", "enum Color { Red, Green = 5 }\nreturn [Color.Red, Color.Green, Color[5]]", `[0,5,"Green"]`},
		{"const enum", "const enum E { A = 2 }\nreturn E.A", "2"},
		{"non-null", "const m = new Map<string, number>([['a', 1]])\nreturn m.get('a')! + 1", "2"},
		{"satisfies", "const c = {limit: 3} satisfies {limit: number}\nreturn c.limit", "3"},
		{"optional parameter", "function f(a: number, b?: number) { return a + (b ?? 10) }\nreturn f(1)", "11"},
		{"class with modifiers", "class A { private x: number; constructor(public y: number) { this.x = y * 2 } get(): number { return this.x + this.y } }\nreturn new A(2).get()", "6"},
		{"abstract class and declare", "declare const later: number\nabstract class B { abstract f(): number }\nclass C extends B { f() { return 1 } }\nreturn new C().f()", "1"},
		{"type-only import", "import type { Hit } from './types'\nconst h: Hit | undefined = undefined\nreturn h ?? 'none'", `"none"`},
		{"typed async arrow form", "async (): Promise<number> => { const n: number = 12; return n }", "12"},
		{"typed function form", "async function main(): Promise<string> {\n  const s: string = 'ts'\n  return s\n}", `"ts"`},
		{"typed export default", "export default async function (): Promise<number[]> { return [1] }", "[1]"},
		{"typed last expression", "const xs: number[] = [1, 2, 3]\nxs.length as number", "3"},
		{"top-level return in TypeScript", "let n: number = 2\nif (n > 1) { return n * 10 }\nreturn 0", "20"},
		{"comparisons are not type arguments", "const a = 1, b = 2, c = 3\nreturn a < b && c > (a)", "true"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := run(t, tc.code, nil, nil)
			require.NoError(t, err)
			assert.JSONEq(t, tc.want, string(res.Value))
		})
	}
}

// TestTypeScriptErrorPositions: lines and columns point into the code as written, TypeScript or not.
func TestTypeScriptErrorPositions(t *testing.T) {
	for _, tc := range []struct {
		name, code string
		kind       string
		line       int
		frame      string // the first frame's position
	}{
		{"plain exception", "const a = 1\n\n  null.x", "exception", 3, "<input>:3:3"},
		{"last expression exception", "const a = 1;\n  null.x", "exception", 2, "<input>:2:3"},
		{"typescript exception", "interface A { x: number }\nconst a: A = {x: 1}\n\n    null.y", "exception", 4, "<input>:4:5"},
		{"typescript exception in a function", "function f(x: number): number {\n  throw new Error('e' + x)\n}\nconst v: number = 1\nf(v)", "exception", 2, "<input>:2:"},
		{"typescript syntax error", "const a: number = 1\nconst b: string = ;", "syntax", 2, "<input>:2:19"},
		{"plain syntax error", "const a = 1;\nconst b = ;", "syntax", 2, "<input>:2:11"},
		{"typescript after text that is not ASCII", "let s: string = 'ééé'; null.x", "exception", 1, "<input>:1:27"},
		{"javascript after text that is not ASCII", "let s = 'ééé'; null.x", "exception", 1, "<input>:1:19"},
		{"import", "const a = 1\n  import x from 'y'", "syntax", 2, "<input>:2:3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := run(t, tc.code, nil, nil)
			info := requireKind(t, err, tc.kind)
			assert.Equal(t, tc.line, info.Line, info.Message)
			assert.Contains(t, info.Stack, tc.frame)
		})
	}
}

// TestHostileTypeScript: code built to make the parsers recurse or backtrack without bound, at the largest source
// a run accepts, is refused or run like any other script; the host survives it.
func TestHostileTypeScript(t *testing.T) {
	ts := "let a: number = 1\n"
	for name, code := range map[string]string{
		"nested unary":   ts + strings.Repeat("!", DefaultMaxSourceBytes-len(ts)-1) + "a",
		"nested members": ts + strings.Repeat("a.", (DefaultMaxSourceBytes-len(ts))/2-1) + "b",
		"nested arrows":  ts + strings.Repeat("x=>", (DefaultMaxSourceBytes-len(ts))/3-1) + "1",
		"nested types":   "let a: " + strings.Repeat("A<", DefaultMaxSourceBytes/2-16) + "B = 1",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := run(t, code, nil, nil)
			require.Error(t, err)
			info := Describe(err)
			assert.Contains(t, []string{"syntax", "stack", "exception"}, info.Kind, info.Message)
		})
	}
	// Just within the transform's bounds, nested arrows run.
	res, err := run(t, ts+";("+strings.Repeat("x=>", jsprep.MaxTypeScriptArrows)+"1)(0)", nil, nil)
	require.NoError(t, err)
	assert.JSONEq(t, "null", string(res.Value), "a function is not JSON")
	// Past the transform's bounds the code runs unparsed, and its syntax error says so.
	_, err = run(t, ts+strings.Repeat("a.b.c;", 1100), nil, nil)
	info := requireKind(t, err, "syntax")
	assert.Contains(t, info.Message, "not read as TypeScript")
}

// A script that returns at its top level is run unread; only a syntax error found before anything ran sends it
// to the parser (TypeScript, as here) and runs it again. A SyntaxError the code throws while running does not.
func TestUnreadScriptsRunOnce(t *testing.T) {
	b := &fakeBridge{}
	res, err := run(t, "const r: {tool: string} = await openclaw.tools.call('t', {})\nreturn r.tool", b, nil)
	require.NoError(t, err)
	assert.JSONEq(t, `"t"`, string(res.Value))
	assert.Equal(t, 1, res.Calls)

	b = &fakeBridge{}
	_, err = run(t, "await openclaw.tools.call('t', {})\nconsole.log('ran')\nreturn JSON.parse('{')", b, nil)
	requireKind(t, err, "syntax")
	assert.Len(t, b.seen(), 1, "the script ran once")
}
