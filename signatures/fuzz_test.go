package signatures_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/signatures"
)

// addGoldenSeeds seeds a fuzz target with every golden schema, under the default options and a small budget.
func addGoldenSeeds(f *testing.F) {
	for _, c := range loadGoldenCases(f) {
		f.Add(c.schema, uint16(0), uint8(0), uint8(0))
		f.Add(c.schema, uint16(24), uint8(2), uint8(1))
	}
}

// fuzzOptions turns fuzzed numbers into Options; zero means the default, so both paths are covered.
func fuzzOptions(maxChars uint16, maxDepth, maxCount uint8) (*signatures.Options, int) {
	opts := &signatures.Options{
		MaxChars:         int(maxChars % 600),
		MaxDepth:         int(maxDepth % 8),
		MaxProperties:    int(maxCount % 20),
		MaxUnionVariants: int(maxCount % 6),
		MaxEnumValues:    int(maxCount % 8),
	}
	limit := opts.MaxChars
	if limit == 0 {
		limit = 300
	}
	return opts, limit
}

func FuzzInput(f *testing.F) {
	addGoldenSeeds(f)
	f.Fuzz(func(t *testing.T, schema []byte, maxChars uint16, maxDepth, maxCount uint8) {
		opts, limit := fuzzOptions(maxChars, maxDepth, maxCount)
		hint := signatures.Input(schema, opts)
		require.LessOrEqual(t, len(hint), limit)
		require.Equal(t, hint, signatures.Input(schema, opts), "Input is not deterministic")
		requireWellFormed(t, hint)
		if !json.Valid(schema) && limit >= len(signatures.Unknown) {
			require.Equal(t, signatures.Unknown, hint, "bytes that are not JSON")
		}
	})
}

func FuzzOutput(f *testing.F) {
	addGoldenSeeds(f)
	f.Fuzz(func(t *testing.T, schema []byte, maxChars uint16, maxDepth, maxCount uint8) {
		opts, limit := fuzzOptions(maxChars, maxDepth, maxCount)
		hint, ok := signatures.Output(schema, opts)
		again, okAgain := signatures.Output(schema, opts)
		require.Equal(t, ok, okAgain, "Output is not deterministic")
		require.Equal(t, hint, again, "Output is not deterministic")
		if !ok {
			require.Empty(t, hint)
			return
		}
		require.NotEmpty(t, hint)
		require.LessOrEqual(t, len(hint), limit)
		require.Equal(t, hint, signatures.Input(schema, opts), "a complete output hint is what Input renders too")
		requireWellFormed(t, hint)
	})
}
