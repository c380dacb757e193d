package textcut

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPrefix(t *testing.T) {
	tests := []struct {
		s    string
		n    int
		want string
	}{
		{"hello", 10, "hello"},
		{"hello", 5, "hello"},
		{"hello", 3, "hel"},
		{"hello", 0, ""},
		{"hello", -1, ""},
		{"héllo", 2, "h"},      // é is two bytes: never half of it
		{"héllo", 3, "hé"},     // exactly after it
		{"日本語", 4, "日"},        // three-byte characters
		{"日本語", 5, "日"},        // three-byte characters
		{"日本語", 6, "日本"},       // three-byte characters
		{"a😀b", 4, "a"},        // four bytes
		{"a😀b", 5, "a😀"},       // four bytes
		{"a\xffb", 2, "a\xff"}, // an invalid byte is cut like a character of its own
		{"\x80\x80\x80\x80\x80", 3, "\x80\x80\x80"},
		{"a\xe6\x97", 2, "a\xe6"}, // a truncated sequence is made of invalid bytes
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, Prefix(tc.s, tc.n), "Prefix(%q, %d)", tc.s, tc.n)
		assert.Equal(t, []byte(tc.want), Prefix([]byte(tc.s), tc.n), "Prefix([]byte(%q), %d)", tc.s, tc.n)
	}
}

func TestSuffix(t *testing.T) {
	tests := []struct {
		s    string
		n    int
		want string
	}{
		{"hello", 10, "hello"},
		{"hello", 3, "llo"},
		{"hello", -5, ""},
		{"héllo", 4, "llo"},
		{"héllo", 5, "éllo"},
		{"日本語", 4, "語"},
		{"a😀b", 4, "b"},
		{"a😀b", 5, "😀b"},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, Suffix(tc.s, tc.n), "Suffix(%q, %d)", tc.s, tc.n)
	}
}

func TestWords(t *testing.T) {
	tests := []struct {
		s    string
		n    int
		want string
	}{
		{"  Create an\n\tissue.  ", 100, "Create an issue."},
		{"Create an issue in a repository", 20, "Create an issue…"}, // the word that does not fit goes
		{"Create an issue in a repository", 18, "Create an issue…"}, // the cut falls right before a space
		{"Create an issue in a repository", 31, "Create an issue in a repository"},
		{"Supercalifragilisticexpialidocious", 10, "Superca…"}, // one long word is cut inside
		{"ab\x00\x1b[31mcd", 100, "ab [31mcd"},                 // control characters are white space
		{"über größe straße", 12, "über…"},
		{"日本語の説明文です", 10, "日本…"}, // no spaces at all: cut at a character
		{"abc", 2, "ab"}, // no room for the marker
		{"abc", 0, ""},
		{"a\xffb", 100, "a\uFFFDb"},
	}
	for _, tc := range tests {
		got := Words(tc.s, tc.n, "…")
		assert.Equal(t, tc.want, got, "Words(%q, %d)", tc.s, tc.n)
		assert.LessOrEqual(t, len(got), max(tc.n, 0))
	}
}

func TestWordsRunes(t *testing.T) {
	tests := []struct {
		s    string
		n    int
		want string
	}{
		{"日本語の 説明文 です", 100, "日本語の 説明文 です"},
		{"日本語の 説明文 です", 9, "日本語の..."},
		{"日本語の説明文です abc", 9, "日本語の説明..."}, // no word boundary: cut at a character
		{"Größe und Länge der Straße", 14, "Größe und..."},
		{"abcdef", 3, "abc"},
	}
	for _, tc := range tests {
		got := WordsRunes(tc.s, tc.n, "...")
		assert.Equal(t, tc.want, got, "WordsRunes(%q, %d)", tc.s, tc.n)
		assert.LessOrEqual(t, utf8.RuneCountInString(got), tc.n)
	}
}

// A huge text costs what a short one does: Words stops reading once it has enough.
func TestWordsReadsOnlyWhatItNeeds(t *testing.T) {
	huge := strings.Repeat("описание инструмента ", 200_000) // ~7.6 MB
	allocs := testing.AllocsPerRun(10, func() { _ = Words(huge, 256, "…") })
	assert.LessOrEqual(t, allocs, 2.0)
	got := Words(huge, 256, "…")
	assert.True(t, strings.HasSuffix(got, "…"))
	assert.LessOrEqual(t, len(got), 256)
}

func TestHeadTail(t *testing.T) {
	marker := func(cut int) string { return fmt.Sprintf("[%d cut]", cut) }
	assert.Equal(t, "short", HeadTail("short", 10, marker))
	s := strings.Repeat("a", 50) + strings.Repeat("z", 50)
	got := HeadTail(s, 30, marker)
	// The room is kept for "[100 cut]"; the real marker is shorter.
	assert.Equal(t, "aaaaaaaaaaaaaa[79 cut]zzzzzzz", got)
	assert.Equal(t, "aaa", HeadTail(s, 3, marker), "no room for the marker")

	multi := strings.Repeat("日本語", 100)
	got = HeadTail(multi, 100, marker)
	assert.True(t, utf8.ValidString(got), got)
	assert.LessOrEqual(t, len(got), 100)
}

// FuzzCuts checks the contract of every function on any input and size: never more than the size, never a split
// character, nothing invented, and nothing cut that fitted.
func FuzzCuts(f *testing.F) {
	for _, s := range []string{"", "hello world", "héllo wörld", "日本語 の 説明", "a😀b c😀d", "a\xffb\x80\x80",
		"  lots   of\n\nspace  ", "\xe6\x97", strings.Repeat("long ", 40)} {
		f.Add(s, 7)
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		n %= 2 * (len(s) + 8)
		valid := utf8.ValidString(s)

		p := Prefix(s, n)
		require.True(t, strings.HasPrefix(s, p))
		require.LessOrEqual(t, len(p), max(n, 0))
		if valid {
			require.True(t, utf8.ValidString(p), "Prefix split a character: %q", p)
			if len(p) < len(s) {
				_, size := utf8.DecodeRuneInString(s[len(p):])
				require.Greater(t, len(p)+size, n, "Prefix(%q, %d) = %q is not the longest", s, n, p)
			}
		}
		require.Equal(t, p, string(Prefix([]byte(s), n)))

		sfx := Suffix(s, n)
		require.True(t, strings.HasSuffix(s, sfx))
		require.LessOrEqual(t, len(sfx), max(n, 0))
		if valid {
			require.True(t, utf8.ValidString(sfx), "Suffix split a character: %q", sfx)
		}

		w := Words(s, n, "…")
		require.LessOrEqual(t, len(w), max(n, 0))
		require.True(t, utf8.ValidString(w))
		require.NotContains(t, w, "  ")
		require.Equal(t, strings.TrimSpace(w), w)
		// One U+FFFD per invalid byte, as ranging over s decodes them.
		collapsed := strings.Join(strings.FieldsFunc(string([]rune(s)), isSpace), " ")
		if len(collapsed) <= n {
			require.Equal(t, collapsed, w, "nothing is cut from text that fits")
		} else if n > len("…") {
			require.True(t, strings.HasSuffix(w, "…"), "a cut is marked: %q", w)
			require.True(t, strings.HasPrefix(collapsed, strings.TrimSuffix(w, "…")))
		}

		wr := WordsRunes(s, n, "...")
		require.LessOrEqual(t, utf8.RuneCountInString(wr), max(n, 0))
		require.True(t, utf8.ValidString(wr))
		if utf8.RuneCountInString(collapsed) <= n {
			require.Equal(t, collapsed, wr, "nothing is cut from text that fits")
		} else if n > 3 {
			require.True(t, strings.HasSuffix(wr, "..."), "a cut is marked: %q", wr)
			require.True(t, strings.HasPrefix(collapsed, strings.TrimSuffix(wr, "...")))
		}

		ht := HeadTail(s, n, func(cut int) string { return fmt.Sprintf("[%d]", cut) })
		require.LessOrEqual(t, len(ht), max(n, 0))
		if len(s) <= n {
			require.Equal(t, s, ht)
		}
		if valid {
			require.True(t, utf8.ValidString(ht))
		}
	})
}

// invisibles are the characters Invisible must report: every bidirectional control, direction mark and
// zero-width character a title or description could hide or reorder text with.
var invisibles = []rune{0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069, 0x200e, 0x200f,
	0x061c, 0x200b, 0x200c, 0x200d, 0xfeff, 0x2060}

func TestInvisibleEscaped(t *testing.T) {
	for _, r := range invisibles {
		s := "delete\n" + string(r) + "all"
		want := fmt.Sprintf(`\u%04x`, r)
		assert.True(t, Invisible(r), "%U", r)
		assert.Equal(t, "delete\n"+want+"all", Visible(s), "%U: escaped, the line break kept", r)
		assert.Equal(t, "delete "+want+"all", Words(s, 100, "…"), "%U", r)
		assert.Equal(t, "delete "+want+"all", WordsRunes(s, 100, "…"), "%U", r)
		assert.NotContains(t, Words(strings.Repeat(string(r), 50), 40, "…"), string(r), "%U survives no cut", r)
	}
	for _, r := range []rune{'a', 'é', 0x2011, 0x0600, 0x2070, 0xfefe, 0x202f, 0x2065, 0x206a, 0x200a} {
		assert.False(t, Invisible(r), "%U is shown as it is", r)
	}
	assert.Equal(t, "plain", Visible("plain"))
	assert.LessOrEqual(t, len(Words(strings.Repeat("\u202e", 100), 40, "…")), 40, "escapes count against the bound")
}
