package wasm

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// The depths the documentation promises for the default 1 MiB stack (Options.StackBytes, the hostfns limits table,
// README, RATIONALE.md). Stack use per frame is deterministic for one module, so these hold to a few per cent;
// when this test fails, measure again and update every place that states the figures.
const (
	documentedJSFrames        = 3_600  // a simple recursive function
	documentedJSONParseDepth  = 65_000 // JSON.parse of nested arrays
	documentedDepthToleranceP = 10     // per cent either side
)

func TestDocumentedStackDepths(t *testing.T) {
	for _, tc := range []struct {
		name   string
		depth  int
		script string // %d is the depth
	}{
		{"JS frames", documentedJSFrames, "function g(n) { return n == 0 ? 0 : 1 + g(n - 1) } g(%d)"},
		{"JSON.parse", documentedJSONParseDepth, "JSON.parse('['.repeat(%[1]d) + ']'.repeat(%[1]d)).length"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			below := tc.depth * (100 - documentedDepthToleranceP) / 100
			above := tc.depth * (100 + documentedDepthToleranceP) / 100
			// The stack is what is measured, not time: a minute is room enough on a machine whose cores other work
			// holds (growing the machine stack for thousands of frames took the default 10 s there).
			long := &RunOptions{Timeout: time.Minute}
			_, err := runScript(t, fmt.Sprintf(tc.script, below), long)
			assert.NoError(t, err, "%d deep must work with the default stack", below)
			_, err = runScript(t, fmt.Sprintf(tc.script, above), long)
			requireLimit(t, err, LimitStack)
		})
	}
}
