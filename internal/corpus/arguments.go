package corpus

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp/syntax"
	"strings"

	"github.com/toolsearch/toolsearch/internal/textcut"
)

// Arguments generates arguments for a tool from its input schema the way a careful model would write them: every
// required property filled with a value of its declared type, within its enum, const, length, range and item
// bounds, following local $refs and taking the first usable variant of anyOf and oneOf. Optional properties are
// left out. A required string with a pattern gets the simplest string the pattern matches, when Go's regexp syntax
// can read the pattern.
func Arguments(schema json.RawMessage) (json.RawMessage, error) {
	var root any
	if len(schema) > 0 {
		if err := json.Unmarshal(schema, &root); err != nil {
			return nil, fmt.Errorf("corpus: schema: %w", err)
		}
	}
	g := generator{root: root}
	v := g.value(root, 0)
	if _, ok := v.(map[string]any); !ok {
		v = map[string]any{}
	}
	return json.Marshal(v)
}

type generator struct {
	root any
}

// maxDepth stops recursive schemas: deeper than this, optional structure is left out and required values are
// the simplest of their type.
const maxDepth = 24

func (g generator) value(node any, depth int) any {
	s, ok := node.(map[string]any)
	if !ok || depth > maxDepth {
		return "x"
	}
	if ref, ok := s["$ref"].(string); ok {
		return g.value(g.resolve(ref), depth+1)
	}
	if c, ok := s["const"]; ok {
		return c
	}
	if enum, ok := s["enum"].([]any); ok && len(enum) > 0 {
		return enum[0]
	}
	for _, key := range []string{"anyOf", "oneOf"} {
		if variants, ok := s[key].([]any); ok && len(variants) > 0 {
			for _, v := range variants {
				if vs, ok := v.(map[string]any); ok && vs["type"] != "null" {
					return g.value(g.merged(s, vs), depth+1)
				}
			}
			return nil
		}
	}
	if all, ok := s["allOf"].([]any); ok {
		merged := map[string]any{}
		for k, v := range s {
			if k != "allOf" {
				merged[k] = v
			}
		}
		for _, part := range all {
			merged = g.merged(merged, part)
		}
		return g.value(merged, depth+1)
	}
	switch typeOf(s) {
	case "string":
		return stringValue(s)
	case "integer":
		return math.Trunc(numberValue(s, true))
	case "number":
		return numberValue(s, false)
	case "boolean":
		return true
	case "null":
		return nil
	case "array":
		n := int(number(s["minItems"], 0))
		items := make([]any, 0, n)
		for i := range n {
			item := s["items"]
			if tuple, ok := item.([]any); ok { // draft 4's tuple form
				item = nil
				if i < len(tuple) {
					item = tuple[i]
				}
			}
			if prefix, ok := s["prefixItems"].([]any); ok && i < len(prefix) {
				item = prefix[i]
			}
			items = append(items, g.value(item, depth+1))
		}
		return items
	case "object":
		obj := map[string]any{}
		props, _ := s["properties"].(map[string]any)
		required, _ := s["required"].([]any)
		for _, r := range required {
			name, ok := r.(string)
			if !ok {
				continue
			}
			if p, ok := props[name]; ok {
				obj[name] = g.value(p, depth+1)
			} else {
				obj[name] = "x"
			}
		}
		return obj
	}
	return "x"
}

// merged is base with the keywords of part added (part wins), and the required lists and properties joined:
// what a value must satisfy for both.
func (g generator) merged(base map[string]any, part any) map[string]any {
	p, ok := part.(map[string]any)
	if !ok {
		return base
	}
	if ref, ok := p["$ref"].(string); ok {
		if resolved, ok := g.resolve(ref).(map[string]any); ok {
			p = resolved
		}
	}
	out := map[string]any{}
	for k, v := range base {
		if k != "anyOf" && k != "oneOf" {
			out[k] = v
		}
	}
	for k, v := range p {
		switch k {
		case "required":
			prev, _ := out["required"].([]any)
			add, _ := v.([]any)
			out["required"] = append(append([]any(nil), prev...), add...)
		case "properties":
			props := map[string]any{}
			if prev, ok := out["properties"].(map[string]any); ok {
				for name, s := range prev {
					props[name] = s
				}
			}
			if add, ok := v.(map[string]any); ok {
				for name, s := range add {
					props[name] = s
				}
			}
			out["properties"] = props
		default:
			out[k] = v
		}
	}
	return out
}

// resolve follows a local JSON pointer ("#/$defs/x"); anything else resolves to nothing.
func (g generator) resolve(ref string) any {
	if !strings.HasPrefix(ref, "#") {
		return nil
	}
	node := g.root
	for _, part := range strings.Split(strings.TrimPrefix(ref, "#"), "/") {
		if part == "" {
			continue
		}
		part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
		obj, ok := node.(map[string]any)
		if !ok {
			return nil
		}
		node = obj[part]
	}
	return node
}

// typeOf is the schema's first non-null type, or what its keywords imply.
func typeOf(s map[string]any) string {
	switch t := s["type"].(type) {
	case string:
		return t
	case []any:
		for _, v := range t {
			if name, ok := v.(string); ok && name != "null" {
				return name
			}
		}
		return "null"
	}
	switch {
	case s["properties"] != nil || s["required"] != nil:
		return "object"
	case s["items"] != nil:
		return "array"
	}
	return ""
}

func stringValue(s map[string]any) string {
	v := "x"
	switch s["format"] {
	case "uri", "url", "uri-reference", "iri":
		v = "https://example.com/x"
	case "email":
		v = "someone@example.com"
	case "date-time":
		v = "2025-01-02T03:04:05Z"
	case "date":
		v = "2025-01-02"
	case "time":
		v = "03:04:05Z"
	case "uuid":
		v = "123e4567-e89b-12d3-a456-426614174000"
	}
	if pattern, ok := s["pattern"].(string); ok {
		if example, ok := matching(pattern); ok {
			v = example
		}
	}
	if n := int(number(s["minLength"], 0)); len(v) < n {
		v += strings.Repeat("x", n-len(v))
	}
	if n, ok := s["maxLength"]; ok {
		v = textcut.Prefix(v, int(number(n, 0)))
	}
	return v
}

// numberValue is 1 moved into [minimum, maximum], respecting exclusive bounds in both the draft 4 (boolean) and
// the later (numeric) form.
func numberValue(s map[string]any, integer bool) float64 {
	step := 1e-3
	if integer {
		step = 1
	}
	v := 1.0
	if m, ok := s["multipleOf"].(float64); ok && m > 0 {
		v = m
	}
	lo, hasLo := s["minimum"].(float64)
	if b, ok := s["exclusiveMinimum"].(bool); ok && b && hasLo {
		lo += step
	} else if x, ok := s["exclusiveMinimum"].(float64); ok {
		lo, hasLo = x+step, true
	}
	hi, hasHi := s["maximum"].(float64)
	if b, ok := s["exclusiveMaximum"].(bool); ok && b && hasHi {
		hi -= step
	} else if x, ok := s["exclusiveMaximum"].(float64); ok {
		hi, hasHi = x-step, true
	}
	if hasLo && v < lo {
		v = lo
		if integer {
			v = math.Ceil(v)
		}
	}
	if hasHi && v > hi {
		v = hi
		if integer {
			v = math.Floor(v)
		}
	}
	return v
}

func number(v any, def float64) float64 {
	if f, ok := v.(float64); ok {
		return f
	}
	return def
}

// matching returns a short string that pattern matches (searching anywhere in the string, as JSON Schema does).
func matching(pattern string) (string, bool) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return "", false
	}
	var b strings.Builder
	if !example(&b, re.Simplify()) {
		return "", false
	}
	return b.String(), true
}

// example writes a string re matches: the first alternative, the least repetition (one for "+"), the first
// character of a class (a letter or digit when the class has one).
func example(b *strings.Builder, re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpLiteral:
		b.WriteString(string(re.Rune))
	case syntax.OpCharClass:
		if len(re.Rune) == 0 {
			return false
		}
		r := re.Rune[0]
		for i := 0; i+1 < len(re.Rune); i += 2 {
			for _, preferred := range "a0A" {
				if re.Rune[i] <= preferred && preferred <= re.Rune[i+1] {
					r = preferred
				}
			}
		}
		b.WriteRune(r)
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		b.WriteByte('x')
	case syntax.OpCapture:
		return example(b, re.Sub[0])
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			if !example(b, sub) {
				return false
			}
		}
	case syntax.OpAlternate:
		return example(b, re.Sub[0])
	case syntax.OpPlus:
		return example(b, re.Sub[0])
	case syntax.OpRepeat:
		for range re.Min {
			if !example(b, re.Sub[0]) {
				return false
			}
		}
	case syntax.OpStar, syntax.OpQuest, syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine,
		syntax.OpBeginText, syntax.OpEndText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
	default:
		return false
	}
	return true
}
