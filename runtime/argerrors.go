package runtime

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/internal/textcut"
	"github.com/toolsearch/toolsearch/signatures"
)

// Bounds of what an invalid-arguments message shows, so that a huge value or schema cannot make it large.
const (
	maxGivenChars     = 60  // a given value, as JSON
	maxExpectedFields = 16  // required properties listed for an untrusted tool
	maxExpectedChars  = 300 // the expected-input part, like a search hint
)

// schemaIssue is one thing a value got wrong against a schema: where (a JSON pointer) and what.
type schemaIssue struct {
	at   string
	kind jsonschema.ErrorKind
	text string
}

// checkJSON validates raw (empty means null) against schema. It returns the decoded value and what is wrong with
// it (at most maxValidationIssues), or a decode problem when raw is not JSON.
func checkJSON(schema *jsonschema.Schema, raw json.RawMessage) (value any, issues []schemaIssue, decodeProblem string) {
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage("null")
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, nil, "not valid JSON: " + err.Error()
	}
	err = schema.Validate(v)
	if err == nil {
		return v, nil, ""
	}
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return v, []schemaIssue{{at: "/", text: err.Error()}}, ""
	}
	for _, u := range ve.BasicOutput().Errors {
		if u.Error == nil {
			continue
		}
		switch u.Error.Kind.(type) {
		case *kind.Group, *kind.Reference, *kind.Schema, *kind.AllOf:
			continue // containers: their causes follow as issues of their own
		}
		at := u.InstanceLocation
		if at == "" {
			at = "/"
		}
		issues = append(issues, schemaIssue{at: at, kind: u.Error.Kind, text: u.Error.String()})
		if len(issues) > maxValidationIssues {
			break
		}
	}
	if len(issues) == 0 {
		issues = []schemaIssue{{at: "/", text: "does not match the schema"}}
	}
	return v, issues, ""
}

// validateJSON is checkJSON as one line, for logs: "" when raw is valid.
func validateJSON(schema *jsonschema.Schema, raw json.RawMessage) string {
	_, issues, problem := checkJSON(schema, raw)
	if problem != "" {
		return problem
	}
	var b strings.Builder
	writeIssues(&b, issues, func(is schemaIssue) string { return is.text })
	return b.String()
}

// writeIssues writes "at <where>: <what>" for each issue, separated by "; ", and "..." in place of the issue
// past maxValidationIssues that checkJSON keeps to say there were more.
func writeIssues(b *strings.Builder, issues []schemaIssue, what func(schemaIssue) string) {
	for i, is := range issues {
		if i > 0 {
			b.WriteString("; ")
		}
		if i == maxValidationIssues {
			b.WriteString("...")
			break
		}
		b.WriteString("at ")
		b.WriteString(is.at)
		b.WriteString(": ")
		b.WriteString(what(is))
	}
}

// invalidArguments is the message for arguments that do not match a tool's input schema, written for the model
// to correct its call in one go: for each problem its JSON path, what was expected and what was given, then the
// input the tool expects (its signature, or for a tool whose schema is never rendered, its required properties
// and their types).
func invalidArguments(t *catalog.Tool, hint string, value any, issues []schemaIssue) string {
	var b strings.Builder
	in := outlineOf(t.Parameters)
	b.WriteString("Invalid arguments for ")
	b.WriteString(t.ID())
	b.WriteString(": ")
	writeIssues(&b, issues, func(is schemaIssue) string { return issueText(is, value, in) })
	b.WriteString(". ")
	b.WriteString(expectedInput(hint, in))
	return b.String()
}

// issueText says what was expected at one place and what was given there; in is the tool's input schema.
func issueText(is schemaIssue, root any, in inputOutline) string {
	given, found := valueAt(root, is.at)
	switch k := is.kind.(type) {
	case *kind.Required:
		var types map[string]string
		if is.at == "/" {
			types = in.properties
		}
		missing := make([]string, len(k.Missing))
		for i, name := range k.Missing {
			missing[i] = strconv.Quote(name)
			if typ := types[name]; typ != "" {
				missing[i] += " (" + typ + ")"
			}
		}
		what := "missing required property "
		if len(missing) > 1 {
			what = "missing required properties "
		}
		return what + strings.Join(missing, ", ") + "; given " + givenProperties(given)
	case *kind.Type:
		return "expected " + strings.Join(k.Want, " or ") + ", given " + givenValue(given, found)
	case *kind.AdditionalProperties:
		names := make([]string, len(k.Properties))
		for i, p := range k.Properties {
			names[i] = strconv.Quote(p)
		}
		what := "unexpected property "
		if len(names) > 1 {
			what = "unexpected properties "
		}
		return what + strings.Join(names, ", ") + " (the schema allows no others)"
	}
	if is.kind == nil {
		return is.text
	}
	return is.text + ", given " + givenValue(given, found)
}

// givenProperties names the properties an object had, for a missing-property message: a model that sent
// "msg" for "message" sees both names side by side.
func givenProperties(v any) string {
	obj, ok := v.(map[string]any)
	if !ok {
		return givenValue(v, true)
	}
	if len(obj) == 0 {
		return "no properties"
	}
	names := make([]string, 0, len(obj))
	for k := range obj {
		names = append(names, k)
	}
	sort.Strings(names)
	const maxNames = 8
	more := ""
	if len(names) > maxNames {
		more = fmt.Sprintf(" and %d more", len(names)-maxNames)
		names = names[:maxNames]
	}
	for i, n := range names {
		names[i] = strconv.Quote(cut(n, maxGivenChars))
	}
	word := "property "
	if len(obj) > 1 {
		word = "properties "
	}
	return word + strings.Join(names, ", ") + more
}

// givenValue shows a value as bounded JSON with its type: `"5" (string)`.
func givenValue(v any, found bool) string {
	if !found {
		return "nothing"
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return "a value that is not JSON"
	}
	return cut(string(raw), maxGivenChars) + " (" + jsonTypeName(v) + ")"
}

func jsonTypeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "number"
}

// cut shortens s to at most n bytes at a rune boundary, marking the cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return textcut.Prefix(s, n-len("...")) + "..."
}

// valueAt follows a JSON pointer into a decoded value.
func valueAt(v any, pointer string) (any, bool) {
	if pointer == "/" || pointer == "" {
		return v, true
	}
	for _, tok := range strings.Split(strings.TrimPrefix(pointer, "/"), "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch c := v.(type) {
		case map[string]any:
			next, ok := c[tok]
			if !ok {
				return nil, false
			}
			v = next
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			v = c[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// expectedInput is the input a tool expects, as the model should write it: the signature of a tool whose schema
// is rendered, else (hint "unknown") its required properties with their declared types, which is all an
// unrendered schema is read for here.
func expectedInput(hint string, in inputOutline) string {
	if hint != "" && hint != signatures.Unknown {
		return "Expected input: " + hint
	}
	if len(in.required) == 0 {
		return "The tool declares no required properties; describe it for its full schema."
	}
	more := len(in.properties) > len(in.required) // optional properties exist
	var b strings.Builder
	b.WriteString("{ ")
	for i, name := range in.required {
		if i == maxExpectedFields || b.Len() > maxExpectedChars {
			more = true
			break
		}
		typ := in.properties[name]
		if typ == "" {
			typ = "unknown"
		}
		b.WriteString(signatures.QuoteKey(cut(name, maxGivenChars)))
		b.WriteString(": ")
		b.WriteString(typ)
		b.WriteString("; ")
	}
	if more {
		b.WriteString("...; ")
	}
	s2 := strings.TrimSuffix(b.String(), "; ") + " }"
	return "Required properties: " + s2 + " (describe the tool for its full schema)."
}

// inputOutline is what messages and repairs read of an input schema: its top-level required and properties
// keywords, never nested schemas. One decode of the schema serves them all.
type inputOutline struct {
	required []string
	// properties holds every declared top-level property with its declared type ("string", "number | null";
	// integer is written as number, as in signatures), or "" when its type keyword is absent or not a type.
	properties map[string]string
}

func outlineOf(schema json.RawMessage) inputOutline {
	var s struct {
		Required   []string `json:"required"`
		Properties map[string]struct {
			Type json.RawMessage `json:"type"`
		} `json:"properties"`
	}
	_ = json.Unmarshal(schema, &s)
	in := inputOutline{required: s.Required, properties: make(map[string]string, len(s.Properties))}
	for name, p := range s.Properties {
		var one string
		var many []string
		switch {
		case json.Unmarshal(p.Type, &one) == nil:
			many = []string{one}
		case json.Unmarshal(p.Type, &many) == nil:
		default:
			many = nil // a failed decode may have filled part of it
		}
		for i, typ := range many {
			if typ == "integer" {
				many[i] = "number"
			}
			many[i] = cut(many[i], 16)
		}
		in.properties[name] = strings.Join(many[:min(len(many), 4)], " | ")
	}
	return in
}

// inputHint is the input signature the model is shown for t: the search hint, "unknown" for a tool whose
// schema is never rendered.
func (r *Run) inputHint(t *catalog.Tool) string {
	if cat := r.cur().cat; cat != nil {
		return cat.Descriptor(t).Input
	}
	if t.Trusted() {
		return signatures.Input(t.Parameters, nil)
	}
	return signatures.Unknown
}
