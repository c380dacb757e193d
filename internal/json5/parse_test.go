package json5

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseValues(t *testing.T) {
	tests := []struct{ src, want string }{ // want: the JSON of the value
		{`{a: 1}`, `{"a":1}`},
		{`{$a_1: 1, _b: 2, ünï: 3, \u0061x: 4, null: 5, true: 6}`, `{"$a_1":1,"_b":2,"ünï":3,"ax":4,"null":5,"true":6}`},
		{`{'a': 'b', "c": "d"}`, `{"a":"b","c":"d"}`},
		{`['it\'s', "say \"hi\"", '\x41\u00e9\v\0\/\q']`, `["it's","say \"hi\"","Aé\u000b\u0000/q"]`},
		{"'line \\\ncontinued \\\r\nand \\\u2028again'", `"line continued and again"`},
		{"'raw \u2028 separator'", `"raw \u2028 separator"`},
		{`'\ud83d\ude00 \ud800'`, `"😀 ` + "\ufffd" + `"`},
		{`[0x1F, -0xa, +0X10, .5, 5., -.5e1, +1, 0, -0, 1e3, 2E-2]`, `[31,-10,16,0.5,5,-0.5e1,1,0,-0,1e3,2E-2]`},
		{`[Infinity, -Infinity, +Infinity, NaN, -NaN]`, `[null,null,null,null,null]`},
		{`0xFFFFFFFFFFFFFFFFFFFF`, `1208925819614629174706175`},
		{`[1, 2,]`, `[1,2]`},
		{`{a: 1,}`, `{"a":1}`},
		{"// c\n/* d */ {/**/a/**/:/**/1/**/,/**/}// e", `{"a":1}`},
		{"\uFEFF\u00A0\u2003{a:\v\f1}\u2029", `{"a":1}`},
		{`{a: 1, a: 2}`, `{"a":2}`},
		{`"tab	inside"`, `"tab\tinside"`},
		{`[null, true, false]`, `[null,true,false]`},
	}
	for _, tt := range tests {
		v, err := Parse([]byte(tt.src))
		require.NoError(t, err, tt.src)
		assert.Equal(t, tt.want, string(v.JSON()), tt.src)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ src, want string }{
		{``, "line 1, column 1: empty document"},
		{`// only a comment`, "empty document"},
		{`{a: 1`, "want ',' or '}'"},
		{`{a 1}`, `after key "a", want ':'`},
		{`{1a: 1}`, "want a key or '}'"},
		{`{a-b: 1}`, `after key "a", want ':'`},
		{`{,}`, "want a key or '}'"},
		{`[1,,]`, "want a value"},
		{`[1 2]`, "want ',' or ']'"},
		{`{a: tools}`, `invalid literal "tools" (strings need quotes)`},
		{`{a: undefined}`, `invalid literal "undefined"`},
		{"'multi\nline'", "line break in a string"},
		{`'unterminated`, "unterminated string"},
		{`'\1'`, "octal escapes are not allowed"},
		{`'\01'`, "octal escapes are not allowed"},
		{`'\x4'`, "hexadecimal digits"},
		{`'\u12'`, "hexadecimal digits"},
		{`'\u+123'`, "hexadecimal digits"},
		{`{\u0031: 1}`, "not allowed in a key"},
		{`{\x61: 1}`, "only \\u is allowed"},
		{`01`, "leading zeros"},
		{`0x`, "hexadecimal digits after 0x"},
		{`1e`, "digits in the exponent"},
		{`.`, "invalid number"},
		{`+`, "invalid number"},
		{`5px`, "invalid number"},
		{`Infinityx`, `invalid literal "Infinityx"`},
		{`1.2.3`, "invalid number"},
		{`/* open`, "unterminated /* comment"},
		{`1 2`, "after the value"},
		{`{a: 1}}`, "after the value"},
		{strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1), "nested more than 1000 deep"},
	}
	for _, tt := range tests {
		_, err := Parse([]byte(tt.src))
		var se *SyntaxError
		if assert.True(t, errors.As(err, &se), "%q: want a *SyntaxError, got %v", tt.src, err) {
			assert.Contains(t, se.Error(), tt.want, tt.src)
			assert.LessOrEqual(t, se.Offset, len(tt.src))
		}
	}
	_, err := Parse([]byte(strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth)))
	assert.NoError(t, err, "exactly MaxDepth is allowed")
	_, err = Parse([]byte("{\n  a: 1,\n  b: tools\n}"))
	assert.EqualError(t, err, `line 3, column 6: invalid literal "tools" (strings need quotes)`)
}

// Standard JSON decodes exactly as encoding/json decodes it.
func TestParseIsAJSONSuperset(t *testing.T) {
	for _, path := range seedFiles(t) {
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		if !json.Valid(data) {
			continue
		}
		v, err := Parse(data)
		require.NoError(t, err, path)
		assert.Equal(t, decodeStd(t, data), v.Interface(), path)
	}
}

func TestPositions(t *testing.T) {
	src := `{ a: 'x', "b": [1, {c: null}] }`
	v, err := Parse([]byte(src))
	require.NoError(t, err)
	a := v.Member("a")
	assert.Equal(t, "a", src[a.KeyStart:a.KeyEnd])
	assert.Equal(t, "'x'", src[a.Value.Start:a.Value.End])
	assert.Equal(t, ",", src[a.Comma:a.Comma+1])
	b := v.Member("b")
	assert.Equal(t, `"b"`, src[b.KeyStart:b.KeyEnd])
	assert.Equal(t, byte('"'), b.KeyQuote)
	assert.Equal(t, `[1, {c: null}]`, src[b.Value.Start:b.Value.End])
	assert.Equal(t, -1, b.Comma)
	assert.Equal(t, `null`, src[v.Find([]string{"b"}).Elements[1].Member("c").Value.Start:][:4])
	assert.Nil(t, v.Find([]string{"a", "z"}))
}

func seedFiles(t testing.TB) []string {
	files, err := filepath.Glob(filepath.Join("testdata", "configs", "*"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	return files
}

func decodeStd(t testing.TB, data []byte) any {
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.UseNumber()
	var v any
	require.NoError(t, dec.Decode(&v))
	return v
}
