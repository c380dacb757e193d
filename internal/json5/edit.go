package json5

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// ErrNotObject is matched (errors.Is) by a *PathError.
var ErrNotObject = errors.New("not an object")

// PathError says that a path goes through a value that is not an object.
type PathError struct {
	Path string // the dotted path of that value, "" for the top level
	Kind Kind
}

func (e *PathError) Error() string {
	if e.Path == "" {
		return fmt.Sprintf("the top level is %s, not an object", articled(e.Kind))
	}
	return fmt.Sprintf("%s is %s, not an object", e.Path, articled(e.Kind))
}

func (e *PathError) Is(target error) bool { return target == ErrNotObject }

// Set returns src with the member at path set to value (a JSON5 value), creating the objects missing on the
// path. An existing value is replaced and nothing else changes; a new member is added after the last one of its
// object, written in the document's style. src must parse, and its top level must be an object.
func Set(src []byte, path []string, value []byte) ([]byte, error) {
	edits, err := setEdits(src, path, value)
	if err != nil {
		return nil, err
	}
	return apply(src, edits), nil
}

// splice replaces src[start:end] with text. Every edit is either an insertion (start == end), the replacement
// of one value's text, or the replacement of white space inside an empty object.
type splice struct {
	start, end int
	text       string
}

func apply(src []byte, edits []splice) []byte {
	var out bytes.Buffer
	last := 0
	for _, e := range edits {
		out.Write(src[last:e.start])
		out.WriteString(e.text)
		last = e.end
	}
	out.Write(src[last:])
	return out.Bytes()
}

func setEdits(src []byte, path []string, value []byte) ([]splice, error) {
	if len(path) == 0 {
		return nil, errors.New("json5: empty path")
	}
	for _, key := range path {
		if !utf8.ValidString(key) {
			return nil, fmt.Errorf("json5: key %q is not valid UTF-8", key)
		}
	}
	root, err := Parse(src)
	if err != nil {
		return nil, err
	}
	if root.Kind != Object {
		return nil, &PathError{Kind: root.Kind}
	}
	nv, err := Parse(value)
	if err != nil {
		return nil, fmt.Errorf("json5: the new value: %w", err)
	}
	st := detectStyle(src, root)
	obj := root
	for i, key := range path {
		m := obj.Member(key)
		if m == nil {
			// Everything from here on is new: {path[i]: {path[i+1]: ... value}}.
			leaf := nv
			for j := len(path) - 1; j > i; j-- {
				leaf = &Value{Kind: Object, Members: []Member{{Key: path[j], Value: leaf}}}
			}
			return st.insertMember(obj, key, leaf, value), nil
		}
		if i == len(path)-1 {
			multi := st.multiline(obj)
			text := st.render(nv, value, lineIndent(src, m.KeyStart), multi)
			return []splice{{m.Value.Start, m.Value.End, text}}, nil
		}
		if m.Value.Kind != Object {
			return nil, &PathError{Path: strings.Join(path[:i+1], "."), Kind: m.Value.Kind}
		}
		obj = m.Value
	}
	panic("unreachable")
}

func articled(k Kind) string {
	if k == Array || k == Object {
		return "an " + k.String()
	}
	if k == Null {
		return "null"
	}
	return "a " + k.String()
}

// style is how a document writes what Set adds to it.
type style struct {
	src           []byte
	keyQuote      byte   // 0: identifiers unquoted
	strQuote      byte   // '"' or '\''
	colon         string // between a key and its value: ": ", ":", " : "
	comma         string // between the members of an inline object: ", " or ","
	indentUnit    string
	newline       string
	spaceInBraces bool // an inline object is written { a: 1 } rather than {a: 1}
	trailingComma bool // a multi-line object ends with a comma
}

// detectStyle takes the most common habit of the document for each choice, and JSON's where it has none.
func detectStyle(src []byte, root *Value) *style {
	st := &style{src: src, strQuote: '"', colon: ": ", comma: ", ", indentUnit: "  ", newline: "\n"}
	if bytes.Contains(src, []byte("\r\n")) {
		st.newline = "\r\n"
	}
	keyQuotes, strQuotes, colons := map[byte]int{}, map[byte]int{}, map[string]int{}
	var braces [2]int // inline objects without and with inner spaces
	var commas [2]int // multi-line objects without and with a trailing comma
	var spaced [2]int // commas inside inline objects without and with a blank after them
	indent := ""
	var walk func(v *Value)
	walk = func(v *Value) {
		switch v.Kind {
		case String:
			strQuotes[v.Quote]++
		case Array:
			for _, el := range v.Elements {
				walk(el)
			}
		case Object:
			if len(v.Members) > 0 {
				if st.multiline(v) {
					commas[b2i(v.Members[len(v.Members)-1].Comma >= 0)]++
				} else {
					braces[b2i(isBlank(src[v.Start+1]))]++
					for _, m := range v.Members[:len(v.Members)-1] {
						spaced[b2i(isBlank(src[m.Comma+1]))]++
					}
				}
			}
			for _, m := range v.Members {
				keyQuotes[m.KeyQuote]++
				if m.KeyQuote != 0 {
					strQuotes[m.KeyQuote]++
				}
				if sep := string(src[m.KeyEnd:m.Value.Start]); !strings.ContainsAny(sep, "\r\n/") {
					colons[sep]++
				}
				if in, ok := startsLine(src, m.KeyStart); ok && in != "" && (indent == "" || len(in) < len(indent)) {
					indent = in
				}
				walk(m.Value)
			}
		}
	}
	walk(root)
	st.keyQuote = mostCommon(keyQuotes, []byte{'"', 0, '\''})
	st.strQuote = mostCommon(strQuotes, []byte{'"', '\''})
	if len(colons) > 0 {
		st.colon = mostCommonString(colons)
	}
	if indent != "" {
		st.indentUnit = indent
	}
	st.spaceInBraces = braces[1] > braces[0]
	st.trailingComma = commas[1] > commas[0]
	if spaced[0] > spaced[1] || spaced == [2]int{} && st.colon == ":" { // compact JSON: no blanks anywhere
		st.comma = ","
	}
	return st
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// mostCommon picks the value with the highest count; ties go to the earlier of order.
func mostCommon(counts map[byte]int, order []byte) byte {
	best := order[0]
	for _, c := range order {
		if counts[c] > counts[best] {
			best = c
		}
	}
	return best
}

func mostCommonString(counts map[string]int) string {
	best := ""
	for s, n := range counts {
		if n > counts[best] || n == counts[best] && s < best {
			best = s
		}
	}
	return best
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' }

// multiline reports whether an object is laid out one member per line: its first member (or its closing brace)
// is on a later line than its opening brace.
func (st *style) multiline(obj *Value) bool {
	if obj.Start == obj.End { // a value Set is creating
		return false
	}
	end := obj.End - 1
	if len(obj.Members) > 0 {
		end = obj.Members[0].KeyStart
	}
	return bytes.ContainsAny(st.src[obj.Start:end], "\r\n")
}

// startsLine returns the indentation before pos when only blanks precede it on its line.
func startsLine(src []byte, pos int) (string, bool) {
	i := pos
	for i > 0 && isBlank(src[i-1]) {
		i--
	}
	if i > 0 && src[i-1] != '\n' && src[i-1] != '\r' {
		return "", false
	}
	return string(src[i:pos]), true
}

// lineIndent returns the leading blanks of the line that pos is on.
func lineIndent(src []byte, pos int) string {
	i := bytes.LastIndexAny(src[:pos], "\r\n") + 1
	j := i
	for j < len(src) && isBlank(src[j]) {
		j++
	}
	return string(src[i:j])
}

// endOfLine returns where a new line can start after pos: before the line break that ends pos's line, when only
// blanks and comments that end on this line follow pos; otherwise pos itself.
func endOfLine(src []byte, pos int) int {
	i := pos
	for i < len(src) {
		switch {
		case isBlank(src[i]):
			i++
		case src[i] == '\n' || src[i] == '\r':
			return i
		case bytes.HasPrefix(src[i:], []byte("//")):
			j := bytes.IndexAny(src[i:], "\r\n")
			if j < 0 {
				return len(src)
			}
			return i + j
		case bytes.HasPrefix(src[i:], []byte("/*")):
			j := bytes.Index(src[i+2:], []byte("*/"))
			if j < 0 || bytes.ContainsAny(src[i+2:i+2+j], "\r\n") {
				return pos
			}
			i += 2 + j + 2
		default:
			return pos
		}
	}
	return i
}

// insertMember adds key: v as the last member of obj.
func (st *style) insertMember(obj *Value, key string, v *Value, vsrc []byte) []splice {
	src := st.src
	if !st.multiline(obj) {
		sp := ""
		if st.spaceInBraces {
			sp = " "
		}
		member := st.key(key) + st.colon + st.render(v, vsrc, "", false)
		if len(obj.Members) == 0 {
			inner := src[obj.Start+1 : obj.End-1]
			if len(bytes.Trim(inner, " \t")) == 0 {
				return []splice{{obj.Start + 1, obj.End - 1, sp + member + sp}} // {} or { }
			}
			return []splice{{obj.Start + 1, obj.Start + 1, sp + member + sp}} // keep a comment inside
		}
		last := obj.Members[len(obj.Members)-1]
		if last.Comma >= 0 {
			return []splice{{last.Comma + 1, last.Comma + 1, st.comma[1:] + member + ","}}
		}
		return []splice{{last.Value.End, last.Value.End, st.comma + member}}
	}

	var edits []splice
	var after int
	var indent string
	trailing := st.trailingComma
	if len(obj.Members) == 0 {
		after = endOfLine(src, obj.Start+1)
		if in, ok := startsLine(src, obj.End-1); ok {
			indent = in + st.indentUnit
		} else {
			indent = lineIndent(src, obj.Start) + st.indentUnit
		}
	} else {
		last := obj.Members[len(obj.Members)-1]
		trailing = last.Comma >= 0
		after = last.Value.End
		if trailing {
			after = last.Comma + 1
		} else {
			edits = append(edits, splice{after, after, ","})
		}
		after = endOfLine(src, after)
		if in, ok := startsLine(src, last.KeyStart); ok {
			indent = in
		} else {
			indent = lineIndent(src, obj.Start) + st.indentUnit
		}
	}
	text := st.newline + indent + st.key(key) + st.colon + st.renderIn(v, vsrc, indent, true, trailing)
	if trailing {
		text += ","
	}
	return append(edits, splice{after, after, text})
}

// key writes a key the way the document writes keys.
func (st *style) key(k string) string {
	switch {
	case st.keyQuote == 0 && IsIdentifier(k):
		return k
	case st.keyQuote == 0:
		return Quote(k, st.strQuote)
	}
	return Quote(k, st.keyQuote)
}

// render writes v (whose numbers are spelled in vsrc) for a place whose line is indented by indent. Objects are
// laid out one member per line when multiline, as the object they go into is.
func (st *style) render(v *Value, vsrc []byte, indent string, multiline bool) string {
	return st.renderIn(v, vsrc, indent, multiline, st.trailingComma)
}

func (st *style) renderIn(v *Value, vsrc []byte, indent string, multiline, trailing bool) string {
	switch v.Kind {
	case Null:
		return "null"
	case Bool:
		if v.Bool {
			return "true"
		}
		return "false"
	case Number:
		return string(vsrc[v.Start:v.End]) // as written: 0x10 stays 0x10
	case String:
		return Quote(v.Str, st.strQuote)
	case Array:
		parts := make([]string, len(v.Elements))
		for i, el := range v.Elements {
			parts[i] = st.renderIn(el, vsrc, indent, false, trailing)
		}
		return "[" + strings.Join(parts, st.comma) + "]"
	}
	if len(v.Members) == 0 {
		return "{}"
	}
	if !multiline {
		sp := ""
		if st.spaceInBraces {
			sp = " "
		}
		parts := make([]string, len(v.Members))
		for i, m := range v.Members {
			parts[i] = st.key(m.Key) + st.colon + st.renderIn(m.Value, vsrc, indent, false, trailing)
		}
		return "{" + sp + strings.Join(parts, st.comma) + sp + "}"
	}
	inner := indent + st.indentUnit
	var b strings.Builder
	b.WriteString("{")
	for i, m := range v.Members {
		b.WriteString(st.newline + inner + st.key(m.Key) + st.colon + st.renderIn(m.Value, vsrc, inner, true, trailing))
		if i < len(v.Members)-1 || trailing {
			b.WriteString(",")
		}
	}
	b.WriteString(st.newline + indent + "}")
	return b.String()
}
