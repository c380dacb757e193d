package wasm

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

// The captured WASI output keeps whole characters only: a write that does not fit is cut before the character it
// would split, and nothing written later fills the gap.
func TestBoundedBufferNeverSplitsACharacter(t *testing.T) {
	b := &boundedBuffer{limit: 10}
	for _, w := range []string{"abcdefgh", "日本", "x", "y"} {
		n, err := b.Write([]byte(w))
		assert.NoError(t, err, "the guest never sees a write error")
		assert.Equal(t, len(w), n)
	}
	assert.Equal(t, "abcdefgh", b.String(), "日 does not fit in the 2 bytes left, and x may not follow the cut")
	assert.True(t, utf8.ValidString(b.String()))

	b = &boundedBuffer{limit: 64}
	b.Write([]byte(strings.Repeat("ü", 100)))
	assert.Len(t, b.String(), 64)
	assert.True(t, utf8.ValidString(b.String()))
}
