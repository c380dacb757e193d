package json5

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSetKeepsEverythingElse(t *testing.T) {
	src := "// header\n{\n  a: 1, // one\n  /* b */ b: 'two',\n  c: {d: [1, 2]},\n}\n"
	tests := []struct{ path, value, want string }{
		{"a", "10", "// header\n{\n  a: 10, // one\n  /* b */ b: 'two',\n  c: {d: [1, 2]},\n}\n"},
		{"b", `"x"`, "// header\n{\n  a: 1, // one\n  /* b */ b: 'x',\n  c: {d: [1, 2]},\n}\n"},
		{"c.d", "0x10", "// header\n{\n  a: 1, // one\n  /* b */ b: 'two',\n  c: {d: 0x10},\n}\n"},
		{"c.e", "true", "// header\n{\n  a: 1, // one\n  /* b */ b: 'two',\n  c: {d: [1, 2], e: true},\n}\n"},
		{"e", "null", "// header\n{\n  a: 1, // one\n  /* b */ b: 'two',\n  c: {d: [1, 2]},\n  e: null,\n}\n"},
		{"f.g", `{h: "i"}`, "// header\n{\n  a: 1, // one\n  /* b */ b: 'two',\n  c: {d: [1, 2]},\n" +
			"  f: {\n    g: {\n      h: 'i',\n    },\n  },\n}\n"},
		{"needs quotes", "1", "// header\n{\n  a: 1, // one\n  /* b */ b: 'two',\n  c: {d: [1, 2]},\n  'needs quotes': 1,\n}\n"},
	}
	for _, tt := range tests {
		out, err := Set([]byte(src), strings.Split(tt.path, "."), []byte(tt.value))
		require.NoError(t, err, tt.path)
		assert.Equal(t, tt.want, string(out), tt.path)
	}
}

func TestSetStyles(t *testing.T) {
	tests := []struct{ name, src, path, value, want string }{
		{"JSON, one line", `{"a": 1}`, "b", `'x'`, `{"a": 1, "b": "x"}`},
		{"JSON, compact", `{"a":1}`, "b.c", `2`, `{"a":1,"b":{"c":2}}`},
		{"JSON5, spaced braces", `{ a: 1 }`, "b.c", `2`, `{ a: 1, b: { c: 2 } }`},
		{"trailing comma, one line", `{a: 1,}`, "b", `2`, `{a: 1, b: 2,}`},
		{"empty", `{}`, "a", `1`, `{"a": 1}`},
		{"empty with blanks", `{ }`, "a", `1`, `{"a": 1}`},
		{"empty with a comment", `{ /* none yet */ }`, "a", `1`, `{"a": 1 /* none yet */ }`},
		{"empty, multi-line", "{\n}", "a", `1`, "{\n  \"a\": 1\n}"},
		{"empty inner, multi-line", "{\n  x: {\n  },\n}", "x.a", `1`, "{\n  x: {\n    a: 1,\n  },\n}"},
		{"no trailing comma", "{\n    \"a\": 1\n}", "b", `2`, "{\n    \"a\": 1,\n    \"b\": 2\n}"},
		{"comment after the last member", "{\n  a: 1 // note\n}", "b", `2`, "{\n  a: 1, // note\n  b: 2\n}"},
		{"comment before the brace", "{\n  a: 1,\n  // the end\n}", "b", `2`, "{\n  a: 1,\n  b: 2,\n  // the end\n}"},
		{"brace on the last line", "{\n  a: 1 }", "b", `2`, "{\n  a: 1,\n  b: 2 }"},
		{"tabs, single quotes", "{\n\t'a': 'x',\n}", "b", `"y"`, "{\n\t'a': 'x',\n\t'b': 'y',\n}"},
		{"CRLF", "{\r\n  a: 1\r\n}", "b", `2`, "{\r\n  a: 1,\r\n  b: 2\r\n}"},
		{"replace an object, multi-line", "{\n  a: true,\n}", "a", `{x: 1, y: [1, {z: 2}]}`,
			"{\n  a: {\n    x: 1,\n    y: [1, {z: 2}],\n  },\n}"},
		{"repeated key: the last counts", `{a: 1, a: 2}`, "a", `3`, `{a: 1, a: 3}`},
		{"string escapes", `{a: 1}`, "b", `"line\nbreak 'q' \"d\" \u2028"`, `{a: 1, b: "line\nbreak 'q' \"d\" \u2028"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := Set([]byte(tt.src), strings.Split(tt.path, "."), []byte(tt.value))
			require.NoError(t, err)
			assert.Equal(t, tt.want, string(out))
			_, err = Parse(out)
			require.NoError(t, err)
		})
	}
}

func TestSetErrors(t *testing.T) {
	_, err := Set([]byte(`{a: 'x'}`), []string{"a", "b"}, []byte(`1`))
	var pe *PathError
	require.True(t, errors.As(err, &pe))
	assert.True(t, errors.Is(err, ErrNotObject))
	assert.EqualError(t, err, "a is a string, not an object")
	_, err = Set([]byte(`[1]`), []string{"a"}, []byte(`1`))
	assert.EqualError(t, err, "the top level is an array, not an object")
	_, err = Set([]byte(`{a: }`), []string{"a"}, []byte(`1`))
	assert.ErrorContains(t, err, "want a value")
	_, err = Set([]byte(`{}`), []string{"a"}, []byte(`nope`))
	assert.ErrorContains(t, err, "the new value")
	_, err = Set([]byte(`{}`), nil, []byte(`1`))
	assert.Error(t, err)
}

func TestIndentKeepsNonFiniteNumbers(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`{a: Infinity, b: [-Infinity, NaN], c: 0x10, d: {}, e: [], a2: 'x'}`,
			"{\n  \"a\": Infinity,\n  \"b\": [\n    -Infinity,\n    NaN\n  ],\n  \"c\": 16,\n  \"d\": {},\n  \"e\": [],\n  \"a2\": \"x\"\n}"},
		{`{k: 1, k: 2}`, "{\n  \"k\": 2\n}"},
		{`"s"`, `"s"`},
		{`null`, `null`},
	} {
		v, err := Parse([]byte(tt.in))
		require.NoError(t, err)
		assert.Equal(t, tt.want, string(v.Indent()), tt.in)
		if !strings.Contains(tt.in, "Infinity") {
			assert.True(t, json.Valid(v.Indent()), "finite values stay JSON")
		}
	}
}
