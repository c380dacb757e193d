package jsprep

import (
	"fmt"
	"strings"
	"unicode/utf16"

	"github.com/evanw/esbuild/pkg/api"
)

// MaxNodes bounds the nested constructs (see nodes) of code the parsers are given. Both recurse once per level
// of nesting, esbuild with a few KiB of Go stack per level: unbounded, 256 KiB of "!" or "a.b.b.b..." exhausts
// the Go stack, which no recover catches. Code with more skips both parsers and is evaluated as written, as the
// body of an async function, where the interpreter's own stack limit applies: a plain script with a top-level
// return runs exactly as it would have. The limit holds scripts of about 40 KiB of ordinary code; models write
// a few.
//
// MaxArrows bounds arrow functions the same way: both parsers take time that grows with the square of their
// nesting (goja copies each function's source text, esbuild backtracks; 2,700 nested arrows take goja 0.3 s
// and 1,300 take esbuild seconds and 200 MiB).
const (
	MaxNodes  = 8192
	MaxArrows = 256
)

// MaxTypeScriptNodes and MaxTypeScriptArrows are the tighter bounds of the TypeScript transform: its time grows
// faster than linearly with nested statements, its output, indented per level, with their square, and its time
// with the square of nested arrows. Within the bounds no input takes either parser more than a few tens of
// milliseconds (BenchmarkPrepareHostile); TypeScript past them (about 6 KiB of ordinary code) is left to the
// interpreter, which rejects its type syntax with a note saying why (Script.Unparsed).
const (
	MaxTypeScriptNodes  = 1024
	MaxTypeScriptArrows = 128
)

// Boot is the global function the script calls with (call, main): main is the model's code as an async
// function (or a plain one, when the code cannot await: see head); when call is true the code was one of the
// function forms and a function it results in is called and awaited too.
const Boot = "__ts_boot"

// defaultName holds an `export default` value until the end of the body.
const defaultName = "__ts_default"

// Script is code prepared to run.
type Script struct {
	// Source is the complete script to evaluate: one call of Boot.
	Source string
	// TypeScript reports that the code went through the TypeScript transform.
	TypeScript bool
	// Form says how the code's result is found, for logs and tests: "return" (the code returns it or has
	// no result), "expression" (its last expression), "function" (it is one function, called), "default"
	// (its export default).
	Form string

	edits  []insertion // insertions made after parsing, in Source coordinates
	srcMap *sourceMap  // esbuild output -> input, when TypeScript
	out    string      // esbuild's output and input: source maps count UTF-16 units, QuickJS bytes
	in     string
	pre    []insertion // insertions made before parsing, in the parsed input's coordinates
	lines  int         // lines of the code as written

	// Unparsed, when set, says why the code was evaluated as written, without the TypeScript transform or
	// the script forms: callers add it to a syntax error, which such code may well be.
	Unparsed string
	// Unread says Prepare passed the code through without reading it (see Prepare).
	Unread bool

	sync bool // the code cannot await: main is a plain function (see head)
}

// SyntaxError is code that neither parses as JavaScript nor as TypeScript, or uses a form the sandbox does not
// have (a static import). Line and Column are 1-based, in the code as written.
type SyntaxError struct {
	Message string
	Line    int
	Column  int
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("%s (line %d, column %d)", e.Message, e.Line, e.Column)
}

// Prepare is Read's fast path: code that visibly returns at its top level (a `return` outside every brace) needs
// no form, so it is passed through unread, as the body of an async function, with Script.Unread set; if the
// interpreter finds a syntax error in it before running anything, the caller reads it again with Read, which
// may find TypeScript. Reading costs more than the rest of a cold run's host work, and most scripts return.
func Prepare(code string) (*Script, error) {
	if strings.IndexByte(code, 0) < 0 && !mayHaveTypeArguments(code) && !typeHints(code) && topLevelReturn(code) &&
		nodes(code) <= MaxNodes && !hasModuleSyntax(code) {
		s := unparsed(code, "")
		s.Unread = true
		return s, nil
	}
	return Read(code)
}

// typeHints reports code that is probably TypeScript: an annotated variable or first parameter, a return type,
// a non-null "!", a cast, an interface, type alias or enum. Prepare reads such code instead of passing it through
// unread, since the interpreter would only refuse it (a failed run costs far more than the few µs of reading
// plain code that merely looks typed). It is a scan, not a parse: a wrong answer either way costs only time.
func typeHints(code string) bool {
	for _, w := range []string{"interface ", "type ", "enum ", "namespace ", "declare ", " as ", " satisfies "} {
		for at := 0; ; {
			i := strings.Index(code[at:], w)
			if i < 0 {
				break
			}
			i += at
			at = i + 1
			if w[0] == ' ' || i == 0 || !isIdent(code[i-1]) && code[i-1] != '.' {
				return true
			}
		}
	}
	for i := 0; i < len(code); i++ {
		switch code[i] {
		case ':':
			j := i - 1
			for j >= 0 && (code[j] == ' ' || code[j] == '\t') {
				j--
			}
			if j >= 0 && code[j] == '?' {
				j--
			}
			if j >= 0 && code[j] == ')' {
				return true // a return type (or a parenthesized ternary branch)
			}
			end := j + 1
			for j >= 0 && isIdent(code[j]) {
				j--
			}
			if end == j+1 {
				continue
			}
			word := j + 1
			for j >= 0 && (code[j] == ' ' || code[j] == '\t') {
				j--
			}
			if j >= 0 && code[j] == '(' {
				return true // (name: T
			}
			for _, decl := range []string{"let", "const", "var"} {
				if j+1 >= len(decl) && code[j+1-len(decl):j+1] == decl && j+1 < word {
					return true // let name: T
				}
			}
		case '!':
			if i > 0 && i+1 < len(code) && (isIdent(code[i-1]) || code[i-1] == ')' || code[i-1] == ']') &&
				(code[i+1] == '.' || code[i+1] == ')' || code[i+1] == '[' || code[i+1] == ';') {
				return true
			}
		}
	}
	return false
}

// Read turns code into a Script. Its error is a *SyntaxError for code that is neither JavaScript nor
// TypeScript the sandbox can run (anything else would be a broken source map from esbuild). Code it cannot read
// safely (past MaxNodes or MaxArrows, or containing a NUL) is passed through as the body of an async function,
// for the interpreter to run or reject; it never panics, and its work is bounded by the limits above.
func Read(code string) (*Script, error) {
	if strings.IndexByte(code, 0) >= 0 {
		return unparsed(code, ""), nil // the engine rejects it with its own message
	}
	n := nodes(code)
	if n > MaxNodes || strings.Count(code, "=>") > MaxArrows {
		return unparsed(code, fmt.Sprintf("the code has more than %d operators, brackets and keywords or more "+
			"than %d arrow functions, so it ran as plain JavaScript, unparsed: no TypeScript, no script forms",
			MaxNodes, MaxArrows)), nil
	}
	pre, fix, err := preprocess(code)
	if err != nil {
		return nil, err
	}
	var decls []string
	if fix.def {
		decls = append(decls, defaultName)
	}
	input := head(false, false, decls...) + pre.text + tail(fix.def)

	s := &Script{pre: pre.edits, lines: lines(code), sync: cannotAwait(code)}
	if !mayHaveTypeArguments(pre.text) {
		if a, ok := analyze(input); ok {
			s.finish(input, a, fix, decls)
			return s, nil
		}
	}

	if n > MaxTypeScriptNodes || strings.Count(code, "=>") > MaxTypeScriptArrows {
		return unparsed(code, fmt.Sprintf("code with more than %d operators, brackets and keywords or %d arrow "+
			"functions is not read as TypeScript", MaxTypeScriptNodes, MaxTypeScriptArrows)), nil
	}
	if !mayHaveTypeArguments(pre.text) {
		// Types only, as a model writes them: blanked where they stand, so positions need no source map and no
		// esbuild run (about 0.8 ms). Anything the stripper is not sure of goes to esbuild below.
		if stripped, ok := stripTypes(input); ok {
			if a, ok := analyze(stripped); ok {
				s.TypeScript = true
				s.finish(stripped, a, fix, decls)
				return s, nil
			}
		}
	}
	res := api.Transform(input, api.TransformOptions{
		Loader:        api.LoaderTS,
		Sourcemap:     api.SourceMapExternal,
		Target:        api.ESNext,
		LegalComments: api.LegalCommentsNone,
		Sourcefile:    "<input>",
	})
	if len(res.Errors) > 0 {
		return nil, s.syntaxError(res.Errors[0])
	}
	if len(res.Code) > 4*len(input)+4096 {
		// Printing indents every level: deeply nested code comes out quadratically larger.
		return unparsed(code, "its TypeScript transform came out too large"), nil
	}
	sm, err := parseSourceMap(res.Map)
	if err != nil {
		return nil, fmt.Errorf("jsprep: esbuild's source map: %w", err)
	}
	s.TypeScript, s.srcMap, s.in = true, sm, input
	out := strings.TrimSuffix(string(res.Code), "\n")
	s.out = out
	a, ok := analyze(out)
	if !ok {
		// Syntax the JavaScript parser lacks (for await, import()): run as the code says, without a form.
		a = analysis{}
	}
	s.finish(out, a, fix, nil) // esbuild moved the declarations to a line of their own
	return s, nil
}

// unparsed evaluates code as written, as the body of an async function.
func unparsed(code, why string) *Script {
	sync := cannotAwait(code)
	return &Script{Source: head(false, sync) + code + tail(false), Form: "return", lines: lines(code), Unparsed: why, sync: sync}
}

// head is the script's first line; it holds none of the code, so it may change after parsing without moving
// any position in the code. decls are declarations to make there. The parsers always get an async function;
// code that cannot await runs as a plain one (sync), which the prelude's boot settles exactly as an async
// function's return or throw settles its promise, so callbacks run in the same order. It costs the interpreter
// less: no async function state, no promise of its own.
func head(call, sync bool, decls ...string) string {
	fn := "(async function () {"
	if sync {
		fn = "(function () {"
	}
	h := Boot + "(" + fmt.Sprint(call) + ", " + fn
	for _, d := range decls {
		h += " let " + d + ";"
	}
	return h + "\n"
}

func tail(def bool) string {
	if def {
		return "\n;return " + defaultName + ";\n}));\nvoid 0"
	}
	return "\n}));\nvoid 0"
}

// finish applies the analysis to text (the parsed script) and sets Source. decls are the declarations the
// first line of text must keep.
func (s *Script) finish(text string, a analysis, fix fixes, decls []string) {
	call := false
	s.Form = "return"
	if !strings.HasPrefix(text, Boot+"(false, (async function") {
		// Not the shape the parsers were given (a transform that added helpers first): run it as it is.
		s.Source = text
		return
	}
	switch {
	case fix.def:
		call, s.Form = true, "default"
	case fix.function:
		call, s.Form = true, "function"
	case a.wrap && !a.hasReturn:
		call, s.Form = true, a.form
		text, s.edits = insert(text, a.start, a.bodyEnd, a.inSequence)
		decls = append(decls, valueName)
	}
	if i := strings.IndexByte(text, '\n'); i > 0 {
		text = strings.TrimSuffix(head(call, s.sync, decls...), "\n") + text[i:]
	}
	s.Source = text
}

// cannotAwait reports code in which no await can be written: the word does not occur, nor does an escape that
// could spell it. Such code means the same in a plain function as in an async one.
func cannotAwait(code string) bool {
	return !strings.Contains(code, "await") && !strings.Contains(code, `\u`)
}

// valueName holds the value of the last expression: assigning it keeps the expression a statement of its own,
// whose position QuickJS reports (it reports none inside a return statement).
const valueName = "__ts_value"

// insert assigns the value of the expression at start to valueName, and returns it just before bodyEnd (on
// the wrapper's own line, after any comment the code ends with), recording both insertions. No closing
// parenthesis is needed: every expression but a sequence is an assignment's right-hand side as it stands,
// and a sequence gets the assignment before its last element. At a statement's start the assignment comes
// after a semicolon, so that it cannot continue what the line before left open (`let` then a newline would
// declare the name).
func insert(text string, start, bodyEnd int, inSequence bool) (string, []insertion) {
	open := ";" + valueName + " = "
	if inSequence {
		open = valueName + " = "
	}
	const ret = ";return " + valueName + ";"
	out := text[:start] + open + text[start:bodyEnd] + ret + text[bodyEnd:]
	l1, c1 := lineCol(out, start)
	l2, c2 := lineCol(out, bodyEnd+len(open))
	return out, []insertion{{l1, c1, len(open)}, {l2, c2, len(ret)}}
}

// Position maps a position in Source (1-based line and column, as QuickJS reports them) to the code as written.
// ok is false for positions in the script's own wrapping (its first and last lines).
func (s *Script) Position(line, col int) (codeLine, codeCol int, ok bool) {
	if line < 1 {
		return 0, 0, false
	}
	c := max(col-1, 0)
	c = undo(s.edits, line, c)
	if s.srcMap != nil {
		var found bool
		line, c, found = s.srcMap.lookup(line-1, utf16Col(lineText(s.out, line), c))
		if !found {
			return 0, 0, false
		}
		line++
		c = byteCol(lineText(s.in, line), c)
	}
	c = undo(s.pre, line, c)
	// Line 1 of the parsed input is the head; the code starts on line 2.
	codeLine = line - 1
	if codeLine < 1 || codeLine > s.codeLines() {
		return 0, 0, false
	}
	return codeLine, c + 1, true
}

func (s *Script) codeLines() int { return s.lines }

func lines(code string) int { return strings.Count(code, "\n") + 1 }

// lineText is line (1-based) of text, "" past its end.
func lineText(text string, line int) string {
	for ; line > 1; line-- {
		i := strings.IndexByte(text, '\n')
		if i < 0 {
			return ""
		}
		text = text[i+1:]
	}
	if i := strings.IndexByte(text, '\n'); i >= 0 {
		return text[:i]
	}
	return text
}

// utf16Col converts a byte column of line to UTF-16 units.
func utf16Col(line string, col int) int {
	n := 0
	for i, r := range line {
		if i >= col {
			return n
		}
		n += len(utf16.Encode([]rune{r}))
	}
	return n + max(col-len(line), 0)
}

// byteCol converts a UTF-16 column of line to bytes.
func byteCol(line string, col int) int {
	n := 0
	for i, r := range line {
		if n >= col {
			return i
		}
		n += len(utf16.Encode([]rune{r}))
	}
	return len(line) + max(col-n, 0)
}

// syntaxError turns esbuild's first error into a SyntaxError at the code's position.
func (s *Script) syntaxError(m api.Message) *SyntaxError {
	e := &SyntaxError{Message: m.Text, Line: 1, Column: 1}
	if m.Location != nil {
		c := undo(s.pre, m.Location.Line, m.Location.Column)
		e.Line, e.Column = max(m.Location.Line-1, 1), c+1
		if e.Line > s.codeLines() {
			e.Line = max(s.codeLines(), 1)
		}
	}
	return e
}
