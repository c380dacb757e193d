package upstream

import (
	"testing"

	"github.com/toolsearch/toolsearch/internal/boundsdoc"
)

// TestShippedBounds: the defaults of this package are the ones docs/bounds.md states (TestOptionsDefaults and
// TestReadBoundDefaults check that no options give them).
func TestShippedBounds(t *testing.T) {
	boundsdoc.Check(t, "mcp/upstream", map[string]any{
		"DefaultMaxClientInstances":   DefaultMaxClientInstances,
		"DefaultMaxReadBytes":         DefaultMaxReadBytes,
		"DefaultMaxConcurrentReads":   DefaultMaxConcurrentReads,
		"RepeatedFailures":            RepeatedFailures,
		"DefaultRepeatedFailureDelay": DefaultRepeatedFailureDelay,
		"MaxProgressingStart":         MaxProgressingStart,
	})
}
