// Package json5 parses JSON5 (https://spec.json5.org, version 1.0.0) into a syntax tree that remembers where every
// value and key is in the source, and edits documents by splicing: setting one member changes only that value's
// bytes, and a new member is written in the document's own style (key quoting, string quotes, indentation,
// trailing commas). Comments and layout elsewhere are never touched.
//
// JSON5 is a superset of JSON: comments, trailing commas, unquoted (ECMAScript identifier) keys, single-quoted
// strings with more escapes and line continuations, hexadecimal numbers, a leading '+' or '.', a trailing '.',
// Infinity and NaN. It is the format OpenClaw's own configuration examples are written in.
package json5

import (
	"bytes"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxDepth bounds the nesting of arrays and objects, so that a hostile document cannot exhaust the stack.
const MaxDepth = 1000

// Kind is the type of a Value.
type Kind uint8

const (
	Null Kind = iota
	Bool
	Number
	String
	Array
	Object
)

func (k Kind) String() string {
	return [...]string{"null", "boolean", "number", "string", "array", "object"}[k]
}

// Value is one value of a document. Start and End delimit its text in the source (an object or array from its
// opening to its closing bracket).
type Value struct {
	Kind       Kind
	Start, End int
	Bool       bool
	// Str is the decoded text of a String. Quote is the quote character it was written with.
	Str   string
	Quote byte
	// Num is the number of a Number as JSON would write it (hexadecimal in decimal, no leading '+' or '.', no
	// trailing '.'), or "Infinity", "-Infinity" or "NaN".
	Num      string
	Members  []Member // Object, in source order; a repeated key is kept, and the last one counts
	Elements []*Value // Array
}

// Member is a key and its value inside an object.
type Member struct {
	Key              string // decoded
	KeyStart, KeyEnd int
	KeyQuote         byte // 0 for an identifier, else the quote character
	Value            *Value
	// Comma is the offset of the comma after the value, or -1 when there is none.
	Comma int
}

// SyntaxError is a parse failure at a line and column (both from 1; the column counts bytes).
type SyntaxError struct {
	Offset       int
	Line, Column int
	Msg          string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Msg)
}

// Parse parses a whole document: one value, with whitespace and comments around it.
func Parse(src []byte) (*Value, error) {
	p := &parser{src: src}
	if err := p.skip(); err != nil {
		return nil, err
	}
	if p.pos == len(src) {
		return nil, p.errorf("empty document")
	}
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	if err := p.skip(); err != nil {
		return nil, err
	}
	if p.pos < len(src) {
		return nil, p.errorf("unexpected %s after the value", p.describe())
	}
	return v, nil
}

type parser struct {
	src []byte
	pos int
}

func (p *parser) errorf(format string, args ...any) *SyntaxError {
	return syntaxErrorAt(p.src, p.pos, fmt.Sprintf(format, args...))
}

func syntaxErrorAt(src []byte, pos int, msg string) *SyntaxError {
	line, col := 1, 1
	for i := 0; i < pos && i < len(src); i++ {
		if src[i] == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return &SyntaxError{Offset: pos, Line: line, Column: col, Msg: msg}
}

// describe names what is at the current position, for messages.
func (p *parser) describe() string {
	if p.pos >= len(p.src) {
		return "end of input"
	}
	r, _ := utf8.DecodeRune(p.src[p.pos:])
	return strconv.QuoteRune(r)
}

// isSpace is JSON5 white space: ECMAScript's WhiteSpace and LineTerminator.
func isSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xA0, 0x2028, 0x2029, 0xFEFF:
		return true
	}
	return unicode.Is(unicode.Zs, r)
}

func isLineTerminator(r rune) bool {
	return r == '\n' || r == '\r' || r == 0x2028 || r == 0x2029
}

// skip passes white space and comments.
func (p *parser) skip() error {
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		if c == '/' && p.pos+1 < len(p.src) {
			switch p.src[p.pos+1] {
			case '/':
				p.pos += 2
				for p.pos < len(p.src) {
					r, n := utf8.DecodeRune(p.src[p.pos:])
					if isLineTerminator(r) {
						break
					}
					p.pos += n
				}
				continue
			case '*':
				end := bytes.Index(p.src[p.pos+2:], []byte("*/"))
				if end < 0 {
					return p.errorf("unterminated /* comment")
				}
				p.pos += 2 + end + 2
				continue
			}
		}
		if c < utf8.RuneSelf {
			if c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '\v' && c != '\f' {
				return nil
			}
			p.pos++
			continue
		}
		r, n := utf8.DecodeRune(p.src[p.pos:])
		if !isSpace(r) {
			return nil
		}
		p.pos += n
	}
	return nil
}

func (p *parser) value(depth int) (*Value, error) {
	if p.pos >= len(p.src) {
		return nil, p.errorf("unexpected end of input, want a value")
	}
	start := p.pos
	switch c := p.src[p.pos]; {
	case c == '{' || c == '[':
		if depth >= MaxDepth {
			return nil, p.errorf("nested more than %d deep", MaxDepth)
		}
		if c == '{' {
			return p.object(depth + 1)
		}
		return p.array(depth + 1)
	case c == '"' || c == '\'':
		s, err := p.string()
		if err != nil {
			return nil, err
		}
		return &Value{Kind: String, Start: start, End: p.pos, Str: s, Quote: c}, nil
	case c == '-' || c == '+' || c == '.' || c >= '0' && c <= '9':
		num, err := p.number()
		if err != nil {
			return nil, err
		}
		return &Value{Kind: Number, Start: start, End: p.pos, Num: num}, nil
	}
	word := p.identifierText()
	switch word {
	case "null":
		return &Value{Kind: Null, Start: start, End: p.pos}, nil
	case "true", "false":
		return &Value{Kind: Bool, Start: start, End: p.pos, Bool: word == "true"}, nil
	case "Infinity", "NaN":
		return &Value{Kind: Number, Start: start, End: p.pos, Num: word}, nil
	}
	p.pos = start
	if word != "" {
		return nil, p.errorf("invalid literal %q (strings need quotes)", word)
	}
	return nil, p.errorf("unexpected %s, want a value", p.describe())
}

// identifierText reads a run of identifier characters (no escapes), for literals.
func (p *parser) identifierText() string {
	start := p.pos
	for p.pos < len(p.src) {
		r, n := utf8.DecodeRune(p.src[p.pos:])
		if !isIdentifierPart(r) {
			break
		}
		p.pos += n
	}
	return string(p.src[start:p.pos])
}

func (p *parser) object(depth int) (*Value, error) {
	v := &Value{Kind: Object, Start: p.pos}
	p.pos++ // {
	for {
		if err := p.skip(); err != nil {
			return nil, err
		}
		if p.pos < len(p.src) && p.src[p.pos] == '}' {
			p.pos++
			v.End = p.pos
			return v, nil
		}
		m := Member{KeyStart: p.pos, Comma: -1}
		if err := p.key(&m); err != nil {
			return nil, err
		}
		if err := p.skip(); err != nil {
			return nil, err
		}
		if p.pos >= len(p.src) || p.src[p.pos] != ':' {
			return nil, p.errorf("unexpected %s after key %q, want ':'", p.describe(), m.Key)
		}
		p.pos++
		if err := p.skip(); err != nil {
			return nil, err
		}
		val, err := p.value(depth)
		if err != nil {
			return nil, err
		}
		m.Value = val
		if err := p.skip(); err != nil {
			return nil, err
		}
		if p.pos < len(p.src) && p.src[p.pos] == ',' {
			m.Comma = p.pos
			p.pos++
			v.Members = append(v.Members, m)
			continue
		}
		v.Members = append(v.Members, m)
		if err := p.skip(); err != nil {
			return nil, err
		}
		if p.pos >= len(p.src) || p.src[p.pos] != '}' {
			return nil, p.errorf("unexpected %s in an object, want ',' or '}'", p.describe())
		}
		p.pos++
		v.End = p.pos
		return v, nil
	}
}

func (p *parser) key(m *Member) error {
	if p.pos >= len(p.src) {
		return p.errorf("unexpected end of input, want a key or '}'")
	}
	if c := p.src[p.pos]; c == '"' || c == '\'' {
		s, err := p.string()
		if err != nil {
			return err
		}
		m.Key, m.KeyQuote, m.KeyEnd = s, c, p.pos
		return nil
	}
	var b strings.Builder
	for first := true; p.pos < len(p.src); first = false {
		r, n := utf8.DecodeRune(p.src[p.pos:])
		if r == '\\' {
			// \uXXXX inside an identifier stands for the character, which must itself be allowed there.
			if p.pos+1 >= len(p.src) || p.src[p.pos+1] != 'u' {
				return p.errorf("invalid escape in a key: only \\u is allowed")
			}
			p.pos += 2
			r2, err := p.hex(4)
			if err != nil {
				return err
			}
			if first && !isIdentifierStart(r2) || !first && !isIdentifierPart(r2) {
				return p.errorf("escaped character %q is not allowed in a key", r2)
			}
			b.WriteRune(r2)
			continue
		}
		if first && !isIdentifierStart(r) || !first && !isIdentifierPart(r) {
			if first {
				return p.errorf("unexpected %s, want a key or '}'", p.describe())
			}
			break
		}
		b.WriteRune(r)
		p.pos += n
	}
	m.Key, m.KeyEnd = b.String(), p.pos
	return nil
}

// isIdentifierStart and isIdentifierPart follow ECMAScript 5.1's IdentifierName.
func isIdentifierStart(r rune) bool {
	return r == '$' || r == '_' || unicode.In(r, unicode.Lu, unicode.Ll, unicode.Lt, unicode.Lm, unicode.Lo, unicode.Nl)
}

func isIdentifierPart(r rune) bool {
	return isIdentifierStart(r) || r == 0x200C || r == 0x200D ||
		unicode.In(r, unicode.Mn, unicode.Mc, unicode.Nd, unicode.Pc)
}

// IsIdentifier reports whether s can be written as an unquoted key.
func IsIdentifier(s string) bool {
	for i, r := range s {
		if i == 0 && !isIdentifierStart(r) || !isIdentifierPart(r) {
			return false
		}
	}
	return s != ""
}

func (p *parser) array(depth int) (*Value, error) {
	v := &Value{Kind: Array, Start: p.pos}
	p.pos++ // [
	for {
		if err := p.skip(); err != nil {
			return nil, err
		}
		if p.pos < len(p.src) && p.src[p.pos] == ']' {
			p.pos++
			v.End = p.pos
			return v, nil
		}
		el, err := p.value(depth)
		if err != nil {
			return nil, err
		}
		v.Elements = append(v.Elements, el)
		if err := p.skip(); err != nil {
			return nil, err
		}
		if p.pos < len(p.src) && p.src[p.pos] == ',' {
			p.pos++
			continue
		}
		if p.pos >= len(p.src) || p.src[p.pos] != ']' {
			return nil, p.errorf("unexpected %s in an array, want ',' or ']'", p.describe())
		}
		p.pos++
		v.End = p.pos
		return v, nil
	}
}

func (p *parser) hex(digits int) (rune, error) {
	if p.pos+digits > len(p.src) {
		return 0, p.errorf("want %d hexadecimal digits", digits)
	}
	n, err := strconv.ParseUint(string(p.src[p.pos:p.pos+digits]), 16, 32)
	if err != nil || strings.ContainsAny(string(p.src[p.pos:p.pos+digits]), "+-_") {
		return 0, p.errorf("want %d hexadecimal digits", digits)
	}
	p.pos += digits
	return rune(n), nil
}

// string reads a quoted string and returns its decoded text.
func (p *parser) string() (string, error) {
	quote := p.src[p.pos]
	p.pos++
	var b strings.Builder
	for {
		if p.pos >= len(p.src) {
			return "", p.errorf("unterminated string")
		}
		c := p.src[p.pos]
		switch {
		case c == quote:
			p.pos++
			return b.String(), nil
		case c == '\n' || c == '\r':
			return "", p.errorf("line break in a string (escape it as \\n, or end the line with \\)")
		case c == '\\':
			if err := p.escape(&b); err != nil {
				return "", err
			}
		case c < utf8.RuneSelf:
			b.WriteByte(c)
			p.pos++
		default:
			r, n := utf8.DecodeRune(p.src[p.pos:])
			b.WriteRune(r) // invalid UTF-8 reads as U+FFFD, as encoding/json reads it
			p.pos += n
		}
	}
}

func (p *parser) escape(b *strings.Builder) error {
	p.pos++ // backslash
	if p.pos >= len(p.src) {
		return p.errorf("unterminated string")
	}
	r, n := utf8.DecodeRune(p.src[p.pos:])
	p.pos += n
	switch r {
	case 'b':
		b.WriteByte('\b')
	case 'f':
		b.WriteByte('\f')
	case 'n':
		b.WriteByte('\n')
	case 'r':
		b.WriteByte('\r')
	case 't':
		b.WriteByte('\t')
	case 'v':
		b.WriteByte('\v')
	case '0':
		if p.pos < len(p.src) && p.src[p.pos] >= '0' && p.src[p.pos] <= '9' {
			return p.errorf("octal escapes are not allowed")
		}
		b.WriteByte(0)
	case 'x':
		h, err := p.hex(2)
		if err != nil {
			return err
		}
		b.WriteRune(h)
	case 'u':
		h, err := p.hex(4)
		if err != nil {
			return err
		}
		if utf16IsHigh(h) && p.pos+6 <= len(p.src) && p.src[p.pos] == '\\' && p.src[p.pos+1] == 'u' {
			save := p.pos
			p.pos += 2
			if lo, err := p.hex(4); err == nil && utf16IsLow(lo) {
				b.WriteRune((h-0xD800)<<10 + (lo - 0xDC00) + 0x10000)
				return nil
			}
			p.pos = save
		}
		b.WriteRune(h) // a lone surrogate becomes U+FFFD, as Go strings cannot hold it
	case '\r':
		if p.pos < len(p.src) && p.src[p.pos] == '\n' {
			p.pos++
		}
	case '\n', 0x2028, 0x2029:
		// a line continuation: nothing
	case '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return p.errorf("octal escapes are not allowed")
	default:
		b.WriteRune(r) // \' \" \\ \/ and any other character stand for themselves
	}
	return nil
}

func utf16IsHigh(r rune) bool { return r >= 0xD800 && r < 0xDC00 }
func utf16IsLow(r rune) bool  { return r >= 0xDC00 && r < 0xE000 }

// number reads a JSON5 number and returns it in JSON's spelling (see Value.Num).
func (p *parser) number() (string, error) {
	start := p.pos
	sign := ""
	if c := p.src[p.pos]; c == '+' || c == '-' {
		if c == '-' {
			sign = "-"
		}
		p.pos++
	}
	rest := p.src[p.pos:]
	switch {
	case hasWord(rest, "Infinity"):
		p.pos += len("Infinity")
		return sign + "Infinity", p.endOfNumber(start)
	case hasWord(rest, "NaN"):
		p.pos += len("NaN")
		return "NaN", p.endOfNumber(start)
	case len(rest) >= 2 && rest[0] == '0' && (rest[1] == 'x' || rest[1] == 'X'):
		p.pos += 2
		digits := p.pos
		for p.pos < len(p.src) && isHexDigit(p.src[p.pos]) {
			p.pos++
		}
		if p.pos == digits {
			return "", p.errorf("want hexadecimal digits after 0x")
		}
		n, _ := new(big.Int).SetString(string(p.src[digits:p.pos]), 16)
		if sign == "-" && n.Sign() != 0 {
			n.Neg(n)
		}
		return n.String(), p.endOfNumber(start)
	}
	var b strings.Builder
	b.WriteString(sign)
	intStart := p.pos
	for p.pos < len(p.src) && isDigit(p.src[p.pos]) {
		p.pos++
	}
	intDigits := string(p.src[intStart:p.pos])
	if len(intDigits) > 1 && intDigits[0] == '0' {
		p.pos = intStart
		return "", p.errorf("leading zeros are not allowed in a number")
	}
	frac := ""
	hasPoint := p.pos < len(p.src) && p.src[p.pos] == '.'
	if hasPoint {
		p.pos++
		fracStart := p.pos
		for p.pos < len(p.src) && isDigit(p.src[p.pos]) {
			p.pos++
		}
		frac = string(p.src[fracStart:p.pos])
	}
	if intDigits == "" && frac == "" {
		p.pos = start
		return "", p.errorf("invalid number")
	}
	if intDigits == "" {
		intDigits = "0"
	}
	b.WriteString(intDigits)
	if frac != "" {
		b.WriteString("." + frac)
	}
	if p.pos < len(p.src) && (p.src[p.pos] == 'e' || p.src[p.pos] == 'E') {
		b.WriteByte(p.src[p.pos])
		p.pos++
		if p.pos < len(p.src) && (p.src[p.pos] == '+' || p.src[p.pos] == '-') {
			b.WriteByte(p.src[p.pos])
			p.pos++
		}
		expStart := p.pos
		for p.pos < len(p.src) && isDigit(p.src[p.pos]) {
			p.pos++
		}
		if p.pos == expStart {
			return "", p.errorf("want digits in the exponent")
		}
		b.Write(p.src[expStart:p.pos])
	}
	return b.String(), p.endOfNumber(start)
}

// endOfNumber refuses a number run into an identifier ("5px", "0x1g", "Infinityx").
func (p *parser) endOfNumber(start int) error {
	if p.pos < len(p.src) {
		r, _ := utf8.DecodeRune(p.src[p.pos:])
		if isIdentifierPart(r) || r == '.' {
			bad := p.pos
			p.pos = start
			return syntaxErrorAt(p.src, bad, "invalid number")
		}
	}
	return nil
}

func hasWord(b []byte, w string) bool { return len(b) >= len(w) && string(b[:len(w)]) == w }
func isDigit(c byte) bool             { return c >= '0' && c <= '9' }
func isHexDigit(c byte) bool {
	return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}
