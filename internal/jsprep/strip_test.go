package jsprep

import (
	"strings"
	"testing"

	"github.com/evanw/esbuild/pkg/api"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stripCorpus is TypeScript as a model writes it in a script, and constructs the stripper must refuse (they need
// a real transform, or it cannot be sure of them), which then go to esbuild.
var stripCorpus = []string{
	"interface Hit { name: string }\nconst hits: Hit[] = await openclaw.tools.search('weather', {limit: 3});\nreturn hits.map((h: Hit): string => h.name)",
	"const hits: Array<{id: string}> = await openclaw.tools.search('web search')\nreturn hits[0].name",
	"interface Hit { id: string; score?: number }\nconst h: Hit = {id: 'a'}\nreturn h.id",
	"type Mode = 'drip' | 'flood'\nconst m: Mode = 'drip'\nreturn m",
	"const v = JSON.parse('{\"a\":1}') as {a: number}\nreturn v.a",
	"const c = {limit: 3} satisfies {limit: number}\nreturn c.limit",
	"function f(a: number, b?: number) { return a + (b ?? 10) }\nreturn f(1)",
	"async (): Promise<number> => { const n: number = 12; return n }",
	"async function main(): Promise<string> {\n  const s: string = 'ts'\n  return s\n}",
	"export default async function (): Promise<number[]> { return [1] }",
	"const xs: number[] = [1, 2, 3]\nxs.length as number",
	"let n: number = 2\nif (n > 1) { return n * 10 }\nreturn 0",
	"let a: number = 1, b: string = 'x', c = a > 0 ? b : 'y'\nreturn c",
	"const el = document!.body!.firstChild!\nreturn el",
	"let m: Map<string, number[]> | undefined\nm = new Map()\nm.set('a', [1])\nreturn m.get('a')![0]",
	"type Fn = (x: number, y?: string) => Promise<void>\nconst f: Fn = async (x: number) => {}\nreturn typeof f",
	"const {a, b}: {a: number; b: string} = {a: 1, b: 'x'}\nconst [c, d]: [number, string] = [a, b]\nreturn [c, d]",
	"const results = await Promise.all(ids.map(async (id: string, i: number): Promise<{id: string, ok: boolean}> => {\n  const r = await openclaw.tools.call(id, {} as Record<string, unknown>)\n  return {id, ok: !r.result.isError}\n}))\nreturn results",
	"const xs = [3, 1, 2]\nxs.sort((a: number, b: number) => a - b)\nreturn xs as number[]",
	"function pick(o: {[k: string]: unknown}, ...keys: string[]): unknown[] { return keys.map(k => o[k]) }\nreturn pick({a: 1}, 'a')",
	"const t = `total: ${(1 as number) + 2} of ${[1, 2].length}`\nreturn t",
	"let s: string | null = null\nfor (const x of [1, 2] as number[]) { s = (s ?? '') + x }\nreturn s!",
	"const r = /a+b/g.test('aab') as boolean\nreturn r ? 1 : 2",
	"const data: unknown = JSON.parse('[1]')\nif (Array.isArray(data)) { return (data as number[]).length }\nreturn -1",
	"let x!: number\nx = 3\nreturn x",
	"const o = {a: 1, b: 'two'} as const\nreturn o.b",
	"const x: number = 1\nif (x) {} as(1)\nreturn x",
	// Refused: each needs esbuild.
	"const f = function (this: Window, x: number) { return x }\nreturn f(1)",
	"const xs = [1] as readonly number[]\nreturn xs",
	"type Deep<T> = { [K in keyof T]: Deep<T[K]> }\nreturn 1",
	"enum Color { Red, Green = 5 }\nreturn [Color.Red, Color.Green, Color[5]]",
	"class A { private x: number; constructor(public y: number) { this.x = y * 2 } }\nreturn new A(2).y",
	"function first<T>(xs: T[]): T { return xs[0] }\nreturn first<number>([5, 6])",
	"const id = <T,>(x: T): T => x\nreturn id(8)",
	"abstract class B { abstract f(): number }\nreturn 1",
	"declare const later: number\nreturn 1",
	"const m = new Map<string, number>([['a', 1]])\nreturn m.get('a')! + 1",
	"const a = true, b = 2\nconst c = a ? (b) : (x: number): number => x\nreturn c",
	"type C<T> = T extends string ? 'yes' : 'no'\nreturn 1",
	"let a: number = 1, b = 2\nif (a) !b\nreturn b",
}

// transformed is esbuild's output for code, as TypeScript or JavaScript: esbuild prints both from its syntax
// tree, so a stripper that erased exactly the types gives the same text as the full transform.
func transformed(t testing.TB, code string, loader api.Loader) (string, bool) {
	t.Helper()
	res := api.Transform(code, api.TransformOptions{Loader: loader, Target: api.ESNext, LegalComments: api.LegalCommentsNone})
	return string(res.Code), len(res.Errors) == 0
}

// TestStripTypesMatchesEsbuild is the differential test of the fast path: whatever it strips, esbuild prints
// exactly as it prints its own transform of the TypeScript, and every position in it is where it was.
func TestStripTypesMatchesEsbuild(t *testing.T) {
	stripped := 0
	for _, code := range stripCorpus {
		pre, fix, err := preprocess(code)
		require.NoError(t, err, code)
		var decls []string
		if fix.def {
			decls = append(decls, defaultName)
		}
		input := head(false, false, decls...) + pre.text + tail(fix.def)
		out, ok := stripTypes(input)
		if !ok {
			continue
		}
		if _, parses := analyze(out); !parses {
			continue // Read sends it to esbuild
		}
		stripped++
		want, ok := transformed(t, input, api.LoaderTS)
		require.True(t, ok, "esbuild refuses what the stripper accepted:\n%s", code)
		got, ok := transformed(t, out, api.LoaderJS)
		require.True(t, ok, code)
		assert.Equal(t, want, got, "the stripper changed the meaning of\n%s\nto\n%s", code, out)
		assert.Equal(t, len(input), len(out))
		assert.Equal(t, strings.Count(input, "\n"), strings.Count(out, "\n"))
	}
	// Most of the corpus is the typical syntax the fast path is for.
	assert.GreaterOrEqual(t, stripped, 24, "the fast path took too few of the typical scripts")
}

// The typical script of the benchmarks, the constructs one by one, and what must go to esbuild.
func TestStripTypesTakesTypicalScripts(t *testing.T) {
	for _, code := range stripCorpus[:27] { // up to "Refused"
		s, err := Read(code)
		require.NoError(t, err, code)
		assert.True(t, s.TypeScript, code)
		assert.Nil(t, s.srcMap, "stripped, not transformed: %s", code)
	}
	for _, code := range stripCorpus[27:39] {
		s, err := Read(code)
		require.NoError(t, err, code)
		assert.NotNil(t, s.srcMap, "needs esbuild: %s", code)
	}
}

// FuzzStripTypes holds the stripper to esbuild on any input: when it strips something that then parses as
// JavaScript, esbuild must accept the TypeScript and print both the same.
func FuzzStripTypes(f *testing.F) {
	for _, code := range stripCorpus {
		f.Add(code)
	}
	f.Fuzz(func(t *testing.T, code string) {
		if nodes(code) > MaxTypeScriptNodes || strings.Count(code, "=>") > MaxTypeScriptArrows {
			return
		}
		input := head(false, false) + code + tail(false)
		if _, js := analyze(input); js && !mayHaveTypeArguments(input) {
			return // Read runs it as JavaScript, without stripping
		}
		out, ok := stripTypes(input)
		if !ok {
			return
		}
		if _, parses := analyze(out); !parses {
			return
		}
		// The JavaScript parser takes some code esbuild refuses (`const a` without a value): then esbuild must
		// refuse the stripped code too, or the stripper made it valid.
		want, wantOK := transformed(t, input, api.LoaderTS)
		got, gotOK := transformed(t, out, api.LoaderJS)
		if wantOK != gotOK {
			t.Fatalf("esbuild accepts the TypeScript: %v, the stripped code: %v\n%s\nstripped:\n%s", wantOK, gotOK, code, out)
		}
		if got != want {
			t.Fatalf("the stripper changed the meaning of\n%s\nstripped:\n%s\nesbuild:\n%s\nstripped, printed:\n%s", code, out, want, got)
		}
	})
}
