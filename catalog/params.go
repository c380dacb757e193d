package catalog

import (
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"

	"github.com/toolsearch/toolsearch/internal/textcut"
)

// Bounds on what the index reads from a parameters schema. Indexing shows the model nothing, so untrusted
// schemas are read too, but a hostile or huge schema must not make building slow or the index large.
const (
	maxSchemaBytes  = 256 << 10 // larger schemas are not read for search at all
	maxParamProps   = 48        // properties read, top level first
	maxParamText    = 2048      // bytes of parameter text indexed per tool
	maxDescribeText = 4096      // bytes of description indexed per tool
	maxEnumValues   = 12        // enum values read per property
	maxEnumChars    = 32        // longer enum values are data, not capabilities
)

// The parts of a schema the index reads, two levels deep, decoded in one pass.
type (
	rootSchema struct {
		Properties map[string]propSchema `json:"properties"`
	}
	propSchema struct {
		Title       string                `json:"title"`
		Description string                `json:"description"`
		Enum        []any                 `json:"enum"`
		Properties  map[string]leafSchema `json:"properties"`
		Items       *struct {
			Properties map[string]leafSchema `json:"properties"`
		} `json:"items"`
	}
	leafSchema struct {
		Description string `json:"description"`
	}
)

// paramText returns the parameter names, descriptions and short enum values of a schema as one bounded string:
// top-level properties, then properties nested one level (directly or through items), each in sorted order so
// that the text, and so the index, is deterministic. Enum values name what a tool can do ("png", "squash").
func paramText(schema json.RawMessage) string {
	if len(schema) == 0 || len(schema) > maxSchemaBytes {
		return ""
	}
	var root rootSchema
	if err := json.Unmarshal(schema, &root); err != nil {
		// A property of an unexpected type (a boolean schema, a numeric description) is skipped and the rest
		// decoded; only malformed JSON gives nothing.
		var typeErr *json.UnmarshalTypeError
		if !errors.As(err, &typeErr) {
			return ""
		}
	}
	var b strings.Builder
	props := 0
	add := func(parts ...string) bool {
		if props >= maxParamProps || b.Len() >= maxParamText {
			return false
		}
		props++
		for _, s := range parts {
			b.WriteString(textcut.Prefix(s, maxParamText-b.Len()))
			if b.Len() < maxParamText {
				b.WriteByte(' ')
			}
		}
		if b.Len() < maxParamText {
			b.WriteByte('\n')
		}
		return true
	}
	names := slices.Sorted(maps.Keys(root.Properties))
	for _, name := range names {
		p := root.Properties[name]
		if !add(name, p.Title, p.Description, enumText(p.Enum)) {
			return b.String()
		}
	}
	for _, name := range names {
		p := root.Properties[name]
		nested := p.Properties
		if len(nested) == 0 && p.Items != nil {
			nested = p.Items.Properties
		}
		for _, child := range slices.Sorted(maps.Keys(nested)) {
			if !add(child, nested[child].Description) {
				return b.String()
			}
		}
	}
	return b.String()
}

func enumText(values []any) string {
	var b strings.Builder
	for i, v := range values {
		if i >= maxEnumValues {
			break
		}
		if s, ok := v.(string); ok && len(s) <= maxEnumChars {
			b.WriteString(s)
			b.WriteByte(' ')
		}
	}
	return b.String()
}
