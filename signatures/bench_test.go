package signatures_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/signatures"
)

// benchmarkSchemas are the parameter schemas BenchmarkInput renders, with the hint each must give: a plain tool,
// a nested one that folds to fit, and a wide one past the property bound.
var benchmarkSchemas = []struct {
	name   string
	schema string
	want   string
}{
	{
		name: "create_issue",
		schema: `{"type":"object","required":["owner","repo","title"],"properties":{
			"owner":{"type":"string","description":"Repository owner"},
			"repo":{"type":"string","description":"Repository name"},
			"title":{"type":"string","description":"Issue title"},
			"body":{"type":"string","description":"Issue body, Markdown"},
			"labels":{"type":"array","items":{"type":"string"}},
			"milestone":{"type":["integer","null"]}}}`,
		want: `{ owner: string; repo: string; title: string; body?: string; labels?: Array<string>; ` +
			`milestone?: number | null }`,
	},
	{
		name: "nested_search",
		schema: `{"type":"object","required":["query"],"properties":{
			"query":{"type":"string"},
			"filters":{"type":"object","properties":{
				"created":{"type":"object","properties":{"after":{"type":"string","format":"date-time"},"before":{"type":"string","format":"date-time"}}},
				"authors":{"type":"array","items":{"type":"object","required":["login"],"properties":{"login":{"type":"string"},"org":{"type":"string"}}}},
				"state":{"enum":["open","closed","merged","draft","any"]},
				"labels":{"type":"array","items":{"type":"string"}},
				"repository_names_to_include":{"type":"array","items":{"type":"string"}},
				"repository_names_to_exclude":{"type":"array","items":{"type":"string"}}}},
			"sort":{"enum":["relevance","newest","oldest"]},
			"limit":{"type":"integer","minimum":1,"maximum":100}}}`,
		// Too long at every depth but the first: the worst case, four passes.
		want: `{ query: string; filters?: { ... }; limit?: number; sort?: "relevance" | "newest" | "oldest" }`,
	},
	{
		name:   "wide_32",
		schema: wideClosedObject(32),
		want: `{ f00: string; f01: string; f02: string; f03: string; f04: string; f05: string; f06: string; ` +
			`f07: string; f08: string; f09: string; f10: string; f11: string; f12: string; f13: string; ` +
			`f14: string; f15: string; ... }`,
	},
}

func wideClosedObject(n int) string {
	properties, required := "", ""
	for i := range n {
		if i > 0 {
			properties += ","
			required += ","
		}
		name := string([]byte{'f', byte('0' + i/10), byte('0' + i%10)})
		properties += `"` + name + `":{"type":"string"}`
		required += `"` + name + `"`
	}
	return `{"type":"object","additionalProperties":false,"required":[` + required + `],"properties":{` +
		properties + `}}`
}

func BenchmarkInput(b *testing.B) {
	for _, bm := range benchmarkSchemas {
		schema := []byte(bm.schema)
		b.Run(bm.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(schema)))
			for b.Loop() {
				signatures.Input(schema, nil)
			}
		})
	}
}

// TestBenchmarkInputSchemas is BenchmarkInput's correctness twin: it proves each benchmark renders the real hint,
// not an early "unknown".
func TestBenchmarkInputSchemas(t *testing.T) {
	for _, bm := range benchmarkSchemas {
		t.Run(bm.name, func(t *testing.T) {
			require.Equal(t, bm.want, signatures.Input([]byte(bm.schema), nil))
		})
	}
}
