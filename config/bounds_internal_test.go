package config

import (
	"testing"

	"github.com/toolsearch/toolsearch/internal/boundsdoc"
)

// TestShippedBounds: the defaults of this package are the ones docs/bounds.md states (the lock test shortens
// lockTimeout for its own run, so only this test sees the shipped wait).
func TestShippedBounds(t *testing.T) {
	boundsdoc.Check(t, "config", map[string]any{"lockTimeout": lockTimeout})
}
