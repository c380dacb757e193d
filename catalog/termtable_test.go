package catalog

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTermTable: every term put is found by its string and its bytes, with its id, through the table's growths;
// terms never put, including the empty string and prefixes and extensions of terms put, are not.
func TestTermTable(t *testing.T) {
	var ix index
	for i := range 50_000 {
		w := fmt.Sprintf("w%d", i*7)
		_, ok := ix.term(w)
		require.False(t, ok, w)
		require.Equal(t, uint32(i), ix.addTerm(w))
	}
	assert.LessOrEqual(t, 4*ix.terms.used, 3*len(ix.terms.slots), "at most three quarters full")
	for i, w := range ix.vocab {
		id, ok := ix.term(w)
		require.True(t, ok, w)
		require.Equal(t, uint32(i), id)
		id, ok = ix.terms.findBytes(ix.vocab, []byte(w))
		require.True(t, ok, w)
		require.Equal(t, uint32(i), id)
	}
	for _, w := range []string{"", "w", "w1", "w70x", "x0", "w350000"} {
		_, ok := ix.term(w)
		assert.False(t, ok, w)
		_, ok = ix.terms.findBytes(ix.vocab, []byte(w))
		assert.False(t, ok, w)
	}
	var empty index
	_, ok := empty.term("anything")
	assert.False(t, ok, "an empty table has nothing")
}
