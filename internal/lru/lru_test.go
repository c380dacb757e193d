package lru

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestIndexEvictsLeastRecentlyUsed(t *testing.T) {
	ix := New[string, int](2)
	ix.Put("a", 1)
	ix.Put("b", 2)
	_, _ = ix.Get("a") // a is now more recent than b
	ix.Put("c", 3)
	_, ok := ix.Get("b")
	assert.False(t, ok, "b was least recently used")
	v, ok := ix.Get("a")
	assert.True(t, ok)
	assert.Equal(t, 1, v)
	assert.Equal(t, 2, ix.Len())

	ix.Put("a", 10) // an update is a use, not a new entry
	ix.Put("d", 4)
	v, _ = ix.Get("a")
	assert.Equal(t, 10, v)
	_, ok = ix.Get("c")
	assert.False(t, ok)

	ix.Remove("a")
	ix.Remove("missing")
	assert.Equal(t, 1, ix.Len())
	assert.Equal(t, 1, New[int, int](0).max, "the bound is at least one")
}
