package signatures

import (
	"bytes"
	"encoding/json"
	"io"
)

// Unknown is the input hint of untrusted (MCP, client) tools: their schemas are never traversed for hints.
//
// Input also returns it for a schema that says nothing about the value (`{}`, `true`) and for bytes that are not
// JSON at all: a hint cannot describe what it cannot read, and describe still shows the model the raw schema.
const Unknown = "unknown"

// The default bounds, small enough that a hint fits on a line of a search hit, used for every Options field that is
// zero or negative.
const (
	defaultMaxDepth         = 4
	defaultMaxProperties    = 16
	defaultMaxUnionVariants = 4
	defaultMaxEnumValues    = 6
	defaultMaxChars         = 300
)

// Options bound the renderer. A nil *Options or zero fields mean the defaults:
// MaxDepth 4, MaxProperties 16, MaxUnionVariants 4, MaxEnumValues 6, MaxChars 300.
//
// MaxDepth counts nested objects (the root one is 1); deeper ones show as `{ ... }`. Arrays and unions add no
// depth.
// MaxProperties bounds the properties of one object (and the elements of one tuple), MaxUnionVariants the
// variants of one anyOf/oneOf or `type` list, MaxEnumValues the literals of one enum. MaxChars bounds the whole
// hint in bytes, so it holds however a reader counts characters. An Options value is only read, never kept.
type Options struct {
	MaxDepth, MaxProperties, MaxUnionVariants, MaxEnumValues, MaxChars int
}

// Input renders the input hint of a trusted tool's parameters schema. It never fails: whatever does not fit
// (or cannot be rendered) ends in "; ..." / "{ ... }" and the result is always within MaxChars.
//
// When the whole hint does not fit, nested objects are folded to `{ ... }` level by level, deepest first, before
// any property is dropped: the names of the top-level parameters are what the model needs most to call the tool.
// Input is safe for concurrent use.
func Input(schema json.RawMessage, opts *Options) string {
	bounds := opts.bounds()
	root, ok := decode(schema)
	if !ok {
		return fitOrEllipsis(Unknown, bounds.chars)
	}
	depth := bounds.depth
	for {
		p := newPass(bounds, depth)
		text, fitted := p.render(root, 1, 0, bounds.chars)
		// A pass that never reached its depth limit renders exactly like any lower limit down to the deepest
		// level it did reach, so the next pass that can differ is one below that.
		next := min(depth, p.deepest) - 1
		if fitted || next < 1 {
			return fitOrEllipsis(text, bounds.chars)
		}
		depth = next
	}
}

// Output renders the output hint; ok is false unless the hint is COMPLETE (closed objects all the way down,
// within every bound, no construct that makes it partial). Callers omit the output hint when !ok.
//
// A complete hint is a promise about every value the tool can return, so anything short of one is dropped
// rather than shown: hint is "" whenever ok is false. When ok is true, Input of the same schema and options
// returns the same hint. Output is safe for concurrent use.
func Output(schema json.RawMessage, opts *Options) (hint string, ok bool) {
	bounds := opts.bounds()
	root, valid := decode(schema)
	if !valid {
		return "", false
	}
	p := newPass(bounds, bounds.depth)
	text, fitted := p.render(root, 1, 0, bounds.chars)
	if !fitted || p.partial || text == "" {
		return "", false
	}
	return text, true
}

// bounds is Options with the defaults applied.
type bounds struct {
	depth, properties, unionVariants, enumValues, chars int
}

func (o *Options) bounds() bounds {
	b := bounds{
		depth:         defaultMaxDepth,
		properties:    defaultMaxProperties,
		unionVariants: defaultMaxUnionVariants,
		enumValues:    defaultMaxEnumValues,
		chars:         defaultMaxChars,
	}
	if o == nil {
		return b
	}
	pick := func(field int, into *int) {
		if field > 0 {
			*into = field
		}
	}
	pick(o.MaxDepth, &b.depth)
	pick(o.MaxProperties, &b.properties)
	pick(o.MaxUnionVariants, &b.unionVariants)
	pick(o.MaxEnumValues, &b.enumValues)
	pick(o.MaxChars, &b.chars)
	return b
}

// decode parses one JSON value, keeping numbers as written so that a literal shows as its schema spells it and
// a number too large for float64 is not an error. Duplicate keys keep the last value, as JavaScript's JSON.parse
// does. Nesting deeper than encoding/json's own limit (10,000) is invalid JSON here too.
func decode(raw json.RawMessage) (any, bool) {
	decoder := json.NewDecoder(bytes.NewReader(raw))
	decoder.UseNumber()
	var value any
	if err := decoder.Decode(&value); err != nil {
		return nil, false
	}
	// Anything after the value, even another value, makes the bytes something other than one schema.
	if _, err := decoder.Token(); err != io.EOF {
		return nil, false
	}
	return value, true
}

// fitOrEllipsis keeps the hint within limit even for bounds too small to be useful.
func fitOrEllipsis(text string, limit int) string {
	switch {
	case text != "" && len(text) <= limit:
		return text
	case len(ellipsis) <= limit:
		return ellipsis
	default:
		return ""
	}
}
