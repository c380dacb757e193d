package jsprep

import (
	"regexp"
	"strings"
)

// numberLiteral is a whole JavaScript number; the tokenizer takes any run of identifier characters after a
// digit, and refuses what is not one of these ("0A").
var numberLiteral = regexp.MustCompile(`^(?:(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9][0-9_]*)(?:[eE][+-]?[0-9_]+)?|0[xX][0-9a-fA-F_]+n?|0[oO][0-7_]+n?|0[bB][01_]+n?|[0-9][0-9_]*n)$`)

// stripTypes is the TypeScript fast path: it replaces the type syntax of text with spaces (interfaces, type
// aliases, annotations of variables, parameters and return types, `as` and `satisfies` casts, non-null `!`),
// keeping every other byte where it was, so the result needs no source map. It handles the erasable syntax a
// model writes in a script and nothing else: it reports false for anything it does not recognize with
// certainty (classes, enums, namespaces, decorators, generic functions, type arguments, a `/` it cannot tell
// from a regular expression, conditional types, ...), and Read then runs esbuild's full transform as before.
// Read also checks that the result parses as JavaScript before it uses it.
//
// It works on tokens, and only strips in positions where the token before says a type must follow: a `:`
// directly after a declared variable or a parameter (never after a default value, a ternary or an object key),
// a `:` after the `)` of a function's or arrow's parameters, `as` after an expression on the same line.
func stripTypes(text string) (string, bool) {
	toks, ok := tokenize(text)
	if !ok {
		return "", false
	}
	s := &stripper{text: text, toks: toks, out: []byte(text), dead: make([]bool, len(toks))}
	if !s.run() {
		return "", false
	}
	return string(s.out), true
}

type tokKind uint8

const (
	tIdent tokKind = iota
	tNum
	tStr      // a string, or a whole template literal without substitutions
	tTemplate // part of a template literal that ends in "${" or starts with "}"
	tRegex
	tPunct
)

type token struct {
	kind     tokKind
	from, to int
	nl       bool // a line break comes before it
}

// keywords are the reserved words, which never end an expression (but this, super, null, true and false do).
var keywords = map[string]bool{
	"break": true, "case": true, "catch": true, "class": true, "const": true, "continue": true, "debugger": true,
	"default": true, "delete": true, "do": true, "else": true, "export": true, "extends": true, "finally": true,
	"for": true, "function": true, "if": true, "import": true, "in": true, "instanceof": true, "new": true,
	"return": true, "switch": true, "throw": true, "try": true, "typeof": true, "var": true, "void": true,
	"while": true, "with": true, "yield": true, "let": true, "static": true, "await": true, "of": true,
}

// bail are words whose TypeScript meaning needs a real transform, or that the stripper does not follow.
var bail = map[string]bool{
	"class": true, "enum": true, "namespace": true, "module": true, "declare": true, "abstract": true,
	"implements": true, "private": true, "public": true, "protected": true, "readonly": true, "override": true,
	"accessor": true, "import": true, "export": true, "keyof": true, "infer": true, "is": true, "asserts": true,
	"unique": true, "global": true,
}

var puncts = []string{
	"...", "===", "!==", "**=", "<<=", "&&=", "||=", "??=",
	"=>", "==", "!=", "<=", "&&", "||", "??", "?.", "++", "--", "+=", "-=", "*=", "%=", "&=", "|=", "^=", "**", "<<",
}

// tokenize splits text into tokens, skipping white space and comments. It reports false where it cannot be
// sure: an unterminated literal, or a "/" after ")" or "}", where only a parser knows whether a regular
// expression starts.
func tokenize(text string) ([]token, bool) {
	var toks []token
	var braces []bool // per open "{": whether it opened a template substitution
	nl := false
	for i := 0; i < len(text); {
		c := text[i]
		switch {
		case c == '\n' || c == '\r':
			nl = true
			i++
			continue
		case c == ' ' || c == '\t' || c == '\v' || c == '\f':
			i++
			continue
		case c >= 0x80:
			return nil, false // non-ASCII white space and identifiers: leave them to esbuild
		case c == '/' && i+1 < len(text) && text[i+1] == '/':
			for i < len(text) && text[i] != '\n' {
				i++
			}
			continue
		case c == '/' && i+1 < len(text) && text[i+1] == '*':
			end := strings.Index(text[i+2:], "*/")
			if end < 0 {
				return nil, false
			}
			if strings.ContainsAny(text[i:i+2+end], "\n\r") {
				nl = true
			}
			i += 2 + end + 2
			continue
		}
		t := token{from: i, nl: nl}
		nl = false
		switch {
		case isIdent(c):
			j := i + 1
			for j < len(text) && isIdent(text[j]) {
				j++
			}
			t.kind, t.to = tIdent, j
			if c >= '0' && c <= '9' {
				t.kind = tNum
			}
			if t.kind == tNum && j < len(text) && text[j] == '.' {
				// A decimal point and the rest of the number: "1.5", "1.e3". A second dot is a member access.
				j++
				for j < len(text) && (isIdent(text[j]) || (text[j] == '+' || text[j] == '-') && (text[j-1] == 'e' || text[j-1] == 'E')) {
					j++
				}
				t.to = j
			}
		case c == '.' && i+1 < len(text) && text[i+1] >= '0' && text[i+1] <= '9':
			j := i + 1
			for j < len(text) && isIdent(text[j]) {
				j++
			}
			t.kind, t.to = tNum, j
		case c == '"' || c == '\'':
			j := i + 1
			for ; j < len(text) && text[j] != c; j++ {
				if text[j] == '\\' {
					j++
				} else if text[j] == '\n' {
					return nil, false
				}
			}
			if j >= len(text) {
				return nil, false
			}
			t.kind, t.to = tStr, j+1
		case c == '`' || c == '}' && len(braces) > 0 && braces[len(braces)-1]:
			if c == '}' {
				braces = braces[:len(braces)-1]
			}
			j := i + 1
			for ; j < len(text) && text[j] != '`'; j++ {
				if text[j] == '\\' {
					j++
				} else if text[j] == '$' && j+1 < len(text) && text[j+1] == '{' {
					break
				}
			}
			if j >= len(text) {
				return nil, false
			}
			t.kind, t.to = tStr, j+1
			if text[j] == '$' {
				t.kind, t.to = tTemplate, j+2
				braces = append(braces, true)
			} else if c == '}' {
				t.kind = tTemplate
			}
		case c == '/' && !endsExpression(text, toks):
			if len(toks) > 0 && text[toks[len(toks)-1].from] == ')' || len(toks) > 0 && text[toks[len(toks)-1].from] == '}' {
				return nil, false
			}
			j, inClass := i+1, false
			for ; j < len(text) && (text[j] != '/' || inClass); j++ {
				switch text[j] {
				case '\\':
					j++
				case '[':
					inClass = true
				case ']':
					inClass = false
				case '\n':
					return nil, false
				}
			}
			if j >= len(text) {
				return nil, false
			}
			j++
			for j < len(text) && isIdent(text[j]) {
				j++
			}
			t.kind, t.to = tRegex, j
		default:
			t.kind, t.to = tPunct, i+1
			for _, p := range puncts {
				if strings.HasPrefix(text[i:], p) {
					t.to = i + len(p)
					break
				}
			}
			if text[i:t.to] == "?." && t.to < len(text) && text[t.to] >= '0' && text[t.to] <= '9' {
				t.to = i + 1 // a ternary before a number: a ? .5 : 1
			}
			switch c {
			case '{':
				braces = append(braces, false)
			case '}':
				if len(braces) > 0 {
					braces = braces[:len(braces)-1]
				}
			}
		}
		if t.kind == tNum && !numberLiteral.MatchString(text[t.from:t.to]) {
			return nil, false
		}
		if t.kind == tIdent || t.kind == tNum {
			for k := t.from; k < t.to; k++ {
				if text[k] >= 0x80 {
					return nil, false // identifiers that are not ASCII: leave them to esbuild
				}
			}
		}
		toks = append(toks, t)
		i = t.to
	}
	return toks, true
}

// endsExpression reports whether the last token can end an expression, so that "/" after it divides.
func endsExpression(text string, toks []token) bool {
	if len(toks) == 0 {
		return false
	}
	t := toks[len(toks)-1]
	s := text[t.from:t.to]
	switch t.kind {
	case tIdent:
		return !keywords[s]
	case tNum, tStr, tRegex:
		return true
	case tTemplate:
		return s[len(s)-1] == '`'
	}
	return s == ")" || s == "]" || s == "}"
}

type stripper struct {
	text string
	toks []token
	out  []byte
	dead []bool // tokens blanked: the main loop does not look at them again
}

func (s *stripper) kind(i int) tokKind {
	if i < 0 || i >= len(s.toks) {
		return tPunct
	}
	return s.toks[i].kind
}

// opener returns the index of the token opening the bracket that token j closes, or -1.
func (s *stripper) opener(j int) int {
	depth := 0
	for i := j; i >= 0; i-- {
		switch s.str(i) {
		case ")", "]", "}":
			depth++
		case "(", "[", "{":
			depth--
			if depth == 0 {
				return i
			}
		}
		if s.toks[i].kind == tTemplate {
			return -1
		}
	}
	return -1
}

// postfixable reports whether token j ends an operand that a non-null "!" (or, with cast, an `as`) may follow
// on the same line. A ")" after if, while, for or with and a "}" of a block end a statement head or a statement:
// what follows them starts a statement (`if (a) !b`), so they do not count.
func (s *stripper) postfixable(j int, cast bool) bool {
	if j < 0 {
		return false
	}
	w := s.str(j)
	switch s.toks[j].kind {
	case tIdent:
		return !keywords[w]
	case tNum, tStr, tRegex:
		return cast
	case tTemplate:
		return cast && w[len(w)-1] == '`'
	}
	switch w {
	case "]":
		return true
	case ")":
		o := s.opener(j)
		if o < 0 {
			return false
		}
		p := s.str(o - 1)
		return p != "if" && p != "while" && p != "for" && p != "with"
	case "}":
		if !cast {
			return false
		}
		o := s.opener(j)
		if o < 0 {
			return false
		}
		p := s.str(o - 1)
		return p == "=" || p == "(" || p == "," || p == "[" || p == "return" || p == ":" || p == "?"
	}
	return false
}

func (s *stripper) str(i int) string {
	if i < 0 || i >= len(s.toks) {
		return ""
	}
	return s.text[s.toks[i].from:s.toks[i].to]
}

// blank replaces tokens [from, to) and what lies between them with spaces, keeping line breaks.
func (s *stripper) blank(from, to int) {
	if from >= to {
		return
	}
	for k := from; k < to; k++ {
		s.dead[k] = true
	}
	for i := s.toks[from].from; i < s.toks[to-1].to; i++ {
		if c := s.out[i]; c != '\n' && c != '\r' {
			s.out[i] = ' '
		}
	}
}

// match returns the index of the token closing the bracket at i, or -1 (also when brackets do not pair up).
func (s *stripper) match(i int) int {
	var stack []byte
	for j := i; j < len(s.toks); j++ {
		w := s.str(j)
		if s.toks[j].kind == tTemplate {
			// "`...${" opens a substitution, "}...`" closes it, "}...${" does both.
			if w[0] == '}' {
				if len(stack) == 0 || stack[len(stack)-1] != '$' {
					return -1
				}
				stack = stack[:len(stack)-1]
			}
			if w[len(w)-1] != '`' {
				stack = append(stack, '$')
			}
		} else if s.toks[j].kind == tPunct {
			switch w {
			case "(", "[", "{":
				stack = append(stack, w[0])
			case ")", "]", "}":
				open := map[string]byte{")": '(', "]": '[', "}": '{'}[w]
				if len(stack) == 0 || stack[len(stack)-1] != open {
					return -1
				}
				stack = stack[:len(stack)-1]
			}
		}
		if len(stack) == 0 {
			return j
		}
	}
	return -1
}

// endsExpr is endsExpression for token i.
func (s *stripper) endsExpr(i int) bool {
	return i >= 0 && endsExpression(s.text, s.toks[:i+1])
}

// statementStart reports whether token i begins a statement: first, after ";", "{" or "}", or on a new line.
func (s *stripper) statementStart(i int) bool {
	if i == 0 || s.toks[i].nl {
		return true
	}
	p := s.str(i - 1)
	return p == ";" || p == "{" || p == "}"
}

func (s *stripper) run() bool {
	for i := 0; i < len(s.toks); i++ {
		if s.dead[i] {
			continue
		}
		t := s.toks[i]
		w := s.str(i)
		switch {
		case t.kind == tPunct && w == "@", t.kind == tPunct && w == "<" && !s.endsExpr(i-1):
			return false // decorators; a type assertion <T>x or a generic arrow
		case t.kind == tPunct && w == "<":
			// A comparison, or type arguments (f<T>(x), f<T>): TypeScript reads "<" as type arguments wherever
			// they parse, and only its parser knows the rest of the rule.
			if _, ok := s.typeArgs(i); ok {
				return false
			}
		case t.kind != tIdent:
			if w == "!" && s.postfixable(i-1, false) && !t.nl && s.continues(i+1) {
				s.blank(i, i+1) // non-null assertion
			}
			if w == "(" {
				if !s.params(i) {
					return false
				}
			}
			continue
		case bail[w] && !(i > 0 && s.str(i-1) == "." || s.str(i+1) == ":" && s.str(i-1) != "?"):
			// As a property name (o.module, {public: 1}) the word is plain JavaScript.
			return false
		case (w == "interface" || w == "type") && s.statementStart(i) && s.kind(i+1) == tIdent && !s.toks[i+1].nl:
			end, ok := s.declaration(i, w == "interface")
			if !ok {
				return false
			}
			s.blank(i, end)
			i = end - 1
		case (w == "let" || w == "const" || w == "var") && (s.kind(i+1) == tIdent || s.str(i+1) == "{" || s.str(i+1) == "["):
			if !s.binding(i + 1) {
				return false
			}
		case w == "function":
			j := i + 1
			if s.str(j) == "*" {
				j++
			}
			if s.kind(j) == tIdent {
				j++
			}
			if s.str(j) != "(" {
				return false // generic function, or not what it seems
			}
			close := s.match(j)
			if close < 0 || !s.params(j) {
				return false
			}
			if s.str(close+1) == ":" {
				end, ok := s.typ(close + 2)
				if !ok || s.str(end) != "{" {
					return false
				}
				s.blank(close+1, end)
			}
			i = j
		case (w == "as" || w == "satisfies") && !t.nl && s.postfixable(i-1, true):
			end, ok := s.typ(i + 1)
			if !ok || !s.continues(end) {
				return false
			}
			if n := s.str(end); end < len(s.toks) && (n == "." || n == "?." || n == "[" || n == "(" || n == "!" || n == "=>" || n == "<") {
				return false // a member of the type, or of the cast expression? Only a parser knows
			}
			s.blank(i, end)
			i = end - 1
		}
	}
	return true
}

// continues reports whether token i can follow an expression whose postfix "!" or cast was blanked without the
// two joining into something else (`async!function` is not `async function`): the end, a new line, or an
// operator or closing bracket.
func (s *stripper) continues(i int) bool {
	if i >= len(s.toks) || s.toks[i].nl {
		return true
	}
	w := s.str(i)
	return s.toks[i].kind == tPunct && w != "{" && w != "++" && w != "--"
}

// declaration finds the end of an interface (at its closing brace) or a type alias (after its type and an
// optional semicolon) starting at token i.
func (s *stripper) declaration(i int, iface bool) (int, bool) {
	j := i + 2
	if s.str(j) == "<" {
		return 0, false
	}
	if iface {
		if s.str(j) == "extends" {
			for {
				end, ok := s.primaryType(j + 1)
				if !ok || s.kind(j+1) != tIdent {
					return 0, false
				}
				j = end
				if s.str(j) != "," {
					break
				}
			}
		}
		if s.str(j) != "{" {
			return 0, false
		}
		return s.objectType(j)
	}
	if s.str(j) != "=" {
		return 0, false
	}
	end, ok := s.typ(j + 1)
	if !ok {
		return 0, false
	}
	if s.str(end) == ";" {
		return end + 1, true
	}
	if end < len(s.toks) && !s.toks[end].nl && s.str(end) != "}" {
		return 0, false
	}
	return end, true
}

// binding strips the annotations of the variables a declaration starting at token i declares: a name or a
// pattern, then "!" and ":" type, then an initializer up to a "," at the same depth.
func (s *stripper) binding(i int) bool {
	for {
		if s.kind(i) == tIdent {
			i++
		} else if w := s.str(i); w == "{" || w == "[" {
			close := s.match(i)
			if close < 0 {
				return false
			}
			i = close + 1
		} else {
			return false
		}
		if s.str(i) == "!" && s.str(i+1) != ":" {
			return false // a definite assignment "!" comes with a type
		}
		if s.str(i) == "!" && s.str(i+1) == ":" {
			s.blank(i, i+1)
			i++
		}
		if s.str(i) == ":" {
			end, ok := s.typ(i + 1)
			if !ok {
				return false
			}
			s.blank(i, end)
			i = end
		}
		// The initializer, up to a "," at this depth, or the end of the declaration.
		if s.str(i) != "=" {
			if s.str(i) == "," {
				i++
				continue
			}
			return true
		}
		for ; i < len(s.toks); i++ {
			w := s.str(i)
			switch {
			case w == "(" || w == "[" || w == "{" || s.toks[i].kind == tTemplate && w[len(w)-1] != '`':
				// Brackets in the initializer are left to the main loop, which strips inside them.
				close := s.match(i)
				if close < 0 {
					return false
				}
				i = close
			case w == ",":
				i++
				goto next
			case w == ";" || w == ")" || w == "]" || w == "}":
				return true
			case s.toks[i].nl && i > 0 && s.toks[i].kind == tIdent && keywords[w]:
				return true
			}
		}
		return true
	next:
	}
}

// params strips the parameter annotations of the "(" at token i when it opens an arrow's or a function's
// parameters, and an arrow's return type. Other parentheses are left alone.
func (s *stripper) params(i int) bool {
	close := s.match(i)
	if close < 0 {
		return false
	}
	arrow := s.str(close+1) == "=>"
	function := s.str(i-1) == "function" ||
		s.kind(i-1) == tIdent && (s.str(i-2) == "function" || s.str(i-2) == "*" && s.str(i-3) == "function")
	var retEnd int
	if !arrow && !function && s.str(close+1) == ":" {
		// Maybe an arrow with a return type, `(x: T): U => ...`; or a ternary's branch, `a ? (b) : c`, which only
		// a parser tells apart: strip it only where no ternary "?" is in the script at all.
		end, ok := s.typ(close + 2)
		if !ok || s.str(end) != "=>" {
			return true
		}
		for j := range s.toks {
			if w := s.str(j); w == "?" && s.str(j+1) != ":" && s.str(j+1) != "," && s.str(j+1) != ")" && s.str(j+1) != "=" {
				return false
			}
		}
		arrow, retEnd = true, end
	}
	if !arrow && !function {
		return true
	}
	// Each parameter: optional "...", a name or pattern, optional "?", optional ": type", optional default.
	for j := i + 1; j < close; {
		if s.str(j) == "..." {
			j++
		}
		switch w := s.str(j); {
		case s.kind(j) == tIdent:
			if w == "this" {
				return false
			}
			j++
		case w == "{" || w == "[":
			m := s.match(j)
			if m < 0 || m >= close {
				return false
			}
			j = m + 1
		default:
			return false
		}
		if s.str(j) == "?" && (s.str(j+1) == ":" || s.str(j+1) == "," || s.str(j+1) == ")" || s.str(j+1) == "=") {
			s.blank(j, j+1)
			j++
		}
		if s.str(j) == ":" {
			end, ok := s.typ(j + 1)
			if !ok || end > close {
				return false
			}
			s.blank(j, end)
			j = end
		}
		if s.str(j) == "=" {
			for ; j < close && s.str(j) != ","; j++ {
				if w := s.str(j); w == "(" || w == "[" || w == "{" || s.kind(j) == tTemplate {
					m := s.match(j)
					if m < 0 {
						return false
					}
					j = m
				}
			}
		}
		if s.str(j) == "," {
			j++
			continue
		}
		if j != close {
			return false
		}
	}
	if retEnd > 0 {
		s.blank(close+1, retEnd)
	}
	return true
}

// typ skips a type starting at token i and returns the index of the first token after it. It knows unions and
// intersections, parenthesized and function types, object and tuple types, (qualified) names with type
// arguments, literals, typeof, array and indexed types; anything else (conditional types, template literal
// types, constructor types) is not sure, and ok is false.
func (s *stripper) typ(i int) (int, bool) {
	if w := s.str(i); w == "|" || w == "&" {
		i++
	}
	for {
		end, ok := s.primaryType(i)
		if !ok {
			return 0, false
		}
		i = end
		if w := s.str(i); w == "|" || w == "&" {
			i++
			continue
		}
		if w := s.str(i); w == "extends" || w == "?" && s.toks[i].kind == tPunct && s.str(i+1) != ":" {
			return 0, false // a conditional type
		}
		return i, true
	}
}

func (s *stripper) primaryType(i int) (int, bool) {
	if i >= len(s.toks) {
		return 0, false
	}
	t := s.toks[i]
	w := s.str(i)
	switch {
	case w == "(":
		close := s.match(i)
		if close < 0 {
			return 0, false
		}
		if s.str(close+1) == "=>" {
			if !s.typedParams(i+1, close) {
				return 0, false
			}
			return s.typ(close + 2)
		}
		end, ok := s.typ(i + 1)
		if !ok || end != close {
			return 0, false
		}
		i = close + 1
	case w == "{":
		end, ok := s.objectType(i)
		if !ok {
			return 0, false
		}
		i = end
	case w == "[":
		end, ok := s.tupleType(i)
		if !ok {
			return 0, false
		}
		i = end
	case w == "typeof":
		i++
		for s.kind(i) == tIdent {
			i++
			if s.str(i) != "." {
				break
			}
			i++
		}
	case t.kind == tIdent && !keywords[w] && w != "new" && w != "asserts" && w != "is" && w != "infer" && w != "keyof" ||
		w == "void" || w == "const":
		i++
		for s.str(i) == "." && i+1 < len(s.toks) && s.toks[i+1].kind == tIdent {
			i += 2
		}
		if s.str(i) == "<" {
			end, ok := s.typeArgs(i)
			if !ok {
				return 0, false
			}
			i = end
		}
	case t.kind == tNum || t.kind == tStr && s.text[t.from] != '`':
		i++
	case w == "-" && i+1 < len(s.toks) && s.toks[i+1].kind == tNum:
		i += 2
	default:
		return 0, false
	}
	// Array and indexed access types, on the same line.
	for s.str(i) == "[" && !s.toks[i].nl {
		if s.str(i+1) == "]" {
			i += 2
			continue
		}
		end, ok := s.typ(i + 1)
		if !ok || s.str(end) != "]" {
			return 0, false
		}
		i = end + 1
	}
	return i, true
}

// typeArgs skips "<" type, ... ">" at token i.
func (s *stripper) typeArgs(i int) (int, bool) {
	i++
	for {
		end, ok := s.typ(i)
		if !ok {
			return 0, false
		}
		i = end
		switch s.str(i) {
		case ",":
			i++
		case ">":
			return i + 1, true
		default:
			return 0, false // ">>" and the like: left to esbuild
		}
	}
}

// objectType checks an object type or interface body "{ member; ... }" at token i and returns the index after
// it. A member is a property `name?: T`, an index signature `[k: K]: T` or a method `name?(params): T`, ended by
// ";", "," or a new line.
func (s *stripper) objectType(i int) (int, bool) {
	close := s.match(i)
	if close < 0 {
		return 0, false
	}
	for j := i + 1; j < close; {
		switch {
		case s.kind(j) == tIdent || s.kind(j) == tNum || s.kind(j) == tStr && s.text[s.toks[j].from] != '`':
			j++
		case s.str(j) == "[":
			m := s.match(j)
			if m < 0 || s.kind(j+1) != tIdent || s.str(j+2) != ":" {
				return 0, false
			}
			end, ok := s.typ(j + 3)
			if !ok || end != m {
				return 0, false
			}
			j = m + 1
		default:
			return 0, false
		}
		if s.str(j) == "?" {
			j++
		}
		if s.str(j) == "(" {
			m := s.match(j)
			if m < 0 || m > close || !s.typedParams(j+1, m) {
				return 0, false
			}
			j = m + 1
		}
		if s.str(j) == ":" {
			end, ok := s.typ(j + 1)
			if !ok || end > close {
				return 0, false
			}
			j = end
		} else if s.str(j-1) != ")" {
			return 0, false
		}
		switch {
		case s.str(j) == ";" || s.str(j) == ",":
			j++
		case j == close || s.toks[j].nl:
		default:
			return 0, false
		}
	}
	return close + 1, true
}

// tupleType checks "[T, name?: T, ...T]" at token i and returns the index after it.
func (s *stripper) tupleType(i int) (int, bool) {
	close := s.match(i)
	if close < 0 {
		return 0, false
	}
	for j := i + 1; j < close; {
		if s.str(j) == "..." {
			j++
		}
		if s.kind(j) == tIdent && (s.str(j+1) == ":" || s.str(j+1) == "?" && s.str(j+2) == ":") {
			j += 2
			if s.str(j) == ":" {
				j++
			}
		}
		end, ok := s.typ(j)
		if !ok || end > close {
			return 0, false
		}
		j = end
		if s.str(j) == "?" {
			j++
		}
		if s.str(j) == "," {
			j++
		} else if j != close {
			return 0, false
		}
	}
	return close + 1, true
}

// typedParams checks the parameters of a function type or method signature, tokens [from, to): names (or
// patterns), "?", ": T", "...", separated by ",".
func (s *stripper) typedParams(from, to int) bool {
	for j := from; j < to; {
		if s.str(j) == "..." {
			j++
		}
		switch w := s.str(j); {
		case s.kind(j) == tIdent && !keywords[w]:
			j++
		case w == "{" || w == "[":
			m := s.match(j)
			if m < 0 || m >= to {
				return false
			}
			j = m + 1
		default:
			return false
		}
		if s.str(j) == "?" {
			j++
		}
		if s.str(j) == ":" {
			end, ok := s.typ(j + 1)
			if !ok || end > to {
				return false
			}
			j = end
		}
		if s.str(j) == "," {
			j++
		} else if j != to {
			return false
		}
	}
	return true
}
