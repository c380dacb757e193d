package catalog

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseFile(t *testing.T) {
	data := `[
	  {"name": "web_search", "description": "Search the web", "inputSchema": {"type": "object"}, "label": "Web"},
	  {"name": "create_issue", "server": "github", "description": "Create an issue", "extra": {"ignored": true}},
	  {"name": "files/read", "server": "my fs", "description": "Read"},
	  {"name": "pick_file", "source": "client", "description": "Pick", "parameters": {"type": "object", "properties": {}}},
	  {"name": "fetch", "sourceName": "core", "outputSchema": {"type": "object"}, "groups": ["web"]},
	  {"name": "direct", "catalogMode": "direct-only"}
	]`
	tools, err := ParseFile([]byte(data))
	require.NoError(t, err)
	var got []string
	for _, tool := range tools {
		got = append(got, tool.ID())
	}
	assert.Equal(t, []string{"openclaw:file:web_search", "mcp:github:create_issue", "mcp:my_fs:files_read",
		"client:file:pick_file", "openclaw:core:fetch", "openclaw:file:direct"}, got)
	assert.Equal(t, "Web", tools[0].Label)
	assert.JSONEq(t, `{"type":"object"}`, string(tools[0].Parameters))
	assert.Nil(t, tools[1].Parameters)
	assert.JSONEq(t, `{"type":"object","properties":{}}`, string(tools[3].Parameters), "parameters is accepted for inputSchema")
	assert.JSONEq(t, `{"type":"object"}`, string(tools[4].OutputSchema))
	assert.Equal(t, []string{"web"}, tools[4].Groups)
	assert.Equal(t, CatalogModeDirectOnly, tools[5].CatalogMode)

	wrapped, err := ParseFile([]byte(`{"tools": [{"name": "a"}]}`))
	require.NoError(t, err)
	require.Len(t, wrapped, 1)
	empty, err := ParseFile([]byte(` [] `))
	require.NoError(t, err)
	assert.Empty(t, empty)
}

func TestParseFileErrors(t *testing.T) {
	tests := []struct {
		name, data string
		is         error
		contains   string
	}{
		{"not json", `[{`, nil, "catalog file"},
		{"not an array", `"tools"`, nil, "want a JSON array"},
		{"object without tools", `{"name": "a"}`, nil, `"tools" array`},
		{"entry not an object", `[1]`, nil, "catalog file"},
		{"missing name", `[{"description": "x"}]`, ErrInvalidTool, "entry 0"},
		{"bad source", `[{"name": "a", "source": "plugin"}]`, ErrInvalidTool, `unknown source "plugin"`},
		{"schema not an object", `[{"name": "a"}, {"name": "b", "inputSchema": "string"}]`, ErrInvalidTool, "entry 1"},
		{"output schema not an object", `[{"name": "a", "outputSchema": [1]}]`, ErrInvalidTool, "outputSchema"},
		{"duplicate", `[{"name": "a"}, {"name": "a"}]`, ErrDuplicateTool, "entries 0 and 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseFile([]byte(tc.data))
			require.Error(t, err)
			if tc.is != nil {
				require.ErrorIs(t, err, tc.is)
			}
			assert.Contains(t, err.Error(), tc.contains)
		})
	}
}

func TestParamText(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{
	  "zeta":{"type":"string","description":"Last one"},
	  "alpha":{"type":"string","enum":["png","jpeg"],"description":"Image format"},
	  "nested":{"type":"object","properties":{"inner":{"description":"Deep field"}}},
	  "rows":{"type":"array","items":{"properties":{"cell":{"description":"A cell"}}}},
	  "weird":true}}`)
	assert.Equal(t, "alpha Image format png jpeg nested rows weird zeta Last one inner Deep field cell A cell",
		strings.Join(strings.Fields(paramText(schema)), " "), "sorted, top level first, then one level down")
	assert.Empty(t, paramText(json.RawMessage(`{`)))
	assert.Empty(t, paramText(nil))
}
