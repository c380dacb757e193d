package signatures_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/signatures"
)

// TestRandomSchemas renders 1,000 random wide and deep schemas. Each hint must stay within 300 characters, be well
// formed, be the same on every rendering, and not depend on the order of the keys in the JSON text; a complete
// output hint must be what Input renders too.
func TestRandomSchemas(t *testing.T) {
	rng := rand.New(rand.NewPCG(20261130, 3))
	completeOutputs := 0
	for i := range 1000 {
		schema := (&schemaGenerator{rng: rng, nodesLeft: 150}).schema(0)
		first := []byte(encodeShuffled(rng, schema))
		second := []byte(encodeShuffled(rng, schema))

		input := signatures.Input(first, nil)
		require.LessOrEqual(t, len(input), 300, "schema %d: %s", i, first)
		requireWellFormed(t, input)
		require.Equal(t, input, signatures.Input(first, nil), "schema %d is not deterministic: %s", i, first)
		require.Equal(t, input, signatures.Input(second, nil), "schema %d depends on key order: %s", i, first)

		output, ok := signatures.Output(first, nil)
		secondOutput, secondOK := signatures.Output(second, nil)
		require.Equal(t, ok, secondOK, "schema %d: %s", i, first)
		require.Equal(t, output, secondOutput, "schema %d: %s", i, first)
		if ok {
			completeOutputs++
			require.Equal(t, input, output, "schema %d: %s", i, first)
		}
	}
	// The generator must reach both outcomes, or this test proves less than it says.
	require.Greater(t, completeOutputs, 20)
	require.Less(t, completeOutputs, 980)
}

// schemaGenerator builds schemas mixing every construct the renderer knows, wide (up to 40 properties, 8 union
// variants, 10 enum values) and deep (up to 7 levels); nodesLeft keeps each one to a few hundred nodes.
type schemaGenerator struct {
	rng       *rand.Rand
	nodesLeft int
}

func (g *schemaGenerator) schema(depth int) any {
	rng := g.rng
	g.nodesLeft--
	if depth > 6 || g.nodesLeft <= 0 {
		return map[string]any{"type": pick(rng, "string", "integer", "boolean")}
	}
	s := map[string]any{}
	switch rng.IntN(12) {
	case 0, 1, 2, 3:
		properties := map[string]any{}
		var required []any
		for i := range rng.IntN(40) {
			name := randomName(rng, i)
			properties[name] = g.schema(depth + 1)
			if rng.IntN(2) == 0 {
				required = append(required, name)
			}
		}
		s["type"] = "object"
		s["properties"] = properties
		if required != nil {
			s["required"] = required
		}
		if rng.IntN(5) > 0 {
			s["additionalProperties"] = false
		}
	case 4:
		s["type"] = "array"
		s["items"] = g.schema(depth + 1)
	case 5:
		s["enum"] = randomLiterals(rng, rng.IntN(10)+1)
	case 6:
		s["const"] = randomLiterals(rng, 1)[0]
	case 7:
		variants := make([]any, rng.IntN(8)+1)
		for i := range variants {
			variants[i] = g.schema(depth + 1)
		}
		s[pick(rng, "anyOf", "oneOf")] = variants
	case 8:
		s["type"] = []any{pick(rng, "string", "object"), pick(rng, "null", "integer", "number")}
	case 9:
		s["$ref"] = "#"
	default:
		s["type"] = pick(rng, "string", "number", "integer", "boolean", "null")
	}
	if rng.IntN(8) == 0 {
		s["nullable"] = true
	}
	if rng.IntN(4) == 0 {
		s["description"] = strings.Repeat("words ", rng.IntN(8))
	}
	return s
}

func randomName(rng *rand.Rand, i int) string {
	switch rng.IntN(6) {
	case 0:
		return fmt.Sprintf("with-dash-%d", i)
	case 1:
		return fmt.Sprintf("a_long_parameter_name_number_%d", i)
	default:
		return fmt.Sprintf("p%d", i)
	}
}

func randomLiterals(rng *rand.Rand, n int) []any {
	values := make([]any, n)
	for i := range values {
		switch rng.IntN(4) {
		case 0:
			values[i] = rng.IntN(1000)
		case 1:
			values[i] = rng.IntN(2) == 0
		default:
			values[i] = fmt.Sprintf("value \"%d\"", rng.IntN(100))
		}
	}
	return values
}

func pick(rng *rand.Rand, choices ...string) string {
	return choices[rng.IntN(len(choices))]
}

// encodeShuffled writes value as JSON with the keys of every object in a random order; encoding/json would always
// sort them, which is exactly the order a renderer could come to depend on.
func encodeShuffled(rng *rand.Rand, value any) string {
	switch v := value.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for key := range v {
			keys = append(keys, key)
		}
		slices.Sort(keys)
		rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		parts := make([]string, len(keys))
		for i, key := range keys {
			parts[i] = encodeShuffled(rng, key) + ":" + encodeShuffled(rng, v[key])
		}
		return "{" + strings.Join(parts, ",") + "}"
	case []any:
		parts := make([]string, len(v))
		for i, element := range v {
			parts[i] = encodeShuffled(rng, element)
		}
		return "[" + strings.Join(parts, ",") + "]"
	default:
		encoded, err := json.Marshal(v)
		if err != nil {
			panic(err)
		}
		return string(encoded)
	}
}
