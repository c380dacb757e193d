package signatures_test

import (
	"fmt"

	"github.com/toolsearch/toolsearch/signatures"
)

func ExampleInput() {
	parameters := []byte(`{
		"type": "object",
		"required": ["repo", "title"],
		"properties": {
			"title": {"type": "string", "description": "Issue title"},
			"repo": {"type": "string"},
			"labels": {"type": "array", "items": {"type": "string"}},
			"priority": {"type": "integer", "enum": [1, 2, 3]}
		}
	}`)
	fmt.Println(signatures.Input(parameters, nil))

	// Untrusted (MCP, client) tools get signatures.Unknown without their schema being read at all.
	fmt.Println(signatures.Unknown)
	// Output:
	// { repo: string; title: string; labels?: Array<string>; priority?: 1 | 2 | 3 }
	// unknown
}

func ExampleOutput() {
	closed := []byte(`{
		"type": "array",
		"items": {
			"type": "object",
			"additionalProperties": false,
			"required": ["id", "paid"],
			"properties": {"id": {"type": "string"}, "paid": {"type": "boolean"}}
		}
	}`)
	hint, ok := signatures.Output(closed, nil)
	fmt.Println(hint, ok)

	// Without additionalProperties: false the tool may return more than the hint says, so there is no hint.
	open := []byte(`{"type": "object", "properties": {"id": {"type": "string"}}}`)
	hint, ok = signatures.Output(open, nil)
	fmt.Printf("%q %v\n", hint, ok)
	// Output:
	// Array<{ id: string; paid: boolean }> true
	// "" false
}

func ExampleOptions() {
	schema := []byte(`{"type": "object", "properties": {"mode": {"enum": ["drip", "flood", "trickle"]}}}`)
	fmt.Println(signatures.Input(schema, &signatures.Options{MaxEnumValues: 2}))
	// Output:
	// { mode?: "drip" | "flood" | ... }
}

func ExampleQuoteKey() {
	for _, name := range []string{"title", "$ref", "content-type", "2fa", "line\nbreak"} {
		fmt.Println(signatures.QuoteKey(name))
	}
	// Output:
	// title
	// $ref
	// "content-type"
	// "2fa"
	// "line\nbreak"
}
