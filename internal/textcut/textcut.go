// Package textcut cuts text to a size computed at run time. Every cut in this module that a size decides goes
// through it, so that none can go negative or split a UTF-8 sequence: a budget below zero counts as zero, and a
// cut backs off to the start of the character it would have split (invalid bytes are cut like single characters).
package textcut

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Prefix returns the longest prefix of s of at most n bytes that does not end inside a UTF-8 sequence.
func Prefix[T ~string | ~[]byte](s T, n int) T {
	if n >= len(s) {
		return s
	}
	return s[:boundaryBefore(s, max(n, 0))]
}

// Suffix returns the longest suffix of s of at most n bytes that does not start inside a UTF-8 sequence.
func Suffix[T ~string | ~[]byte](s T, n int) T {
	if n >= len(s) {
		return s
	}
	return s[boundaryAfter(s, len(s)-max(n, 0)):]
}

// boundaryBefore is the largest cut position <= i that does not split a valid UTF-8 sequence of s.
func boundaryBefore[T ~string | ~[]byte](s T, i int) int {
	// A valid sequence is at most utf8.UTFMax bytes long, so only the last few starts before i can straddle it.
	for start := i; start > 0 && start > i-utf8.UTFMax; {
		start--
		if !utf8.RuneStart(s[start]) {
			continue
		}
		if start+runeLen(s, start) > i {
			return start
		}
		return i
	}
	return i
}

// boundaryAfter is the smallest cut position >= i that does not split a valid UTF-8 sequence of s.
func boundaryAfter[T ~string | ~[]byte](s T, i int) int {
	if j := boundaryBefore(s, i); j < i {
		return j + runeLen(s, j)
	}
	return i
}

// runeLen is the length of the (possibly invalid, then 1-byte) sequence starting at s[i].
func runeLen[T ~string | ~[]byte](s T, i int) int {
	end := min(i+utf8.UTFMax, len(s))
	_, size := utf8.DecodeRuneInString(string(s[i:end]))
	return size
}

// isSpace reports what Collapse turns into a single space: white space and control characters, which carry no
// words and cost escapes in JSON.
func isSpace(r rune) bool {
	return unicode.IsSpace(r) || unicode.IsControl(r)
}

// Invisible reports a character that changes how the text around it is shown without being seen itself: the
// bidirectional embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069), the direction marks (U+200E,
// U+200F, U+061C), the zero-width space and joiners (U+200B–U+200D), the word joiner (U+2060) and the byte
// order mark (U+FEFF). A tool's title with U+202E shows its words reversed to a person approving it, and a
// zero-width joiner makes two names look alike: tool text shows them escaped instead (Visible, Words).
func Invisible(r rune) bool {
	switch {
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r >= 0x200b && r <= 0x200f:
		return true
	}
	return r == 0x061c || r == 0x2060 || r == 0xfeff
}

// escapeInvisible writes r as `\u202e`.
func escapeInvisible(b *strings.Builder, r rune) {
	const hex = "0123456789abcdef"
	b.WriteString(`\u`)
	for shift := 12; shift >= 0; shift -= 4 {
		b.WriteByte(hex[(r>>shift)&0xf])
	}
}

// Visible returns s with every Invisible character written as its escape (`\u202e`), and everything else as it
// is, line breaks included: for text shown in full, such as a tool's description in describe.
func Visible(s string) string {
	if !strings.ContainsFunc(s, Invisible) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if Invisible(r) {
			escapeInvisible(&b, r)
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// Words collapses every run of white space and control characters in s into one space, writes Invisible
// characters as escapes (`\u202e`), trims both ends, and, if
// the result is longer than n bytes, cuts it at the last word boundary that leaves room for marker and appends
// marker. A cut that would lose more than half of the room (one very long word) is made inside the word instead,
// at a character boundary. The result is at most n bytes (at most n bytes of text and no marker when n cannot hold
// the marker beside some text), and valid UTF-8: invalid bytes of s become U+FFFD. It reads only as much of s as
// it needs, so a huge s costs no more than a short one.
func Words(s string, n int, marker string) string {
	return words(s, n, marker, false)
}

// WordsRunes is Words with n counted in characters instead of bytes (the marker's characters count too).
func WordsRunes(s string, n int, marker string) string {
	return words(s, n, marker, true)
}

func words(s string, n int, marker string, runes bool) string {
	if n <= 0 {
		return ""
	}
	var b strings.Builder
	b.Grow(min(len(s), n*utf8.UTFMax))
	size := 0 // of b, in bytes or characters
	unit := func(r rune) int {
		if runes {
			return 1
		}
		return utf8.RuneLen(r) // U+FFFD, written for an invalid byte, is three
	}
	space := false
	for _, r := range s {
		if isSpace(r) {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			size++
			space = false
		}
		if Invisible(r) {
			escapeInvisible(&b, r)
			size += len(`\u202e`)
		} else {
			b.WriteRune(r)
			size += unit(r)
		}
		if size > n {
			return cutWords(b.String(), n, marker, runes)
		}
	}
	return b.String()
}

// cutWords cuts collapsed text that is longer than n units (bytes, or characters when runes is set).
func cutWords(s string, n int, marker string, runes bool) string {
	measure := func(t string) int { return len(t) }
	if runes {
		measure = utf8.RuneCountInString
	}
	room := n - measure(marker)
	if room <= 0 {
		return strings.TrimRight(prefixUnits(s, n, runes), " ")
	}
	head := prefixUnits(s, room, runes)
	// The cut is at a word boundary when the next character is a space or when head ends right before one.
	if len(head) < len(s) && s[len(head)] != ' ' {
		if i := strings.LastIndexByte(head, ' '); i >= 0 && measure(head[:i]) >= room/2 {
			head = head[:i]
		}
	}
	return strings.TrimRight(head, " ") + marker
}

// prefixUnits is the prefix of s of at most n bytes, or n characters when runes is set.
func prefixUnits(s string, n int, runes bool) string {
	if !runes {
		return Prefix(s, n)
	}
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// HeadTail bounds s to n bytes by keeping its beginning and its end, about two thirds and one third of the room,
// with marker(cut) between them, where cut is the number of bytes left out. marker's length must not decrease as
// cut grows (a number in it, say): the room is computed for the longest marker it could need. When n cannot hold
// the marker, HeadTail returns the prefix of s that fits.
func HeadTail(s string, n int, marker func(cut int) string) string {
	if n >= len(s) {
		return s
	}
	room := n - len(marker(len(s)))
	if room < 0 {
		return Prefix(s, n)
	}
	head := Prefix(s, room*2/3)
	tail := Suffix(s, room-len(head))
	return head + marker(len(s)-len(head)-len(tail)) + tail
}
