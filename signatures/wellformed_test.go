package signatures_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// requireWellFormed checks what every hint must be, whatever schema it came from: valid UTF-8 on one line, with
// brackets balanced outside string literals, and no string literal left open.
func requireWellFormed(t testing.TB, hint string) {
	t.Helper()
	require.True(t, utf8.ValidString(hint), "hint is not UTF-8: %q", hint)
	require.False(t, strings.ContainsAny(hint, "\n\r"), "hint spans lines: %q", hint)
	var open []byte
	closing := map[byte]byte{'}': '{', '>': '<', ']': '['}
	for i := 0; i < len(hint); i++ {
		switch c := hint[i]; c {
		case '"':
			for i++; i < len(hint) && hint[i] != '"'; i++ {
				if hint[i] == '\\' {
					i++
				}
			}
			require.Less(t, i, len(hint), "unterminated string literal in %q", hint)
		case '{', '<', '[':
			open = append(open, c)
		case '}', '>', ']':
			require.NotEmpty(t, open, "unbalanced %q in %q", c, hint)
			require.Equal(t, closing[c], open[len(open)-1], "mismatched %q in %q", c, hint)
			open = open[:len(open)-1]
		}
	}
	require.Empty(t, open, "unclosed brackets in %q", hint)
}
