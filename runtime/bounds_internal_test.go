package runtime

import (
	"testing"

	"github.com/toolsearch/toolsearch/internal/boundsdoc"
)

// TestShippedBounds: the defaults of this package are the ones docs/bounds.md states.
func TestShippedBounds(t *testing.T) {
	boundsdoc.Check(t, "runtime", map[string]any{
		"lockTimeout":          lockTimeout,
		"MaxVisibleTools":      MaxVisibleTools,
		"MaxDirectoryBytes":    MaxDirectoryBytes,
		"DefaultMaxSourceWait": DefaultMaxSourceWait,
	})
}
