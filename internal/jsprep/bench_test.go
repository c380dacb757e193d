package jsprep

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// underLimits are the costliest inputs each parser is still given: nested constructs just under MaxNodes and
// MaxArrows for the JavaScript parser, and under MaxTypeScriptNodes and MaxTypeScriptArrows for the transform.
func underLimits() map[string]string {
	ts := "let a: number = 1\n"
	fill := func(prefix, unit string, limit int) string {
		n := (limit - nodes(prefix) - 16) / max(nodes(unit), 1)
		return prefix + strings.Repeat(unit, n)
	}
	return map[string]string{
		"js unary":         fill("", "!", MaxNodes) + "x",
		"js arrows":        strings.Repeat("x=>", MaxArrows) + "1",
		"js members":       fill("", "a.", MaxNodes) + "b",
		"js ternary":       fill("", "a?b:", MaxNodes) + "c",
		"js parens":        fill("", "(", MaxNodes/2) + "1" + strings.Repeat(")", MaxNodes/2-16),
		"ts unary":         fill(ts, "!", MaxTypeScriptNodes) + "x",
		"ts members":       fill(ts, "a.", MaxTypeScriptNodes) + "b",
		"ts nested ifs":    fill(ts, "if(a)", MaxTypeScriptNodes) + "1",
		"ts nested arrows": ts + strings.Repeat("x=>", MaxTypeScriptArrows) + "1",
		"ts generics":      "let a: " + fill("", "A<", MaxTypeScriptNodes/2) + "B" + strings.Repeat(">", MaxTypeScriptNodes/2-16) + " = 1",
	}
}

// TestUnderLimits is the correctness twin of BenchmarkPrepareHostile: each input is read by the parser it is
// meant for, not sent down the unparsed path before it.
func TestUnderLimits(t *testing.T) {
	for name, code := range underLimits() {
		s, err := Read(code)
		require.NoError(t, err, name)
		if strings.Contains(s.Unparsed, "came out too large") {
			continue // transformed, and its quadratically indented output refused
		}
		require.Empty(t, s.Unparsed, name)
		require.Equal(t, strings.HasPrefix(name, "ts"), s.TypeScript, name)
	}
}

// BenchmarkPrepareHostile is the worst case the limits allow, per construct: what one run can make the host do
// before the interpreter starts.
func BenchmarkPrepareHostile(b *testing.B) {
	for name, code := range underLimits() {
		b.Run(strings.ReplaceAll(name, " ", "_"), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Read(code); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
