package bench

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/gateway/scenario"
	"github.com/toolsearch/toolsearch/runtime"
)

// Payload: what a turn sends to the provider in each mode, measured by the gateway on the wire (the end-to-end
// scenario of package scenario: a fake plugin of N tools, a mock provider, one turn that must call
// fake_plugin_tool_17). The time per op is a whole turn; the byte metrics are the point.

var payloadSizes = []int{36, 500, 5000}

func payloadRun(tb testing.TB, mode runtime.Mode, n int) scenario.Result {
	tb.Helper()
	results, err := scenario.Run(context.Background(), &scenario.Options{Sizes: []int{n}, Modes: []runtime.Mode{mode}, Sandbox: sandbox(tb)})
	require.NoError(tb, err)
	require.Len(tb, results, 1)
	r := results[0]
	require.Empty(tb, r.Err)
	return r
}

func TestPayloadTwin(t *testing.T) {
	for _, n := range payloadSizes {
		off := payloadRun(t, runtime.ModeOff, n)
		require.True(t, off.CalledTarget)
		require.True(t, off.TargetDeclared)
		for _, mode := range []runtime.Mode{runtime.ModeCode, runtime.ModeTools, runtime.ModeDirectory} {
			r := payloadRun(t, mode, n)
			assert.True(t, r.CalledTarget, "%s at %d", mode, n)
			assert.False(t, r.TargetCalledDirectly, "%s at %d", mode, n)
			assert.Less(t, r.RequestBytes, off.RequestBytes, "%s at %d sends less than direct", mode, n)
			t.Logf("tools=%-5d %-9s last request %8d B (direct %8d B, %.1f%% saved)", n, mode, r.RequestBytes,
				off.RequestBytes, 100*float64(off.RequestBytes-r.RequestBytes)/float64(off.RequestBytes))
		}
	}
}

func BenchmarkPayload(b *testing.B) {
	for _, mode := range []runtime.Mode{runtime.ModeOff, runtime.ModeCode, runtime.ModeTools, runtime.ModeDirectory} {
		for _, n := range payloadSizes {
			b.Run(fmt.Sprintf("mode=%s/tools=%d", mode, n), func(b *testing.B) {
				var r scenario.Result
				for b.Loop() {
					r = payloadRun(b, mode, n)
				}
				b.ReportMetric(float64(r.RequestBytes), "request-B")
				b.ReportMetric(float64(r.ToolBytes), "tools-B")
				b.ReportMetric(float64(r.TotalRequestBytes), "turn-B")
			})
		}
	}
}
