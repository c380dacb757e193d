package jsprep

import (
	"strings"
)

// insertion is text put into a script after the code was written: n bytes at column col (0-based bytes) of
// line (1-based), in the coordinates of the text that contains it.
type insertion struct{ line, col, n int }

// undo maps column c of line in a text with insertions back to the text without them. A position inside an
// inserted text maps to where it was inserted.
func undo(ins []insertion, line, c int) int {
	for i := len(ins) - 1; i >= 0; i-- {
		in := ins[i]
		if in.line != line || c < in.col {
			continue
		}
		if c >= in.col+in.n {
			c -= in.n
		} else {
			c = in.col
		}
	}
	return c
}

// lineCol is the 1-based line and 0-based byte column of offset i in text.
func lineCol(text string, i int) (int, int) {
	line := 1 + strings.Count(text[:i], "\n")
	return line, i - (strings.LastIndexByte(text[:i], '\n') + 1)
}

// fixes says what preprocess changed that decides the script's form.
type fixes struct {
	def      bool // an export default became an assignment to defaultName
	function bool // the code is one anonymous function, now returned
}

type preprocessed struct {
	text  string
	edits []insertion // in the parsed input's coordinates (the code starts on line 2)
}

// preprocess rewrites what neither parser accepts in a function body, keeping every line and, except for an
// anonymous function's "return (", every column: module syntax at the start of a line, and a script that is
// one anonymous function (a statement may not start with `function (`).
//
//   - `export default X` becomes `__ts_default=X` (same length); the body returns it at the end, as a module's
//     default export is its answer.
//   - `export` before a declaration is blanked: there is no module to export to.
//   - `import type ...` is blanked (types only, as TypeScript erases it); any other static import is a
//     SyntaxError: the sandbox has no modules, and nothing could be imported that gives a capability.
func preprocess(code string) (preprocessed, fixes, error) {
	var f fixes
	b := []byte(code)
	for start := 0; start < len(b); {
		end := start + strings.IndexByte(code[start:], '\n')
		if end < start {
			end = len(b)
		}
		i := start
		for i < end && (b[i] == ' ' || b[i] == '\t') {
			i++
		}
		rest := code[i:end]
		switch {
		case hasWord(rest, "export") && hasWord(strings.TrimLeft(rest[6:], " \t"), "default"):
			j := i + 6 + (len(rest[6:]) - len(strings.TrimLeft(rest[6:], " \t")))
			if f.def {
				line, col := lineCol(code, i)
				return preprocessed{}, f, &SyntaxError{Message: "only one export default is allowed", Line: line, Column: col + 1}
			}
			f.def = true
			// "export" + spaces + "default" is at least 14 bytes: the assignment and spaces fill them.
			n := j + len("default") - i
			copy(b[i:], defaultName+"="+strings.Repeat(" ", n-len(defaultName)-1))
		case hasWord(rest, "export") && startsDeclaration(strings.TrimLeft(rest[6:], " \t")):
			copy(b[i:], "      ")
		case hasWord(rest, "import") && isStaticImport(rest[6:]):
			after := strings.TrimLeft(rest[6:], " \t")
			if !hasWord(after, "type") {
				line, col := lineCol(code, i)
				return preprocessed{}, f, &SyntaxError{Line: line, Column: col + 1, Message: "import declarations are not " +
					"available: the sandbox has no modules; openclaw.tools and console are globals"}
			}
			stop := importEnd(code, i)
			for k := i; k < stop; k++ {
				if b[k] != '\n' {
					b[k] = ' '
				}
			}
		}
		start = end + 1
	}
	text := string(b)
	if k, ok := anonymousFunction(text); ok {
		f.function = true
		line, col := lineCol(text, k)
		return preprocessed{
			text:  text[:k] + "return (" + text[k:] + "\n)",
			edits: []insertion{{line + 1, col, len("return (")}},
		}, f, nil
	}
	return preprocessed{text: text}, f, nil
}

// hasWord reports whether s starts with the word w (not a longer identifier).
func hasWord(s, w string) bool {
	return strings.HasPrefix(s, w) && (len(s) == len(w) || !isIdent(s[len(w)]))
}

func isIdent(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

func startsDeclaration(s string) bool {
	for _, w := range []string{"const", "let", "var", "function", "async", "class", "enum", "interface", "type",
		"abstract", "declare", "namespace"} {
		if hasWord(s, w) {
			return true
		}
	}
	return false
}

// isStaticImport: after the keyword comes a binding, a brace, a star or a module name, not the "(" of import()
// or the "." of import.meta.
func isStaticImport(after string) bool {
	t := strings.TrimLeft(after, " \t")
	if len(t) == 0 || len(t) == len(after) && t[0] != '{' && t[0] != '*' && t[0] != '"' && t[0] != '\'' {
		return false
	}
	return t[0] != '(' && t[0] != '.'
}

// importEnd is the offset just past an import declaration starting at i: past its module name's closing quote
// (and a semicolon), or the end of its line when it has none.
func importEnd(code string, i int) int {
	for k := i; k < len(code); k++ {
		if c := code[k]; c == '"' || c == '\'' {
			close := strings.IndexByte(code[k+1:], c)
			if close < 0 {
				break
			}
			end := k + 1 + close + 1
			if end < len(code) && code[end] == ';' {
				end++
			}
			return end
		}
	}
	if nl := strings.IndexByte(code[i:], '\n'); nl >= 0 {
		return i + nl
	}
	return len(code)
}

// anonymousFunction finds a script that starts (after spaces and comments) with an anonymous `function (` or
// `async function (`, which only parses as an expression; k is where it starts.
func anonymousFunction(code string) (int, bool) {
	k := skipSpace(code, 0)
	s := code[k:]
	if hasWord(s, "async") {
		s = s[skipSpace(s, 5):]
	}
	if !hasWord(s, "function") {
		return 0, false
	}
	s = s[skipSpace(s, 8):]
	if strings.HasPrefix(s, "*") {
		s = s[skipSpace(s, 1):]
	}
	return k, strings.HasPrefix(s, "(")
}

// skipSpace skips white space and comments from i.
func skipSpace(s string, i int) int {
	for i < len(s) {
		switch {
		case s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r':
			i++
		case strings.HasPrefix(s[i:], "//"):
			nl := strings.IndexByte(s[i:], '\n')
			if nl < 0 {
				return len(s)
			}
			i += nl
		case strings.HasPrefix(s[i:], "/*"):
			e := strings.Index(s[i+2:], "*/")
			if e < 0 {
				return len(s)
			}
			i += 2 + e + 2
		default:
			return i
		}
	}
	return i
}

// nodes is an upper bound of how deeply the parsers may recurse on code: every nested construct, in
// expressions, statements and types alike, has an operator, a bracket or a keyword of its own (a unary "!", a
// call's "(", a member's ".", an arrow's "=>", an "await", a "keyof", ...), so counting those bounds the depth
// of any tree the code can parse to. It over-counts (brackets in strings and comments, left-associative
// chains that the parsers walk in a loop), which only sends large code down the unparsed path.
func nodes(code string) int {
	n := 0
	for i := 0; i < len(code); i++ {
		c := code[i]
		switch {
		case c == '!' || c == '~' || c == '?' || c == '=' || c == '*' || c == '+' || c == '-' || c == '.' ||
			c == '(' || c == '[' || c == '{' || c == '<' || c == '>' || c == ':' || c == '|' || c == '&' ||
			c == '^' || c == '/' || c == '%' || c == '@' || c == '#' || c == '`' || c == '$':
			n++
		case c >= 'a' && c <= 'z' && (i == 0 || !isIdent(code[i-1])):
			j := i + 1
			for j < len(code) && isIdent(code[j]) {
				j++
			}
			if prefixKeywords[code[i:j]] {
				n++
			}
			i = j - 1
		}
	}
	return n
}

// prefixKeywords are the words that nest what follows them (or, for the binary ones, may).
var prefixKeywords = map[string]bool{
	"typeof": true, "void": true, "delete": true, "await": true, "new": true, "yield": true, "as": true,
	"satisfies": true, "keyof": true, "infer": true, "readonly": true, "unique": true, "extends": true,
	"in": true, "instanceof": true, "of": true, "is": true, "asserts": true, "do": true, "else": true,
	"async": true, "function": true, "class": true, "return": true, "throw": true, "case": true,
}

// mayHaveTypeArguments reports code that may hold a TypeScript call with explicit type arguments, `f<T>(x)`,
// which is also valid JavaScript meaning (f < T) > x. Such code goes through the TypeScript parser, which reads
// it as the call when the brackets hold a type and as comparisons otherwise, as tsc does. The check looks for
// an identifier directly followed by "<" and, at most 256 bytes later on the same line, ">(" that is not "=>(".
func mayHaveTypeArguments(code string) bool {
	for i := 1; i+1 < len(code); i++ {
		if code[i] != '>' || code[i+1] != '(' || code[i-1] == '=' || code[i-1] == '-' {
			continue
		}
		for k := i - 1; k > 0 && k >= i-256 && code[k] != '\n'; k-- {
			if code[k] == '<' && isIdent(code[k-1]) {
				return true
			}
		}
	}
	return false
}

// topLevelReturn reports a `return` at the start of a line outside every brace, skipping strings, template
// literals and comments: a return of the body itself. Only a yes matters (it skips the parse), and a wrong yes
// costs only the forms: the code then runs as it always did. Regular expressions are not skipped; a quote or
// brace in one can make it wrong either way, and a string ends at a newline so that one cannot make it wrong
// for long.
func topLevelReturn(code string) bool {
	depth := 0
	lineStart := true
	for i := 0; i < len(code); i++ {
		c := code[i]
		switch {
		case c == '\n':
			lineStart = true
			continue
		case c == ' ' || c == '\t' || c == '\r':
			continue
		case c == '/' && i+1 < len(code) && code[i+1] == '/':
			for i < len(code) && code[i] != '\n' {
				i++
			}
			i--
			continue
		case c == '/' && i+1 < len(code) && code[i+1] == '*':
			end := strings.Index(code[i+2:], "*/")
			if end < 0 {
				return false
			}
			i += 2 + end + 1
			continue
		case c == '"' || c == '\'' || c == '`':
			for i++; i < len(code) && code[i] != c && (c == '`' || code[i] != '\n'); i++ {
				if code[i] == '\\' {
					i++
				}
			}
		case c == '{':
			depth++
		case c == '}':
			depth--
		case lineStart && depth == 0 && hasWord(code[i:], "return"):
			return true
		}
		lineStart = false
	}
	return false
}

// hasModuleSyntax reports a line that starts with export or import, which preprocess rewrites.
func hasModuleSyntax(code string) bool {
	for _, w := range []string{"export", "import"} {
		for i := strings.Index(code, w); i >= 0; {
			j := i - 1
			for j >= 0 && (code[j] == ' ' || code[j] == '\t') {
				j--
			}
			if j < 0 || code[j] == '\n' {
				return true
			}
			next := strings.Index(code[i+1:], w)
			if next < 0 {
				break
			}
			i += 1 + next
		}
	}
	return false
}
