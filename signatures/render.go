package signatures

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
)

// ellipsis stands for whatever a hint leaves out; the model reads it as "call describe for the rest".
const ellipsis = "..."

// stepsPerChar sets a pass's work budget: schema nodes visited per byte of MaxChars. A union can repeat one
// subschema any number of times, and each repeat renders in full before dedupe drops it at no cost in
// characters, so without a budget on work itself a pass could visit every node of a huge schema. With it, a
// pass costs what its hint can show, not what the schema holds. Real schemas use a few steps per byte.
const stepsPerChar = 16

// maxCombinatorChain bounds anyOf/oneOf/allOf nested in one another with no object or array between them. Those
// levels cost no characters, so neither the depth nor the character bound would stop a schema nesting them
// thousands deep; real schemas nest them once or twice.
const maxCombinatorChain = 8

// pass is one rendering of a schema under one depth limit. It is not safe for concurrent use; Input and Output
// make a new one per call.
type pass struct {
	bounds
	depthLimit int
	// partial records that something was left out or could not be rendered, so the hint is not complete.
	partial bool
	// deepest is the deepest object level rendered in full, which tells Input whether a lower depth limit could
	// change anything.
	deepest int
	// steps counts schema nodes visited, up to stepsPerChar per byte of the budget; past that nothing more fits.
	steps int
}

func newPass(b bounds, depthLimit int) *pass {
	return &pass{bounds: b, depthLimit: depthLimit}
}

// item renders one element of a list (a property, a union member, a tuple element) within budget bytes. It
// returns "" when nothing of it fits; fitted is false when the budget cut something inside it.
type item func(budget int) (text string, fitted bool)

// leaf is an item whose text is fixed.
func leaf(text string) item {
	return func(budget int) (string, bool) {
		if len(text) > budget {
			return "", false
		}
		return text, true
	}
}

// render renders everything schema allows as one union; level is how many objects enclose it.
func (p *pass) render(schema any, level, chain, budget int) (string, bool) {
	members, more := p.members(schema, level, chain, nil, p.memberCapacity(budget))
	if len(members) == 1 && !more {
		return members[0](budget)
	}
	return list("", " | ", "", members, more, true, budget)
}

// memberCapacity is how many union members a budget could ever show: each takes a byte and a " | ". Collecting
// more would only cost time, however wide and deep a schema nests its unions and enums.
func (p *pass) memberCapacity(budget int) int {
	return max(budget, 0)/len(" | ") + 2
}

// members appends the alternatives schema allows to into, at most capacity of them; more reports that some were
// left out.
func (p *pass) members(schema any, level, chain int, into []item, capacity int) ([]item, bool) {
	p.steps++
	if len(into) >= capacity || p.steps > stepsPerChar*p.chars {
		p.partial = true
		return into, true
	}
	s, isObject := schema.(map[string]any)
	switch {
	case schema == true:
		p.partial = true
		return append(into, leaf(Unknown)), false
	case schema == false:
		return append(into, leaf("never")), false
	case !isObject || chain > maxCombinatorChain:
		p.partial = true
		return append(into, leaf(Unknown)), false
	}
	if hasAny(s, "$ref", "$dynamicRef", "$recursiveRef") {
		// References are never followed: that keeps rendering finite on cyclic schemas and keeps it a pure
		// function of the bytes it is given.
		p.partial = true
		return append(into, leaf(Unknown)), false
	}
	// A one-line hint cannot carry what these say; Input renders the rest of the schema, Output gives up.
	if hasAny(s, "allOf", "if", "then", "else", "patternProperties", "prefixItems", "dependentSchemas",
		"dependencies") {
		p.partial = true
	}

	addNull := false
	if nullable, found := s["nullable"]; found {
		flag, isBool := nullable.(bool)
		addNull = isBool && flag
		if !isBool {
			p.partial = true
		}
	}

	var more bool
	switch {
	case has(s, "const"):
		into = append(into, p.literal(s["const"]))
	case has(s, "enum"):
		into, more = p.enumMembers(s["enum"], into, capacity)
	case has(s, "anyOf") || has(s, "oneOf"):
		into, more = p.combinatorMembers(s, level, chain, into, capacity)
	case has(s, "allOf") && !hasOwnShape(s):
		// allOf is an intersection; a single-element allOf is the usual wrapper around a $ref or a
		// description, and is rendered as that element.
		if all, isList := s["allOf"].([]any); isList && len(all) == 1 {
			into, more = p.members(all[0], level, chain+1, into, capacity)
		} else {
			into = append(into, leaf(Unknown))
		}
	default:
		into, more = p.typeMembers(s, level, into, capacity)
	}
	if addNull {
		if len(into) < capacity {
			into = append(into, leaf("null"))
		} else {
			more = true
		}
	}
	if more {
		p.partial = true
	}
	return into, more
}

// combinatorMembers renders anyOf or oneOf. When the schema also has a shape of its own, the variants usually
// only add constraints to it (`oneOf: [{required: [a]}, {required: [b]}]`), so the shape is the better hint.
func (p *pass) combinatorMembers(s map[string]any, level, chain int, into []item, capacity int) ([]item, bool) {
	if hasOwnShape(s) {
		p.partial = true
		return p.typeMembers(s, level, into, capacity)
	}
	anyOf, hasAnyOf := s["anyOf"]
	oneOf, hasOneOf := s["oneOf"]
	if hasAnyOf && hasOneOf {
		// Together they mean "one of these and any of those", which no union says; anyOf is shown.
		p.partial = true
	}
	variants, isList := anyOf.([]any)
	if !hasAnyOf {
		variants, isList = oneOf.([]any)
	}
	if !isList || len(variants) == 0 {
		p.partial = true
		return append(into, leaf(Unknown)), false
	}
	more := false
	if len(variants) > p.unionVariants {
		variants, more = variants[:p.unionVariants], true
	}
	for _, variant := range variants {
		var cut bool
		into, cut = p.members(variant, level, chain+1, into, capacity)
		more = more || cut
	}
	return into, more
}

func (p *pass) enumMembers(enum any, into []item, capacity int) ([]item, bool) {
	values, isList := enum.([]any)
	if !isList || len(values) == 0 {
		p.partial = true
		return append(into, leaf(Unknown)), false
	}
	more := false
	if len(values) > p.enumValues {
		values, more = values[:p.enumValues], true
	}
	for _, value := range values {
		if len(into) >= capacity {
			return into, true
		}
		into = append(into, p.literal(value))
	}
	return into, more
}

// literal renders a const or enum value as a TypeScript literal type; strings are JSON-quoted, so any escaping
// they need is JSON's. Objects and arrays have no literal type.
func (p *pass) literal(value any) item {
	switch v := value.(type) {
	case string:
		return leaf(quote(v))
	case json.Number:
		return leaf(v.String())
	case bool:
		if v {
			return leaf("true")
		}
		return leaf("false")
	case nil:
		return leaf("null")
	default:
		p.partial = true
		return leaf(Unknown)
	}
}

// typeMembers renders the `type` keyword, or the type that the other keywords imply when it is absent.
func (p *pass) typeMembers(s map[string]any, level int, into []item, capacity int) ([]item, bool) {
	types, more := p.types(s)
	if len(types) == 0 {
		// Nothing says what the value is (`{}`, or only annotations such as description).
		p.partial = true
		return append(into, leaf(Unknown)), false
	}
	for _, name := range types {
		if len(into) >= capacity {
			return into, true
		}
		switch name {
		case "string", "number", "boolean", "null":
			into = append(into, leaf(name))
		case "object":
			into = append(into, func(budget int) (string, bool) { return p.object(s, level, budget) })
		case "array":
			into = append(into, func(budget int) (string, bool) { return p.array(s, level, budget) })
		default:
			p.partial = true
			into = append(into, leaf(Unknown))
		}
	}
	return into, more
}

// types lists the schema's types without duplicates, with integer folded into number; more reports a list cut to
// the union bound.
func (p *pass) types(s map[string]any) ([]string, bool) {
	var names []string
	switch t := s["type"].(type) {
	case string:
		names = []string{typeName(t)}
	case []any:
		for _, entry := range t {
			name, isString := entry.(string)
			if !isString {
				p.partial = true
				continue
			}
			if name = typeName(name); !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
	case nil:
		if has(s, "type") {
			p.partial = true // "type": null
			return nil, false
		}
		switch {
		case has(s, "properties") || has(s, "additionalProperties") || has(s, "required") ||
			has(s, "patternProperties"):
			names = []string{"object"}
		case has(s, "items") || has(s, "prefixItems"):
			names = []string{"array"}
		}
	default:
		p.partial = true
	}
	if len(names) > p.unionVariants {
		return names[:p.unionVariants], true
	}
	return names, false
}

func typeName(name string) string {
	if name == "integer" {
		return "number"
	}
	return name
}

// property is one line of an object hint.
type property struct {
	name     string
	optional bool
	schema   any
}

// object renders an object schema. Only `additionalProperties: false` closes it; anything else leaves it open,
// which Input does not show (most parameter schemas never say) but which keeps Output from promising a shape.
func (p *pass) object(s map[string]any, level, budget int) (string, bool) {
	if level > p.depthLimit {
		p.partial = true
		return leaf("{ " + ellipsis + " }")(budget)
	}
	p.deepest = max(p.deepest, level)

	extra, hasExtra := s["additionalProperties"]
	if allowed, isBool := extra.(bool); !hasExtra || !isBool || allowed {
		p.partial = true
	}
	properties := p.properties(s)
	if len(properties) == 0 {
		if extraSchema, isSchema := extra.(map[string]any); isSchema {
			// Keys are free but values are typed: a map.
			return p.wrap("Record<string, ", extraSchema, ">", level+1, budget)
		}
		return leaf("{}")(budget)
	}

	more := false
	if len(properties) > p.bounds.properties {
		properties, more = properties[:p.bounds.properties], true
		p.partial = true
	}
	items := make([]item, len(properties))
	for i, prop := range properties {
		head := QuoteKey(prop.name)
		if prop.optional {
			head += "?"
		}
		head += ": "
		items[i] = func(budget int) (string, bool) {
			// A property is shown with a value or not at all: "name: ..." would cost the room of a whole
			// property and still send the model to describe.
			if len(head) >= budget {
				return "", false
			}
			value, fitted := p.render(prop.schema, level+1, 0, budget-len(head))
			if value == "" {
				return "", false
			}
			return head + value, fitted
		}
	}
	return list("{ ", "; ", " }", items, more, false, budget)
}

// properties orders an object's properties the way the hint shows them: required ones first, then optional
// ones, each group sorted by name (byte order) so that the hint does not depend on the order of the JSON keys.
// A required name that `properties` does not declare is listed as `unknown`: the model must still send it.
func (p *pass) properties(s map[string]any) []property {
	declared, isMap := s["properties"].(map[string]any)
	if has(s, "properties") && !isMap {
		p.partial = true
	}
	required := map[string]bool{}
	if list, found := s["required"]; found {
		names, isList := list.([]any)
		if !isList {
			p.partial = true
		}
		for _, entry := range names {
			name, isString := entry.(string)
			if !isString {
				p.partial = true
				continue
			}
			required[name] = true
		}
	}

	ordered := make([]property, 0, len(declared)+len(required))
	for _, name := range slices.Sorted(maps.Keys(required)) {
		schema, found := declared[name]
		if !found {
			p.partial = true
			schema = true
		}
		ordered = append(ordered, property{name: name, schema: schema})
	}
	for _, name := range slices.Sorted(maps.Keys(declared)) {
		if !required[name] {
			ordered = append(ordered, property{name: name, optional: true, schema: declared[name]})
		}
	}
	return ordered
}

// array renders `Array<T>`, or a tuple for prefixItems and the array form of items (drafts before 2020-12).
//
// Arrays do not count toward the depth bound: `Array<T>` costs seven characters whatever T is, and folding
// `Array<string>` to `Array<...>` would save three while hiding what to send. The character budget bounds arrays
// nested in arrays.
func (p *pass) array(s map[string]any, level, budget int) (string, bool) {
	tuple, isTuple := s["prefixItems"].([]any)
	if !isTuple {
		tuple, isTuple = s["items"].([]any)
	}
	if isTuple {
		// Whether more elements may follow is in other keywords; the hint is partial either way.
		p.partial = true
		more := false
		if len(tuple) > p.bounds.properties {
			tuple, more = tuple[:p.bounds.properties], true
		}
		items := make([]item, len(tuple))
		for i, element := range tuple {
			items[i] = func(budget int) (string, bool) { return p.render(element, level, 0, budget) }
		}
		if len(items) == 0 && !more {
			return leaf("[]")(budget)
		}
		return list("[", ", ", "]", items, more, false, budget)
	}

	elements, found := s["items"]
	if !found {
		p.partial = true
		elements = true
	}
	return p.wrap("Array<", elements, ">", level, budget)
}

// wrap renders open + schema + close, the schema at the given level; a schema that does not fit shows as "...".
func (p *pass) wrap(open string, schema any, close string, level, budget int) (string, bool) {
	room := budget - len(open) - len(close)
	if room < len(ellipsis) {
		return "", false
	}
	inner, fitted := p.render(schema, level, 0, room)
	if inner == "" {
		inner, fitted = ellipsis, false
	}
	return open + inner + close, fitted
}

// list writes items between open and close, separated by sep, within budget bytes. The first item that does not
// fit ends the list with "..."; so does more, which says the caller already left items out for a count bound.
// dedupe drops an item whose text was already written (`integer | number` is one type). list returns "" when not
// even open + "..." + close fits, or when a union (no open) cannot show one member; fitted is false when the
// budget cut something.
func list(open, sep, close string, items []item, more, dedupe bool, budget int) (string, bool) {
	var out strings.Builder
	out.WriteString(open)
	var written []string
	tail := sep + ellipsis + close
	stop := func() (string, bool) {
		if len(written) == 0 {
			// "{ ... }" still says "an object"; a bare "..." says nothing, so a union leaves the slot to its
			// container.
			if open == "" || len(open)+len(ellipsis)+len(close) > budget {
				return "", false
			}
			return open + ellipsis + close, false
		}
		// Room for tail was reserved when the last written item was given its budget.
		return out.String() + tail, false
	}
	for i, render := range items {
		last := i == len(items)-1 && !more
		reserve := len(tail)
		if last {
			reserve = len(close)
		}
		lead := ""
		if len(written) > 0 {
			lead = sep
		}
		room := budget - out.Len() - len(lead) - reserve
		text, fitted := render(room)
		if dedupe {
			// A member cut for want of room may still repeat one already written in full; only a complete
			// rendering shows that, and a complete rendering is the same under any budget that holds it.
			whole := text
			if !fitted && room < budget {
				whole, _ = render(budget)
			}
			if slices.Contains(written, whole) {
				continue
			}
		}
		if text == "" {
			return stop()
		}
		out.WriteString(lead)
		out.WriteString(text)
		written = append(written, text)
		if !fitted {
			if last {
				out.WriteString(close)
				return out.String(), false
			}
			return out.String() + tail, false
		}
	}
	if more {
		// A count bound is not a budget cut: the caller has already marked the hint partial.
		text, _ := stop()
		return text, text != ""
	}
	out.WriteString(close)
	return out.String(), true
}

func hasAny(s map[string]any, keywords ...string) bool {
	for _, keyword := range keywords {
		if has(s, keyword) {
			return true
		}
	}
	return false
}

func has(s map[string]any, keyword string) bool {
	_, found := s[keyword]
	return found
}

// hasOwnShape reports keywords that say what the value is, as opposed to combinators that choose among shapes.
func hasOwnShape(s map[string]any) bool {
	return has(s, "type") || has(s, "properties") || has(s, "items") || has(s, "prefixItems")
}
