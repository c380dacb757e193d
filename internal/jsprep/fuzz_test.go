package jsprep

import (
	"errors"
	"strings"
	"testing"

	"github.com/dop251/goja/parser"
)

// FuzzPrepare: whatever the code, Prepare does not panic, its output is bounded, a SyntaxError points into the
// code, and plain JavaScript comes through as written: taking out what the forms inserted gives back the code
// exactly, and the result still parses.
func FuzzPrepare(f *testing.F) {
	for _, seed := range []string{"return 1", "let x = 1; x", "(async () => { return 2 })()", "async () => 1",
		"async function main() { return 1 }", "function () {}", "export default async function () {}",
		"const a: number = 1\na", "interface A { b: string }", "enum E { A }\nE.A", "f<T>(x)", "a < b > (c)",
		"import type { A } from 'a'\n1", "import x from 'y'", "x!.y", "({a: 1})", "`${1}`\n/x/g.test('x')",
		"label: for (;;) { break label }", "// comment\n/* block */ 1", "if (a) { return } else b", "'\\u2028'; 1",
		"function!0[...0(", "let\n0", "ك0", "``\n0", "#00"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, code string) {
		if p, err := Prepare(code); err == nil && p.Unread {
			// The fast path's reading agrees with the parser's, unless a regular expression or an unclosed
			// string could have misled it (which costs only the forms).
			if r, err := Read(code); err == nil && !r.TypeScript && r.Unparsed == "" && r.Form != "return" &&
				!strings.ContainsAny(code, "/'\"`") {
				t.Fatalf("Prepare saw a top-level return, the parser the form %q", r.Form)
			}
		}
		s, err := Read(code)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("not a SyntaxError: %v", err)
			}
			if se.Line < 1 || se.Line > lines(code) || se.Column < 1 {
				t.Fatalf("position %d:%d outside the code of %d lines", se.Line, se.Column, lines(code))
			}
			return
		}
		if len(s.Source) > 4*len(code)+8192 {
			t.Fatalf("source grew from %d to %d bytes", len(code), len(s.Source))
		}
		if s.TypeScript || s.Unparsed != "" {
			return
		}
		if _, err := parser.ParseFile(nil, "", head(false, false)+code+tail(false), 0); err != nil {
			return // not plain JavaScript as written (a preprocessed module form, say)
		}
		pre, fix, _ := preprocess(code)
		if pre.text != code || fix.def || fix.function {
			return
		}
		back := s.Source
		for i := len(s.edits) - 1; i >= 0; i-- {
			e := s.edits[i]
			off := offset(back, e.line, e.col)
			back = back[:off] + back[off+e.n:]
		}
		_, body, _ := strings.Cut(back, "\n")
		if body != code+strings.TrimPrefix(tail(false), "") {
			t.Fatalf("plain JavaScript did not come through as written:\n%q\n%q", body, code+tail(false))
		}
		// goja accepts some invalid uses of private names ("#0"), with positions that mean nothing; the
		// interpreter rejects the code either way.
		if _, err := parser.ParseFile(nil, "", s.Source, 0); err != nil && !strings.Contains(code, "#") {
			t.Fatalf("the prepared script does not parse: %v\n%s", err, s.Source)
		}
	})
}

// offset is the byte offset of a 1-based line and 0-based column.
func offset(text string, line, col int) int {
	off := 0
	for l := 1; l < line; l++ {
		off += strings.IndexByte(text[off:], '\n') + 1
	}
	return off + col
}
