package hostfns

import (
	"testing"

	"github.com/toolsearch/toolsearch/internal/boundsdoc"
)

// TestShippedBounds: the defaults of this package are the ones docs/bounds.md states.
func TestShippedBounds(t *testing.T) {
	boundsdoc.Check(t, "hostfns", map[string]any{
		"callGrace":        callGrace,
		"maxInflightBytes": maxInflightBytes,
		"MaxRandomBytes":   MaxRandomBytes,
	})
}
