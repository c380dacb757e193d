package jsprep

import (
	"errors"
	"strings"
	"testing"

	"github.com/dop251/goja/parser"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestForms(t *testing.T) {
	for _, tc := range []struct {
		code, form string
		ts         bool
	}{
		{"return 1", "return", false},
		{"for (const x of [1]) { if (x) return x }", "return", false},
		{"try { 1 } finally { return 2 }", "return", false},
		{"switch (1) { case 1: return 1 }", "return", false},
		{"lbl: { return 1 }", "return", false},
		{"const f = () => { return 1 }; f()", "expression", false},
		{"function g() { return 1 }\ng()", "expression", false},
		{"let x = 1; x", "expression", false},
		{"", "return", false},
		{"let x = 1;", "return", false},
		{"async () => 1", "expression", false},
		{"async function main() { return 1 }", "function", false},
		{"function main() {}\nconst x = 1", "return", false},
		{"function main() {}\nmain()", "expression", false},
		{"function () { return 1 }", "function", false},
		{"async function* () {}", "function", false},
		{"export default 1", "default", false},
		{"const a: number = 1\na", "expression", true},
		{"async (): Promise<void> => {}", "expression", true},
		{"f<T>(x)", "expression", true},
		{"a < b > (c)", "expression", false},                // spaced comparisons are JavaScript
		{"for await (const x of xs) {}\nx", "return", true}, // goja lacks for await: esbuild reads it, no form
	} {
		t.Run(tc.code, func(t *testing.T) {
			s, err := Read(tc.code)
			require.NoError(t, err)
			assert.Equal(t, tc.form, s.Form)
			assert.Equal(t, tc.ts, s.TypeScript)
			assert.Empty(t, s.Unparsed)
			_, perr := parser.ParseFile(nil, "", s.Source, 0)
			if !strings.Contains(tc.code, "for await") {
				assert.NoError(t, perr, "the prepared script parses: %s", s.Source)
			}
		})
	}
}

func TestPreprocess(t *testing.T) {
	for _, tc := range []struct{ code, want string }{
		{"export default async () => 1", "__ts_default=  async () => 1"},
		{"  export   default x", "  __ts_default=    x"},
		{"export const a = 1", "       const a = 1"},
		{"export async function main() {}", "       async function main() {}"},
		{"import type { A } from 'x';\nA", "                           \nA"},
		{"import type {\n  A,\n} from \"x\"\n1", "             \n    \n          \n1"},
		{"const s = `\nimport(x)`", "const s = `\nimport(x)`"},
		{"x.export = 1\nimport.meta", "x.export = 1\nimport.meta"},
		{"exported = 1", "exported = 1"},
	} {
		p, _, err := preprocess(tc.code)
		require.NoError(t, err, tc.code)
		assert.Equal(t, tc.want, p.text, tc.code)
		assert.Equal(t, len(tc.code), len(p.text), "same length: %q", tc.code)
	}
	for _, code := range []string{"import x from 'y'", "import {a} from 'b'", "import * as n from 'm'", "import 'm'",
		"export default 1\nexport default 2"} {
		_, _, err := preprocess(code)
		var se *SyntaxError
		require.True(t, errors.As(err, &se), code)
		assert.Positive(t, se.Line)
	}
}

func TestPositions(t *testing.T) {
	for _, tc := range []struct {
		name, code, needle string
	}{
		{"plain", "const a = 1\n  null.x", "null.x"},
		{"last expression", "let a = 1; null.x", "null.x"},
		{"typescript", "interface A { b: number }\nconst a: A = {b: 1}\n    a.b.c.d", "a.b.c.d"},
		{"typescript last statement", "const n: number = 1;\n  throw new Error('x' as string)", "throw"},
		{"anonymous function", "  function () {\n  return 1 }", "return 1"},
		{"export default", "export default async () => {\n   oops()\n}", "oops"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Read(tc.code)
			require.NoError(t, err)
			// Where the needle is in the prepared script must map to where it is in the code.
			i := strings.Index(s.Source, tc.needle)
			require.GreaterOrEqual(t, i, 0, s.Source)
			line, col := lineCol(s.Source, i)
			gotLine, gotCol, ok := s.Position(line, col+1)
			require.True(t, ok)
			wantLine, wantCol := lineCol(tc.code, strings.Index(tc.code, tc.needle))
			assert.Equal(t, [2]int{wantLine, wantCol + 1}, [2]int{gotLine, gotCol}, s.Source)
		})
	}
	s, err := Read("1")
	require.NoError(t, err)
	_, _, ok := s.Position(1, 5)
	assert.False(t, ok, "the first line is the wrapper's")
	_, _, ok = s.Position(4, 1)
	assert.False(t, ok, "lines past the code are the wrapper's")
}

func TestSyntaxErrors(t *testing.T) {
	for _, tc := range []struct {
		code      string
		line, col int
	}{
		{"const a: number = 1\nconst b: string = ;", 2, 19},
		{"let x = 1\n  let y: = 2", 2, 10},
		{"interface {", 1, 11},
	} {
		_, err := Read(tc.code)
		var se *SyntaxError
		require.True(t, errors.As(err, &se), "%q: %v", tc.code, err)
		assert.Equal(t, [2]int{tc.line, tc.col}, [2]int{se.Line, se.Column}, "%q: %s", tc.code, se.Message)
	}
}

func TestMayHaveTypeArguments(t *testing.T) {
	for code, want := range map[string]bool{
		"f<T>(x)":                   true,
		"a.call<Result>('t', {})":   true,
		"new Map<string, number>()": true,
		"a < b > (c)":               false,
		"xs.map(x => (x))":          false,
		"if (i<n && m>(k)) {}":      true, // read by the TypeScript parser, which finds comparisons
		"a->(b)":                    false,
	} {
		assert.Equal(t, want, mayHaveTypeArguments(code), code)
	}
}

func TestVLQ(t *testing.T) {
	v, err := decodeVLQ("AAgBC")
	require.NoError(t, err)
	assert.Equal(t, []int{0, 0, 16, 1}, v)
	_, err = decodeVLQ("g")
	assert.Error(t, err)
	_, err = decodeVLQ("!")
	assert.Error(t, err)
}

// hostile are inputs built to make a parser recurse, backtrack or allocate without bound, each at the largest
// source the sandbox accepts.
func hostile(size int) map[string]string {
	ts := "let a: number = 1\n"
	rep := func(s string, tail string) string { return strings.Repeat(s, (size-len(ts)-len(tail))/len(s)) + tail }
	return map[string]string{
		"unary":         rep("!", "x"),
		"unary ts":      ts + rep("!", "x"),
		"members ts":    ts + rep("a.", "b"),
		"calls ts":      ts + "f" + rep("()", ""),
		"parens":        rep("(", ""),
		"arrows":        rep("x=>", "1"),
		"arrows ts":     ts + rep("x=>", "1"),
		"ternary ts":    ts + rep("a?b:", "c"),
		"assign":        rep("a=", "1"),
		"nested ifs ts": ts + rep("if(a)", "1"),
		"nested dos ts": ts + strings.Repeat("do ", size/24) + "1" + strings.Repeat(";while(0)", size/24),
		"labels ts":     ts + rep("l:", "1"),
		"templates ts":  ts + strings.Repeat("`${", size/6) + strings.Repeat("}`", size/6),
		"generics":      "let a: " + rep("A<", "B") + " = 1",
		"conditional":   "type A = " + rep("B extends C ? D : ", "E"),
		"keyof":         "let a: " + rep("keyof ", "B") + " = 1",
		"strings":       rep("'((((((((';", ""),
		"comment":       "/*" + rep("!", "*/1"),
		"many arrows":   ts + rep("f(x => x);", ""),
	}
}

// TestPrepareHostile: no input crashes the host (a Go stack overflow is fatal) or keeps the transform busy for
// long; each either prepares or is a SyntaxError.
func TestPrepareHostile(t *testing.T) {
	for _, size := range []int{256 << 10, 4 << 10, 1 << 10} {
		for name, code := range hostile(size) {
			if p, err := Prepare(code); err == nil && p.Unread {
				continue
			}
			s, err := Read(code)
			if err != nil {
				var se *SyntaxError
				require.True(t, errors.As(err, &se), "%s at %d bytes: %v", name, size, err)
				continue
			}
			// Bounded output: the transform's limit (4x its input and 4 KiB) plus what the forms insert.
			assert.LessOrEqual(t, len(s.Source), 4*len(code)+8192, name)
		}
	}
}

func TestLimitsSendCodeUnparsed(t *testing.T) {
	big := strings.Repeat("a.b.c;", MaxNodes/2+1) + "1"
	s, err := Read("return 1;" + big)
	require.NoError(t, err)
	assert.Contains(t, s.Unparsed, "plain JavaScript")
	ts := "let a: number = 1;" + strings.Repeat("a.b.c;", MaxTypeScriptNodes/2+1)
	s, err = Read(ts)
	require.NoError(t, err)
	assert.Contains(t, s.Unparsed, "not read as TypeScript")
	arrows := "let a = 1;" + strings.Repeat("f(x => x);", MaxArrows+1)
	s, err = Read(arrows)
	require.NoError(t, err)
	assert.Contains(t, s.Unparsed, "arrow functions")
	s, err = Read("let a: number = 1;" + strings.Repeat("f(x => x);", MaxTypeScriptArrows+1))
	require.NoError(t, err)
	assert.Contains(t, s.Unparsed, "not read as TypeScript")
	// Just under the limits, TypeScript is read.
	s, err = Read("let a: number = 1;" + strings.Repeat("f(x => x);", MaxTypeScriptArrows))
	require.NoError(t, err)
	assert.True(t, s.TypeScript)
	assert.Empty(t, s.Unparsed)
}

// Columns are bytes, as QuickJS reports them, on both sides of the source map (which counts UTF-16 units).
func TestPositionsNotASCII(t *testing.T) {
	for _, code := range []string{"let s: string = 'ééé'; null.x", "let s: string = '😀'; null.x", "let é = 'ü'\n  const t: number = 1; null.x"} {
		s, err := Read(code)
		require.NoError(t, err)
		require.True(t, s.TypeScript)
		i := strings.Index(s.Source, "null.x")
		line, col := lineCol(s.Source, i)
		gotLine, gotCol, ok := s.Position(line, col+1)
		require.True(t, ok)
		wantLine, wantCol := lineCol(code, strings.Index(code, "null.x"))
		assert.Equal(t, [2]int{wantLine, wantCol + 1}, [2]int{gotLine, gotCol}, code)
	}
	assert.Equal(t, 3, utf16Col("a😀b", 5))
	assert.Equal(t, 5, byteCol("a😀b", 3))
	assert.Equal(t, 3, byteCol("aéb", 2))
}

// goja's parser panics on some malformed code; Prepare must not (the code goes on to esbuild, which rejects it).
func TestParserPanicIsContained(t *testing.T) {
	_, err := Read("function!0[...0(")
	var se *SyntaxError
	require.True(t, errors.As(err, &se), "%v", err)
}

// TestPrepareFastPath: code that visibly returns at its top level skips the parse; anything else is read.
func TestPrepareFastPath(t *testing.T) {
	for code, unread := range map[string]bool{
		"return 1":                            true,
		"const a = 1\n  return a":             true,
		"// a comment\nreturn 1":              true,
		"const s = '{'\nreturn s":             true,
		"const s = `\n{\n`\nreturn s":         true,
		"/* { */\nreturn 1":                   true,
		"if (x) {\n  return 1\n}\n2":          false, // a return in a block needs the parse
		"async () => {\n  return 1\n}":        false,
		"const r = 1; r":                      false,
		"const n: number = 1\nreturn n":       false, // typed: read at once, not refused by the interpreter first
		"interface H { a: string }\nreturn 1": false,
		"return (x as any).y":                 false,
		"const v = await f('q', {limit: 3, a: b ? c : d})\nreturn v": true, // object literals and ternaries are no hint
		"const r = f<T>(x)\nreturn r":                                false,
		"export default 1\nreturn 2":                                 false,
		"const s = 'return'\nx":                                      false,
		"const f = function () {\nreturn 1\n}\nf":                    false,
		"x = 1 // return\nx":                                         false,
	} {
		p, err := Prepare(code)
		require.NoError(t, err, code)
		assert.Equal(t, unread, p.Unread, code)
		if unread {
			assert.Equal(t, "return", p.Form)
			assert.Equal(t, head(false, cannotAwait(code))+code+tail(false), p.Source)
		}
	}
}
