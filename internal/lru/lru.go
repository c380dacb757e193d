// Package lru is the bounded least-recently-used index behind the catalog's scope cache and the runtime's schema
// cache. It is not safe for concurrent use: each cache holds it under its own lock, next to its own semantics.
package lru

import "container/list"

// Index maps keys to values, keeps at most Max of them, and forgets the least recently used first.
type Index[K comparable, V any] struct {
	max   int
	order *list.List // of *entry[K, V], most recent first
	byKey map[K]*list.Element
}

type entry[K comparable, V any] struct {
	key   K
	value V
}

// New returns an empty index holding at most bound entries (at least one).
func New[K comparable, V any](bound int) *Index[K, V] {
	return &Index[K, V]{max: max(bound, 1), order: list.New(), byKey: make(map[K]*list.Element)}
}

// Get returns the value of key and marks it most recently used.
func (ix *Index[K, V]) Get(key K) (V, bool) {
	el, ok := ix.byKey[key]
	if !ok {
		var zero V
		return zero, false
	}
	ix.order.MoveToFront(el)
	return el.Value.(*entry[K, V]).value, true
}

// Put sets the value of key, marks it most recently used, and evicts the least recently used entries beyond the
// bound.
func (ix *Index[K, V]) Put(key K, value V) {
	if el, ok := ix.byKey[key]; ok {
		el.Value.(*entry[K, V]).value = value
		ix.order.MoveToFront(el)
		return
	}
	ix.byKey[key] = ix.order.PushFront(&entry[K, V]{key: key, value: value})
	for ix.order.Len() > ix.max {
		old := ix.order.Back()
		delete(ix.byKey, old.Value.(*entry[K, V]).key)
		ix.order.Remove(old)
	}
}

// Remove forgets key.
func (ix *Index[K, V]) Remove(key K) {
	if el, ok := ix.byKey[key]; ok {
		delete(ix.byKey, key)
		ix.order.Remove(el)
	}
}

// Len is the number of entries.
func (ix *Index[K, V]) Len() int { return ix.order.Len() }
