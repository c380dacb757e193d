package signatures_test

import (
	"bytes"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/signatures"
)

func TestOptionsDefaults(t *testing.T) {
	defaults := &signatures.Options{MaxDepth: 4, MaxProperties: 16, MaxUnionVariants: 4, MaxEnumValues: 6, MaxChars: 300}
	tests := []struct {
		name string
		opts *signatures.Options
	}{
		{"nil", nil},
		{"zero", &signatures.Options{}},
		{"negative", &signatures.Options{MaxDepth: -1, MaxProperties: -1, MaxUnionVariants: -1, MaxEnumValues: -1,
			MaxChars: -1}},
	}
	for _, c := range loadGoldenCases(t) {
		if c.options != nil {
			continue
		}
		want := signatures.Input(c.schema, defaults)
		wantOutput, wantOK := signatures.Output(c.schema, defaults)
		for _, tt := range tests {
			assert.Equal(t, want, signatures.Input(c.schema, tt.opts), "%s with %s options", c.path, tt.name)
			output, ok := signatures.Output(c.schema, tt.opts)
			assert.Equal(t, wantOK, ok, "%s with %s options", c.path, tt.name)
			assert.Equal(t, wantOutput, output, "%s with %s options", c.path, tt.name)
		}
	}
}

// TestTinyBudgets holds the MaxChars promise even where no useful hint fits.
func TestTinyBudgets(t *testing.T) {
	for _, c := range loadGoldenCases(t) {
		for maxChars := 1; maxChars <= 40; maxChars++ {
			opts := &signatures.Options{MaxChars: maxChars}
			input := signatures.Input(c.schema, opts)
			require.LessOrEqual(t, len(input), maxChars, "%s at %d", c.path, maxChars)
			requireWellFormed(t, input)
			if maxChars >= 3 {
				require.NotEmpty(t, input, "%s at %d: a hint that does not fit still says ...", c.path, maxChars)
			}
			output, ok := signatures.Output(c.schema, opts)
			if ok {
				require.LessOrEqual(t, len(output), maxChars, "%s at %d", c.path, maxChars)
				require.Equal(t, input, output, "%s at %d", c.path, maxChars)
			}
		}
	}
}

func TestBoundsAreOptions(t *testing.T) {
	tests := []struct {
		name       string
		schema     string
		opts       signatures.Options
		wantInput  string
		wantOutput bool
	}{
		{
			name:       "MaxUnionVariants",
			schema:     `{"anyOf":[{"type":"string"},{"type":"number"},{"type":"boolean"}]}`,
			opts:       signatures.Options{MaxUnionVariants: 2},
			wantInput:  `string | number | ...`,
			wantOutput: false,
		},
		{
			name:       "MaxUnionVariants on a type list",
			schema:     `{"type":["string","number","boolean"]}`,
			opts:       signatures.Options{MaxUnionVariants: 3},
			wantInput:  `string | number | boolean`,
			wantOutput: true,
		},
		{
			name:       "MaxEnumValues",
			schema:     `{"enum":[1,2,3]}`,
			opts:       signatures.Options{MaxEnumValues: 3},
			wantInput:  `1 | 2 | 3`,
			wantOutput: true,
		},
		{
			name:       "MaxProperties",
			schema:     `{"type":"object","additionalProperties":false,"properties":{"b":{"type":"string"},"a":{"type":"string"}}}`,
			opts:       signatures.Options{MaxProperties: 1},
			wantInput:  `{ a?: string; ... }`,
			wantOutput: false,
		},
		{
			name:       "MaxDepth",
			schema:     `{"type":"object","additionalProperties":false,"properties":{"a":{"type":"object","additionalProperties":false}}}`,
			opts:       signatures.Options{MaxDepth: 2},
			wantInput:  `{ a?: {} }`,
			wantOutput: true,
		},
		{
			name:       "MaxChars",
			schema:     `{"type":"object","additionalProperties":false,"required":["a","b"],"properties":{"a":{"type":"string"},"b":{"type":"string"}}}`,
			opts:       signatures.Options{MaxChars: len(`{ a: string; ... }`)},
			wantInput:  `{ a: string; ... }`,
			wantOutput: false,
		},
		{
			name:       "MaxChars exactly enough",
			schema:     `{"type":"object","additionalProperties":false,"required":["a","b"],"properties":{"a":{"type":"string"},"b":{"type":"string"}}}`,
			opts:       signatures.Options{MaxChars: len(`{ a: string; b: string }`)},
			wantInput:  `{ a: string; b: string }`,
			wantOutput: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.wantInput, signatures.Input([]byte(tt.schema), &tt.opts))
			hint, ok := signatures.Output([]byte(tt.schema), &tt.opts)
			assert.Equal(t, tt.wantOutput, ok)
			if ok {
				assert.Equal(t, tt.wantInput, hint)
			}
		})
	}
}

// TestConcurrentRendering renders shared schemas from many goroutines; run with -race. The renderer keeps no
// state between calls and never writes to the schema bytes it is given.
func TestConcurrentRendering(t *testing.T) {
	cases := loadGoldenCases(t)
	want := make([]string, len(cases))
	originals := make([][]byte, len(cases))
	for i, c := range cases {
		want[i] = signatures.Input(c.schema, c.options)
		originals[i] = bytes.Clone(c.schema)
	}
	const goroutines, rounds = 8, 20
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for range rounds {
				for i, c := range cases {
					if got := signatures.Input(c.schema, c.options); got != want[i] {
						t.Errorf("%s: got %q, want %q", c.path, got, want[i])
					}
					signatures.Output(c.schema, c.options)
				}
			}
		})
	}
	wg.Wait()
	for i, c := range cases {
		require.Equal(t, originals[i], c.schema, "%s: the schema bytes changed", c.path)
	}
}
