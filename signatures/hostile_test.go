package signatures_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/signatures"
)

// TestHostileSchemas feeds schemas built to make a renderer slow or deep. Each must render within the bounds,
// quickly, and without an output hint.
func TestHostileSchemas(t *testing.T) {
	tests := []struct {
		name   string
		schema string
	}{
		// Every union repeats one subschema, whose unions repeat theirs: without a budget on work the repeats
		// multiply level by level before dedupe can drop them.
		{"repeated unions nested", nest(`{"anyOf":[%s,%s,%s,%s]}`, `{"type":"object","properties":{"a":%s}}`, 6)},
		{"anyOf chain", strings.Repeat(`{"anyOf":[`, 4000) + `{"type":"string"}` + strings.Repeat(`]}`, 4000)},
		{"allOf chain", strings.Repeat(`{"allOf":[`, 4000) + `{"type":"string"}` + strings.Repeat(`]}`, 4000)},
		{"array chain", strings.Repeat(`{"type":"array","items":`, 4000) + `{"type":"string"}` + strings.Repeat(`}`, 4000)},
		{"object chain", strings.Repeat(`{"properties":{"a":`, 3000) + `{}` + strings.Repeat(`}}`, 3000)},
		{"too deep for JSON", strings.Repeat(`[`, 20000) + strings.Repeat(`]`, 20000)},
		{"wide object", `{"type":"object","properties":{` + wideProperties(50000) + `}}`},
		{"wide enum", `{"enum":[` + strings.TrimSuffix(strings.Repeat(`"v",`, 100000), ",") + `]}`},
		{"wide anyOf", `{"anyOf":[` + strings.TrimSuffix(strings.Repeat(`{"type":"string"},`, 100000), ",") + `]}`},
		{"long required", `{"type":"object","required":[` + strings.TrimSuffix(strings.Repeat(`"r",`, 100000), ",") + `]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			input := signatures.Input([]byte(tt.schema), nil)
			hint, ok := signatures.Output([]byte(tt.schema), nil)
			elapsed := time.Since(start)
			require.LessOrEqual(t, len(input), 300)
			requireWellFormed(t, input)
			require.False(t, ok, "output hint %q", hint)
			// Generous for a noisy, shared machine and -race: this only catches a renderer whose work grows
			// with what the schema nests rather than with its size (TestWorkIsBounded counts the work itself).
			require.Less(t, elapsed, 30*time.Second)
		})
	}
}

// nest fills the %s of outer with inner, and the %s of inner with the next level, levels deep.
func nest(outer, inner string, levels int) string {
	schema := `{"type":"string"}`
	for range levels {
		schema = strings.ReplaceAll(inner, "%s", schema)
		schema = strings.ReplaceAll(outer, "%s", schema)
	}
	return schema
}

func wideProperties(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"p`)
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString(string(rune('a' + i%26)))
		b.WriteString(`":{"type":"string"}`)
	}
	return b.String()
}
