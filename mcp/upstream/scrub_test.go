package upstream

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// escapeAll writes every character of s as \uXXXX, as some Java encoders do.
func escapeAll(s string) string {
	var b strings.Builder
	for _, r := range s {
		fmt.Fprintf(&b, `\u%04x`, r)
	}
	return b.String()
}

// A secret a server writes with JSON escapes is as visible to whoever decodes the message as one written plain:
// it is scrubbed from the decoded text.
func TestScrubEscapedSecrets(t *testing.T) {
	const secret = "ghp_Top/Secret+Value=0123456789"
	secrets := scrubList([]string{secret})
	for name, msg := range map[string]string{
		"slash escaped (PHP)":     `{"result":{"content":[{"type":"text","text":"you sent ghp_Top\/Secret+Value=0123456789"}]}}`,
		"one \\u escape":          `{"error":{"code":-32000,"message":"bad token \u0067hp_Top/Secret+Value=0123456789 for you"}}`,
		"every character escaped": `{"result":{"text":"` + escapeAll(secret) + `"}}`,
		"in a key":                `{"result":{"structuredContent":{"ghp_Top\/Secret+Value=0123456789":1}}}`,
		"beside other escapes":    `{"params":{"data":"line 1\nline 2\t` + strings.ReplaceAll(secret, "/", `\/`) + `\"quoted\""}}`,
		"html escapes":            `{"result":{"text":"\u003cghp_Top/Secret\u002bValue=0123456789\u003e"}}`,
	} {
		t.Run(name, func(t *testing.T) {
			out := scrub([]byte(msg), secrets)
			require.True(t, json.Valid(out), "%s", out)
			var decoded any
			require.NoError(t, json.Unmarshal(out, &decoded))
			plain, _ := json.Marshal(decoded)
			assert.NotContains(t, string(plain), secret, "decoded: %s", plain)
			assert.Contains(t, string(plain), Redacted)
		})
	}
	// A message without the secret, escapes and all, is passed on byte for byte.
	msg := []byte(`{"result":{"text":"a\/b \u00e9 \"x\" \n"}}`)
	assert.Equal(t, string(msg), string(scrub(msg, secrets)))
}

func FuzzScrubEscaped(f *testing.F) {
	f.Add("ghp_Top/Secret+Value", `{"a":%s}`, uint64(0xff))
	f.Add("tok_0123456789", `["x", {"k": %s}]`, uint64(1))
	f.Add("é/ü/ß/0123", `{%s: null}`, uint64(0x5555))
	f.Fuzz(func(t *testing.T, secret, shape string, mask uint64) {
		if len(secret) < minScrubBytes || strings.Count(shape, "%s") != 1 || strings.Contains(shape, "%!") {
			return
		}
		// The secret spelled with some characters escaped (by mask), inside a JSON document of the shape.
		var lit strings.Builder
		for i, r := range secret {
			switch {
			case mask>>(uint(i)%64)&1 == 1:
				fmt.Fprintf(&lit, `\u%04x`, r)
				if r > 0xffff {
					return // outside the BMP a \u escape is a surrogate pair: skip such inputs
				}
			case r == '"' || r == '\\' || r < 0x20:
				return
			default:
				lit.WriteRune(r)
			}
		}
		// The secret is in a string literal; the shape around it must not hold it already (a number can).
		if strings.Contains(shape, secret) || strings.Contains(fmt.Sprintf(shape, `""`), secret) {
			return
		}
		msg := []byte(fmt.Sprintf(shape, `"pre `+lit.String()+` post"`))
		var before any
		if json.Unmarshal(msg, &before) != nil {
			return
		}
		out := scrub(msg, scrubList([]string{secret}))
		var after any
		if err := json.Unmarshal(out, &after); err != nil {
			t.Fatalf("scrubbing %q made it invalid JSON: %q", msg, out)
		}
		plain, _ := json.Marshal(after)
		var secretJSON, _ = json.Marshal(secret)
		if strings.Contains(string(plain), string(secretJSON[1:len(secretJSON)-1])) {
			t.Fatalf("secret %q survives in %q (scrubbed from %q)", secret, plain, msg)
		}
	})
}

// FuzzScrubAnyMessage: whatever a server sends, no string or number of the scrubbed message, decoded as every
// reader decodes it, holds a secret, and a message that was JSON stays JSON. Secrets are header values: anything
// but a line break or NUL, quotes, backslashes and secrets made of what JSON structure is made of (`1,2]`) too.
func FuzzScrubAnyMessage(f *testing.F) {
	f.Add("ghp_Top/Secret+Value", `{"a":"ghp_Top\/Secret+Value","b":["\u0067hp_Top/Secret+Value"]}`)
	f.Add("tok_0123456789", `{"tok_0123456789":"x\ntok_0123456789"}`)
	f.Add("😀emoji-secret", `["\ud83d\ude00emoji-secret", "\ud83d\ude00emoji\u002dsecret"]`)
	f.Add("12345678", `[12345678, "12345678", "1234\u00356789"]`)
	f.Add("abcdefgh", `"abcd\"efgh" "unterminated abcdefgh`)
	f.Add(`ab"cd\\ef`, `{"k":"ab\"cd\\\\ef","ab\"cd\\\\ef":1}`)
	f.Add("1234,5678]", `[[1234,5678],"1234,5678]",12345678]`)
	f.Add(`"quoted"`, `{"a":"\"quoted\"","b":"x"}`)
	f.Add(`a":"bcdef`, `{"a":"bcdef"}`)
	f.Fuzz(func(t *testing.T, secret, msg string) {
		// Header values hold no line break or NUL (checkHeader refuses them); any other secret is scrubbed.
		if len(secret) < minScrubBytes || strings.ContainsAny(secret, "\r\n\x00") || !utf8.ValidString(secret) {
			return
		}
		out := scrub([]byte(msg), scrubList([]string{secret}))
		if !json.Valid([]byte(msg)) {
			return // not JSON: there is no structure to keep, and no decoded string to look into
		}
		var after any
		dec := json.NewDecoder(bytes.NewReader(out))
		dec.UseNumber() // a number's digits as they were written
		if err := dec.Decode(&after); err != nil {
			t.Fatalf("scrubbing %q for %q made it invalid JSON: %q (%v)", msg, secret, out, err)
		}
		var walk func(v any)
		walk = func(v any) {
			switch v := v.(type) {
			case json.Number:
				if strings.Contains(string(v), secret) {
					t.Fatalf("secret %q survives as a number in %q (scrubbed from %q)", secret, out, msg)
				}
			case string:
				if strings.Contains(v, secret) {
					t.Fatalf("secret %q survives in %q (scrubbed from %q)", secret, out, msg)
				}
			case []any:
				for _, x := range v {
					walk(x)
				}
			case map[string]any:
				for k, x := range v {
					walk(k)
					walk(x)
				}
			}
		}
		walk(after)
	})
}
