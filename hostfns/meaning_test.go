package hostfns

import (
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/internal/jsprep"
	"github.com/toolsearch/toolsearch/wasm"
)

// forceTypeScript makes code go through the TypeScript transform: a type alias, which the transform erases, so
// the code keeps its statements (and its form).
const forceTypeScript = "type __Probe = number;\n"

// plainMeanings are JavaScript whose meaning a careless transform would change.
var plainMeanings = []string{
	"let a = 1\nlet b = a\n(function () { return 2 })\nreturn b",
	"return /[/]+/.test('//') && 4 / 2 / 1",
	"const o = { get x() { return 7 }, ['y' + 1]: 2 }\nreturn [o.x, o.y1]",
	"outer: for (const i of [1, 2]) { for (const j of [1, 2]) { if (j === 2) continue outer; if (i === 2) break outer } }\nreturn 'ok'",
	"function f() { return arguments.length }\nreturn f(1, 2, 3)",
	"return typeof notDeclared",
	"class A { x = 1; static y = 2; #z = 3; get z() { return this.#z } }\nreturn [new A().x, A.y, new A().z]",
	"const o = null\nreturn [o?.a, o ?? 'd', 0 || 'e', 0 ?? 'f']",
	"return (2n ** 64n).toString()",
	"const tag = (s, ...v) => s.raw.join('|') + v.join(',')\nreturn tag`a${1}b${2}c`",
	"function* g() { yield 1; yield 2 }\nreturn [...g()]",
	"const { a = 5, ...rest } = { b: 1, c: 2 }\nreturn [a, rest]",
	"let x = (1, 2, 3)\nreturn x",
	"var v = 1; { var v = 2 }\nreturn v",
	"return [1, 2, 3].map(x => ({ x }))",
	"return 0.1 + 0.2",
	"return 'a\\u2028b'.length",
	"label: { break label }\nreturn 'after'",
	"let i = 0\ndo i++; while (i < 3)\nreturn i",
	"return [typeof function () {}, typeof class {}, void 0]",
	"let s = 0; for (const k in { a: 1, b: 2 }) s++\nreturn s",
	"return new Date(0).toISOString()",
	"return JSON.stringify({ a: [1, { b: 2 }] })",
	"try { null.x } catch { return 'caught' }",
	"return (async () => { await null; return 'async' })()",
	"let\r0", // the final expression's assignment must not become a declaration of `let`
	"let\nx",
}

// TestTypeScriptKeepsJavaScriptMeaning: code sent through the transform (as f<T>(x) lookalikes and syntax goja
// lacks are) means what it means as JavaScript. The one exception is by design: in TypeScript, a < b > (c) is a
// call with a type argument (TestTypeScript has both readings).
func TestTypeScriptKeepsJavaScriptMeaning(t *testing.T) {
	for _, code := range plainMeanings {
		requireSameMeaning(t, code)
	}
}

func requireSameMeaning(t *testing.T, code string) {
	t.Helper()
	plain, err := jsprep.Read(code)
	require.NoError(t, err, code)
	require.False(t, plain.TypeScript, code)
	ts, err := jsprep.Read(forceTypeScript + code)
	require.NoError(t, err, code)
	require.True(t, ts.TypeScript, code)

	a, errA := run(t, code, nil, nil)
	b, errB := run(t, forceTypeScript+code, nil, nil)
	require.Equal(t, errA == nil, errB == nil, "%s\nplain: %v\ntypescript: %v", code, errA, errB)
	if errA != nil {
		assert.Equal(t, Describe(errA).Kind, Describe(errB).Kind, code)
		return
	}
	var va, vb any
	require.NoError(t, json.Unmarshal(a.Value, &va))
	require.NoError(t, json.Unmarshal(b.Value, &vb))
	assert.Equal(t, va, vb, code)
	assert.Equal(t, a.Logs, b.Logs, code)
}

// FuzzTypeScriptKeepsJavaScriptMeaning: any plain JavaScript means the same through the transform: the same value
// and logs, or the same kind of failure. Inputs that read differently as TypeScript by design (a < b > (c)), that
// print functions or stacks (whose text the transform reformats), read the clock or random numbers, that
// hold numbers of 16 digits or more (esbuild rewrites number literals, and rounds legacy octal ones past 2^53
// differently), or that hit a limit (the transformed code spends different fuel) are skipped.
var (
	longNumber = regexp.MustCompile(`[0-9]{16}`)
	droppable  = regexp.MustCompile("(?:^|[;\n{}])\\s*(?:!|~|-|\\+|void\\b|typeof\\b)[\\s!~+-]*[0-9'\"`.]")
)

func FuzzTypeScriptKeepsJavaScriptMeaning(f *testing.F) {
	for _, code := range plainMeanings {
		f.Add(code)
	}
	f.Fuzz(func(t *testing.T, code string) {
		if strings.Contains(code, "<") || strings.Contains(code, "toString") || strings.Contains(code, "String(") ||
			strings.Contains(code, "stack") || strings.Contains(code, "+ ''") || strings.Contains(code, "Date") ||
			strings.Contains(code, "random") || longNumber.MatchString(code) || len(code) > 2048 {
			return
		}
		plain, err := jsprep.Read(code)
		if err != nil || plain.TypeScript || plain.Unparsed != "" {
			return
		}
		ts, err := jsprep.Read(forceTypeScript + code)
		if err != nil || !ts.TypeScript {
			return // esbuild is stricter than goja about some early errors; the interpreter would agree with it
		}
		if ts.Form != plain.Form || droppable.MatchString(code) {
			// esbuild drops an expression statement that is a unary operator on a literal (`void 0`, `!'0'`,
			// `!00`), which changes which expression is last: the one way the transform changes a value. No
			// model ends a script that way.
			return
		}
		opts := &RunOptions{Timeout: 500 * time.Millisecond, Fuel: 20_000_000}
		a, errA := run(t, code, nil, opts)
		b, errB := run(t, forceTypeScript+code, nil, opts)
		var limit *wasm.LimitError
		if errors.As(errA, &limit) || errors.As(errB, &limit) {
			return
		}
		if (errA == nil) != (errB == nil) {
			t.Fatalf("%q\nplain: %v\ntypescript: %v", code, errA, errB)
		}
		if errA != nil {
			if ka, kb := Describe(errA).Kind, Describe(errB).Kind; ka != kb {
				t.Fatalf("%q: %s as JavaScript, %s through the transform (%v / %v)", code, ka, kb, errA, errB)
			}
			return
		}
		if string(a.Value) != string(b.Value) || strings.Join(a.Logs, "\n") != strings.Join(b.Logs, "\n") {
			t.Fatalf("%q: %s %q as JavaScript, %s %q through the transform", code, a.Value, a.Logs, b.Value, b.Logs)
		}
	})
}
