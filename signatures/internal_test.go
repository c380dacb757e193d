package signatures

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestWorkIsBounded renders a schema of 4^7 objects that all render alike: each union repeats one subschema
// four times, and the repeats cost no characters once dedupe drops them. Only the step budget stops the pass from
// visiting every one of them.
func TestWorkIsBounded(t *testing.T) {
	schema := `{"type":"string"}`
	for range 7 {
		schema = `{"type":"object","properties":{"a":` + schema + `}}`
		schema = `{"anyOf":[` + strings.Repeat(schema+",", 3) + schema + `]}`
	}
	root, ok := decode([]byte(schema))
	require.True(t, ok)
	b := (*Options)(nil).bounds()
	b.depth = 8
	p := newPass(b, b.depth)
	hint, _ := p.render(root, 1, 0, b.chars)
	require.LessOrEqual(t, len(hint), b.chars)
	// A visit past the budget returns at once; a handful of them unwind the pass.
	require.Greater(t, p.steps, stepsPerChar*b.chars, "the budget, not the schema, ended the pass")
	require.Less(t, p.steps, stepsPerChar*b.chars+64)
	require.True(t, p.partial, "a pass cut short by its budget is not complete")
}

// TestStepBudgetLeavesRealSchemasAlone shows the step budget is far above what real schemas use, so it only ever
// cuts hostile ones.
func TestStepBudgetLeavesRealSchemasAlone(t *testing.T) {
	schema := `{"type":"object","required":["owner","repo","title"],"properties":{
		"owner":{"type":"string"},"repo":{"type":"string"},"title":{"type":"string"},
		"body":{"type":"string"},"labels":{"type":"array","items":{"type":"string"}},
		"state":{"enum":["open","closed"]},"milestone":{"anyOf":[{"type":"integer"},{"type":"null"}]},
		"meta":{"type":"object","properties":{"a":{"type":"object","properties":{"b":{"type":"string"}}}}}}}`
	root, ok := decode([]byte(schema))
	require.True(t, ok)
	b := (*Options)(nil).bounds()
	p := newPass(b, b.depth)
	hint, fitted := p.render(root, 1, 0, b.chars)
	require.True(t, fitted, hint)
	require.Less(t, p.steps, b.chars/10, "a real schema uses a handful of steps, not thousands")
}

func TestDecodeAcceptsExactlyOneJSONValue(t *testing.T) {
	tests := []struct {
		raw  string
		want bool
	}{
		{`{"type":"string"}`, true},
		{" \n\t{\"type\":\"string\"} \r\n", true},
		{`true`, true},
		{`1e400`, true},
		{``, false},
		{`   `, false},
		{`{"type":"string"} {}`, false},
		{`{"type":"string"}]`, false},
		{`{"type":"string"},`, false},
		{`{"type":"string"`, false},
		{`{"type":'string'}`, false},
		{"{\"a\":\"\xff\"}", true},
		{strings.Repeat("[", 10001) + strings.Repeat("]", 10001), false},
	}
	for _, tt := range tests {
		_, ok := decode([]byte(tt.raw))
		require.Equal(t, tt.want, ok, "%q", tt.raw)
		require.Equal(t, json.Valid([]byte(tt.raw)), ok, "decode and json.Valid disagree on %q", tt.raw)
	}
}
