package upstream

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/internal/corpus"
)

// FuzzFilterToolsPage feeds the listing filter pages of any shape, seeded with the real tools of 71 servers as
// they list them. Whatever comes in: no panic; a page it can read (a JSON object whose "tools" is not an object)
// comes out as valid JSON holding every element either as a carrier of exactly that element or in
// the report of dropped ones; anything else comes out unchanged, for the SDK to refuse.
func FuzzFilterToolsPage(f *testing.F) {
	byServer := map[string][]json.RawMessage{}
	for _, t := range corpus.MCPTools() {
		raw, err := json.Marshal(map[string]any{"name": t.Name, "description": t.Description, "inputSchema": t.InputSchema})
		require.NoError(f, err)
		byServer[t.Server] = append(byServer[t.Server], raw)
	}
	for _, tools := range byServer {
		page, err := json.Marshal(map[string]any{"tools": tools, "nextCursor": "next", "_meta": map[string]any{"x": 1}})
		require.NoError(f, err)
		f.Add(page)
	}
	for _, seed := range []string{
		`{"tools":[]}`, `{"tools":null}`, `{"tools":{}}`, `{"tools":"x"}`, `[]`, `{}`, `{"tools":[1,null,"a",[]]}`,
		`{"tools":[{"name":"a"},{"name":5},{"name":"a\u0000<>&\"\\"}],"tools":[{"name":"b"}]}`,
		`{"tools":[{"name":"x","inputSchema":{"type":"object"}}` + "\n\t" + `]` + `,"_meta":{"a":[{}]}}`,
		`{"tools":[{"name":"huge","description":"` + strings.Repeat("d", MaxToolBytes) + `"}]}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, page []byte) {
		out := filterToolsPage(page)
		var top map[string]json.RawMessage
		readable := json.Unmarshal(page, &top) == nil && top != nil && (len(top["tools"]) == 0 || top["tools"][0] != '{')
		if !readable {
			assert.Equal(t, page, out, "a page the filter cannot read goes to the SDK unchanged")
			return
		}
		require.True(t, json.Valid(out), "%s", out)
		var gotTop map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(out, &gotTop))
		var meta map[string]pageReport
		require.NoError(t, json.Unmarshal(gotTop["_meta"], &meta))
		report := meta[pageMetaKey]
		assert.Equal(t, len(page), report.Bytes)
		for key, value := range top {
			if key != "tools" && key != "_meta" {
				assert.JSONEq(t, string(value), string(gotTop[key]), "other members pass unchanged")
			}
		}

		var in []json.RawMessage
		if json.Unmarshal(top["tools"], &in) != nil || in == nil {
			assert.JSONEq(t, string(orNull(top["tools"])), string(orNull(gotTop["tools"])), "a scalar or null is left to the SDK")
			return
		}
		var got struct {
			Tools []struct {
				Meta map[string]json.RawMessage `json:"_meta"`
			} `json:"tools"`
		}
		require.NoError(t, json.Unmarshal(out, &got))
		assert.Equal(t, len(in), len(got.Tools)+len(report.Dropped), "every element is kept or reported")
		kept := 0
		for _, el := range in {
			if len(el) > MaxToolBytes || el[0] != '{' {
				continue
			}
			require.Less(t, kept, len(got.Tools))
			var carried string
			require.NoError(t, json.Unmarshal(got.Tools[kept].Meta[toolMetaKey], &carried))
			if utf8.Valid(el) {
				assert.Equal(t, string(el), carried, "the carrier holds the element exactly")
			} else {
				// Invalid UTF-8 reads as U+FFFD on both sides, as the SDK would have read it.
				assert.JSONEq(t, string(el), carried)
			}
			kept++
		}
		// The SDK's view: a carrier parses back into the tool, bounded like any listing.
		for _, tool := range got.Tools {
			var carried string
			require.NoError(t, json.Unmarshal(tool.Meta[toolMetaKey], &carried))
			l := newListing(&server{})
			var rt remoteTool
			if json.Unmarshal([]byte(carried), &rt) == nil {
				_, _ = l.keep(rt)
			}
		}
	})
}

func orNull(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage("null")
	}
	return raw
}
