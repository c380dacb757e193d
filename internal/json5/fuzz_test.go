package json5

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func addSeeds(f *testing.F, extra func(doc []byte)) {
	files, err := os.ReadDir("testdata/configs")
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range files {
		data, err := os.ReadFile("testdata/configs/" + e.Name())
		if err != nil {
			f.Fatal(err)
		}
		extra(data)
	}
}

// FuzzParse: any input parses or fails with a *SyntaxError inside the input; a parsed value has well-nested
// positions, writes valid JSON that parses back to the same value, and standard JSON decodes exactly as
// encoding/json decodes it.
func FuzzParse(f *testing.F) {
	addSeeds(f, func(doc []byte) { f.Add(doc) })
	for _, s := range []string{`{a: +Infinity, b: -0x1F, c: .5e-3}`, `['\u2028', "\ud800"]`, "{\n\t$_: 'x\\\ny',\n}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := Parse(data)
		std := json.Valid(data)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) || se.Offset < 0 || se.Offset > len(data) {
				t.Fatalf("error %v (%T) is not a *SyntaxError inside the input", err, err)
			}
			if std && !strings.Contains(se.Msg, "nested more than") {
				t.Fatalf("standard JSON refused: %v", err)
			}
			return
		}
		checkSpans(t, data, v, 0, len(data))
		out := v.JSON()
		if !json.Valid(out) {
			t.Fatalf("JSON() wrote invalid JSON: %q", out)
		}
		back, err := Parse(out)
		if err != nil {
			t.Fatalf("JSON() output does not parse: %v", err)
		}
		if !reflect.DeepEqual(finite(v.Interface()), back.Interface()) {
			t.Fatalf("JSON() changed the value: %q", out)
		}
		if std {
			dec := json.NewDecoder(bytes.NewReader(data))
			dec.UseNumber()
			var want any
			if err := dec.Decode(&want); err == nil && !reflect.DeepEqual(want, v.Interface()) {
				t.Fatalf("standard JSON decoded differently:\n got %#v\nwant %#v", v.Interface(), want)
			}
		}
	})
}

// checkSpans checks that v lies within [lo, hi) and that its children lie within it, in order.
func checkSpans(t *testing.T, src []byte, v *Value, lo, hi int) {
	if v.Start < lo || v.End > hi || v.Start >= v.End {
		t.Fatalf("value span [%d,%d) outside [%d,%d)", v.Start, v.End, lo, hi)
	}
	at := v.Start
	for _, m := range v.Members {
		if m.KeyStart < at || m.KeyEnd <= m.KeyStart || m.Value.Start < m.KeyEnd {
			t.Fatalf("member %q out of order", m.Key)
		}
		checkSpans(t, src, m.Value, m.KeyEnd, v.End)
		at = m.Value.End
		if m.Comma >= 0 {
			if m.Comma < at || src[m.Comma] != ',' {
				t.Fatalf("comma of %q at %d is not a comma after the value", m.Key, m.Comma)
			}
			at = m.Comma + 1
		}
	}
	for _, el := range v.Elements {
		checkSpans(t, src, el, at, v.End)
		at = el.End
	}
}

// finite replaces what JSON cannot spell by null, as JSON() does.
func finite(v any) any {
	switch v := v.(type) {
	case json.Number:
		if s := string(v); s == "Infinity" || s == "-Infinity" || s == "NaN" {
			return nil
		}
	case []any:
		for i := range v {
			v[i] = finite(v[i])
		}
	case map[string]any:
		for k := range v {
			v[k] = finite(v[k])
		}
	}
	return v
}

// FuzzSet: an edit either fails because the path goes through a non-object, or gives a document that parses,
// holds the new value at the path and every other value as before, and differs from the original only by
// insertions and by the replacement of the old value's text (or of the blanks of an empty object).
func FuzzSet(f *testing.F) {
	values := []string{`1`, `"x"`, `{a: [1, {b: 'c'}]}`, `true`, `0x10`, `Infinity`, `{}`, `null`}
	paths := []string{"tools.toolSearch.mode", "mcpServers.memory", "a", "tools.toolSearch", "x.y.z", "with space.é"}
	i := 0
	addSeeds(f, func(doc []byte) {
		f.Add(doc, paths[i%len(paths)], values[i%len(values)])
		i++
	})
	f.Fuzz(func(t *testing.T, doc []byte, dotted, value string) {
		path := strings.Split(dotted, ".")
		if len(path) > 5 {
			return
		}
		orig, err := Parse(doc)
		nv, verr := Parse([]byte(value))
		if err != nil || verr != nil || orig.Kind != Object {
			if _, serr := Set(doc, path, []byte(value)); serr == nil {
				t.Fatalf("Set accepted a document or value that does not parse")
			}
			return
		}
		edits, err := setEdits(doc, path, []byte(value))
		if !utf8.ValidString(dotted) {
			if err == nil {
				t.Fatalf("Set accepted a key that is not UTF-8")
			}
			return
		}
		if err != nil {
			var pe *PathError
			if !errors.As(err, &pe) || !throughNonObject(orig, path) {
				t.Fatalf("unexpected error: %v", err)
			}
			return
		}
		out := apply(doc, edits)
		got, err := Parse(out)
		if err != nil {
			t.Fatalf("the edited document does not parse: %v\n%s", err, out)
		}
		if at := got.Find(path); at == nil || !reflect.DeepEqual(at.Interface(), nv.Interface()) {
			t.Fatalf("the path does not hold the new value:\n%s", out)
		}
		want := setIn(orig.Interface(), path, nv.Interface())
		if !reflect.DeepEqual(got.Interface(), want) {
			t.Fatalf("other values changed:\n%s", out)
		}
		last := 0
		for _, e := range edits {
			if e.start < last || e.end < e.start {
				t.Fatalf("edits overlap or go backwards: %+v", edits)
			}
			if e.end > e.start && !isValueSpan(orig, e.start, e.end) && len(bytes.Trim(doc[e.start:e.end], " \t")) > 0 {
				t.Fatalf("edit [%d,%d) replaces %q, which is not one value", e.start, e.end, doc[e.start:e.end])
			}
			last = e.end
		}
	})
}

func throughNonObject(v *Value, path []string) bool {
	for _, key := range path[:len(path)-1] {
		m := v.Member(key)
		if m == nil {
			return false
		}
		if m.Value.Kind != Object {
			return true
		}
		v = m.Value
	}
	return false
}

func isValueSpan(v *Value, start, end int) bool {
	if v.Start == start && v.End == end {
		return true
	}
	for _, m := range v.Members {
		if isValueSpan(m.Value, start, end) {
			return true
		}
	}
	for _, el := range v.Elements {
		if isValueSpan(el, start, end) {
			return true
		}
	}
	return false
}

// setIn is what Set should do, on decoded values.
func setIn(doc any, path []string, value any) any {
	if len(path) == 0 {
		return value
	}
	m, ok := doc.(map[string]any)
	if !ok {
		m = map[string]any{}
	}
	m[path[0]] = setIn(m[path[0]], path[1:], value)
	return m
}
