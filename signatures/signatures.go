package signatures

import "encoding/json"

// Unknown is the input hint of untrusted (MCP, client) tools: their schemas are never traversed for hints.
const Unknown = "unknown"

// Options bound the renderer. A nil *Options or zero fields mean the SPEC defaults:
// MaxDepth 4, MaxProperties 16, MaxUnionVariants 4, MaxEnumValues 6, MaxChars 300.
type Options struct {
	MaxDepth, MaxProperties, MaxUnionVariants, MaxEnumValues, MaxChars int
}

// Input renders the input hint of a trusted tool's parameters schema.
func Input(schema json.RawMessage, opts *Options) string {
	return Unknown
}

// Output renders the output hint; ok is false unless the hint is complete.
func Output(schema json.RawMessage, opts *Options) (hint string, ok bool) {
	return "", false
}
