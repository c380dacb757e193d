package signatures

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// QuoteKey writes a property name as a hint does: bare when TypeScript would leave it bare, quoted as a JSON
// string otherwise. Only ASCII identifiers stay bare: a reader (or tokenizer) never has to guess whether an
// exotic character is part of a name. Text outside a hint that names properties (an invalid-arguments message)
// uses it too, so a name is spelt the same everywhere the model reads it.
func QuoteKey(name string) string {
	if isIdentifier(name) {
		return name
	}
	return quote(name)
}

func isIdentifier(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		letter := c == '_' || c == '$' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
		if !letter && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// quote writes s as a JSON string, which is also a valid JavaScript string literal: U+2028 and U+2029 are
// escaped for older JavaScript parsers, and HTML characters are left alone because the hint is never HTML.
func quote(s string) string {
	var out strings.Builder
	out.Grow(len(s) + 2)
	out.WriteByte('"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch r {
		case '"':
			out.WriteString(`\"`)
		case '\\':
			out.WriteString(`\\`)
		case '\n':
			out.WriteString(`\n`)
		case '\r':
			out.WriteString(`\r`)
		case '\t':
			out.WriteString(`\t`)
		case '\b':
			out.WriteString(`\b`)
		case '\f':
			out.WriteString(`\f`)
		case '\u2028', '\u2029':
			out.WriteString(`\u`)
			out.WriteString(strconv.FormatInt(int64(r), 16))
		default:
			if r < 0x20 {
				out.WriteString(`\u00`)
				out.WriteByte("0123456789abcdef"[r>>4])
				out.WriteByte("0123456789abcdef"[r&0xf])
				continue
			}
			// An invalid byte decodes as utf8.RuneError and is written as U+FFFD, so the hint is valid UTF-8.
			out.WriteRune(r)
		}
	}
	out.WriteByte('"')
	return out.String()
}
