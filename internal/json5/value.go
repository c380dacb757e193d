package json5

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Interface returns the value as encoding/json would decode it with UseNumber: nil, bool, string, json.Number,
// []any or map[string]any (the last of repeated keys wins). Infinity, -Infinity and NaN are json.Numbers too,
// which json.Number.Float64 reads, but which JSON cannot spell: JSON writes them as null.
func (v *Value) Interface() any {
	switch v.Kind {
	case Bool:
		return v.Bool
	case Number:
		return json.Number(v.Num)
	case String:
		return v.Str
	case Array:
		out := make([]any, len(v.Elements))
		for i, el := range v.Elements {
			out[i] = el.Interface()
		}
		return out
	case Object:
		out := make(map[string]any, len(v.Members))
		for _, m := range v.Members {
			out[m.Key] = m.Value.Interface()
		}
		return out
	}
	return nil
}

// IsFinite reports whether a Number can be written in JSON.
func (v *Value) IsFinite() bool {
	return v.Kind != Number || v.Num != "Infinity" && v.Num != "-Infinity" && v.Num != "NaN"
}

// JSON writes the value as compact standard JSON, as JavaScript's JSON.stringify would: Infinity and NaN become
// null, and of repeated keys only the last is written.
func (v *Value) JSON() []byte {
	var b bytes.Buffer
	v.writeJSON(&b)
	return b.Bytes()
}

func (v *Value) writeJSON(b *bytes.Buffer) {
	switch v.Kind {
	case Null:
		b.WriteString("null")
	case Bool:
		b.WriteString(strconv.FormatBool(v.Bool))
	case Number:
		if !v.IsFinite() {
			b.WriteString("null")
			return
		}
		b.WriteString(v.Num)
	case String:
		b.WriteString(Quote(v.Str, '"'))
	case Array:
		b.WriteByte('[')
		for i, el := range v.Elements {
			if i > 0 {
				b.WriteByte(',')
			}
			el.writeJSON(b)
		}
		b.WriteByte(']')
	case Object:
		b.WriteByte('{')
		first := true
		for i, m := range v.Members {
			if v.lastIndex(m.Key) != i {
				continue
			}
			if !first {
				b.WriteByte(',')
			}
			first = false
			b.WriteString(Quote(m.Key, '"'))
			b.WriteByte(':')
			m.Value.writeJSON(b)
		}
		b.WriteByte('}')
	}
}

// lastIndex returns the index of the member that counts for key, or -1.
func (v *Value) lastIndex(key string) int {
	for i := len(v.Members) - 1; i >= 0; i-- {
		if v.Members[i].Key == key {
			return i
		}
	}
	return -1
}

// Member returns the member that counts for key (the last one of that name), or nil.
func (v *Value) Member(key string) *Member {
	if v == nil || v.Kind != Object {
		return nil
	}
	if i := v.lastIndex(key); i >= 0 {
		return &v.Members[i]
	}
	return nil
}

// Find follows path through nested objects and returns the value there, or nil.
func (v *Value) Find(path []string) *Value {
	for _, key := range path {
		m := v.Member(key)
		if m == nil {
			return nil
		}
		v = m.Value
	}
	return v
}

// Quote writes s as a string literal with quote ('"' or '\”). The result is valid JSON when quote is '"'.
func Quote(s string, quote byte) string {
	var b strings.Builder
	b.WriteByte(quote)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == rune(quote) || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7F || r == 0x2028 || r == 0x2029 || r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\u%04x`, r) // invalid UTF-8 is written as U+FFFD
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	b.WriteByte(quote)
	return b.String()
}

// Indent writes the value as indented JSON (two spaces a level), except that the numbers JSON cannot spell are
// written as JSON5 does: Infinity, -Infinity and NaN, not null. It is for showing a value to a person as it
// is, where JSON.stringify's null would misstate it. Of repeated keys only the last is written.
func (v *Value) Indent() []byte {
	var b bytes.Buffer
	v.writeIndented(&b, "")
	return b.Bytes()
}

func (v *Value) writeIndented(b *bytes.Buffer, prefix string) {
	inner := prefix + "  "
	switch v.Kind {
	case Number:
		b.WriteString(v.Num)
	case Array:
		if len(v.Elements) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteString("[\n")
		for i, el := range v.Elements {
			b.WriteString(inner)
			el.writeIndented(b, inner)
			if i < len(v.Elements)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(prefix + "]")
	case Object:
		var members []Member
		for i, m := range v.Members {
			if v.lastIndex(m.Key) == i {
				members = append(members, m)
			}
		}
		if len(members) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteString("{\n")
		for i, m := range members {
			b.WriteString(inner + Quote(m.Key, '"') + ": ")
			m.Value.writeIndented(b, inner)
			if i < len(members)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString(prefix + "}")
	default:
		v.writeJSON(b)
	}
}
