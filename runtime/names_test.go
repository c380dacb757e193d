package runtime_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/runtime"
)

func mcpTool(server, name string) catalog.Tool {
	return catalog.Tool{Source: catalog.SourceMCP, SourceName: server, Name: name, Description: server + " " + name,
		Handler: okHandler(server + "/" + name)}
}

// Two servers that both offer "search" no longer fail an off-mode run: each is shown as <server>__search, the
// names map back to the tools, and a call by a shown name reaches the right server.
func TestOffModeQualifiesCollidingMCPNames(t *testing.T) {
	tools := []catalog.Tool{mcpTool("github", "search"), mcpTool("jira", "search"), mcpTool("jira", "create_issue"),
		pluginTool("web_fetch", "Fetch a page.")}
	rt := newRuntime(t, runtime.ModeOff, nil)
	run := startRun(t, rt, runtime.RunRequest{Tools: tools})
	assert.Equal(t, []string{"github__search", "jira__search", "create_issue", "web_fetch"}, toolNames(run.Tools()),
		"only the names that collide are qualified")

	for name, id := range map[string]string{"github__search": "mcp:github:search", "jira__search": "mcp:jira:search",
		"create_issue": "mcp:jira:create_issue", "web_fetch": "openclaw:fake-plugin:web_fetch"} {
		got, ok := run.ToolID(name)
		assert.True(t, ok, name)
		assert.Equal(t, id, got, name)
	}
	_, ok := run.ToolID("search")
	assert.False(t, ok, "the bare name is ambiguous and shown nowhere")

	res := execute(t, run, "1", "jira__search", map[string]string{"q": "x"})
	require.False(t, res.IsError, res.Content)
	assert.Contains(t, res.Content, "FAKE_PLUGIN_OK jira/search")
	tel := run.Telemetry()
	require.Len(t, tel.Calls, 1)
	assert.Equal(t, "mcp:jira:search", tel.Calls[0].ToolID)
	assert.True(t, execute(t, run, "2", "search", nil).IsError)

	// The order of the tools changes nothing.
	reversed := []catalog.Tool{tools[3], tools[2], tools[1], tools[0]}
	run = startRun(t, rt, runtime.RunRequest{SessionID: "reversed", Tools: reversed})
	assert.Equal(t, []string{"web_fetch", "create_issue", "jira__search", "github__search"}, toolNames(run.Tools()))
}

// A qualified name stays within the 64 characters clients accept and unique, even when the servers' names are
// long, unsafe, or made equal by sanitizing, or a tool is really named like a qualified name.
func TestQualifiedNamesAreBoundedAndUnique(t *testing.T) {
	long := strings.Repeat("very-long-server-name-", 4)
	tools := []catalog.Tool{
		mcpTool(long+"a", "search"), mcpTool(long+"b", "search"), // equal once cut to 30 characters
		mcpTool("git hub", "search"), mcpTool("git.hub", "search"), // equal once made safe
		mcpTool("other", "git_hub__search"), // really named like a qualified name
		mcpTool("x", strings.Repeat("t", 80)), mcpTool("y", strings.Repeat("t", 80)),
		mcpTool("z", "tool_search"), // named like a control tool, direct-only below
	}
	tools[len(tools)-1].CatalogMode = catalog.CatalogModeDirectOnly
	for _, mode := range []runtime.Mode{runtime.ModeOff, runtime.ModeTools} {
		rt := newRuntime(t, mode, nil)
		run := startRun(t, rt, runtime.RunRequest{SessionID: string(mode), Tools: tools})
		seen := map[string]bool{}
		for _, d := range run.Tools() {
			name := d.Function.Name
			assert.LessOrEqual(t, len(name), catalog.MaxMCPToolName, name)
			assert.False(t, seen[name], "%s shown twice", name)
			seen[name] = true
			if isControl(name) && mode != runtime.ModeOff {
				continue
			}
			id, ok := run.ToolID(name)
			require.True(t, ok, name)
			res := execute(t, run, "c", name, nil)
			assert.False(t, res.IsError, "%s: %s", name, res.Content)
			tel := run.Telemetry()
			assert.Equal(t, id, tel.Calls[len(tel.Calls)-1].ToolID)
		}
		if mode == runtime.ModeOff {
			assert.Len(t, seen, len(tools))
			assert.True(t, seen["tool_search"], "no control tool in off mode: the name is free")
		} else {
			assert.True(t, seen["z__tool_search"], "a direct-only MCP tool named like a control tool is qualified")
		}
	}
}

func isControl(name string) bool {
	switch name {
	case runtime.ToolSearchName, runtime.ToolDescribeName, runtime.ToolCallName, runtime.ToolSearchCodeName:
		return true
	}
	return false
}

// Directory mode shows direct-only MCP tools and client tools by name: colliding MCP names are qualified there too.
func TestDirectoryModeQualifiesDirectOnlyMCPTools(t *testing.T) {
	a, b := mcpTool("github", "search"), mcpTool("jira", "search")
	a.CatalogMode, b.CatalogMode = catalog.CatalogModeDirectOnly, catalog.CatalogModeDirectOnly
	client := catalog.Tool{Name: "pick_file", Handler: okHandler("pick_file")}
	c := mcpTool("drive", "pick_file") // collides with the client tool: the MCP tool gives way
	c.CatalogMode = catalog.CatalogModeDirectOnly
	rt := newRuntime(t, runtime.ModeDirectory, nil)
	run := startRun(t, rt, runtime.RunRequest{Tools: append(mixedTools(), a, b, c), ClientTools: []catalog.Tool{client}})
	names := toolNames(run.Tools())
	assert.Subset(t, names, []string{"github__search", "jira__search", "drive__pick_file", "pick_file"})
	id, ok := run.ToolID("pick_file")
	require.True(t, ok)
	assert.Equal(t, "client:client:pick_file", id)
}

// A tool named like a control tool is never cataloged, in any mode that catalogs; the runtime logs why.
func TestControlToolNamesAreNeverCataloged(t *testing.T) {
	for _, mode := range []runtime.Mode{runtime.ModeCode, runtime.ModeTools, runtime.ModeDirectory} {
		logger, logs := newLogger()
		rt := newRuntime(t, mode, &runtime.Options{Logger: logger})
		tools := mixedTools()
		for _, name := range []string{"tool_search", "tool_describe", "tool_call", "tool_search_code"} {
			tools = append(tools, mcpTool("shadow", name), pluginTool(name, "shadows a control tool"))
		}
		run := startRun(t, rt, runtime.RunRequest{Tools: tools})
		for _, tool := range run.Catalog().Tools() {
			assert.False(t, isControl(tool.Name), "%s cataloged in %s mode", tool.ID(), mode)
		}
		assert.Len(t, run.Catalog().Rejected(), 8)
		assert.Contains(t, logs.String(), "tool left out of the catalog")
		assert.Contains(t, logs.String(), "its name is reserved for a control tool")
	}
}

// A tool whose input schema does not compile is left out of the catalog, with the reason in the log; in off mode,
// which has no catalog, the call fails as before.
func TestUncompilableSchemaIsLeftOut(t *testing.T) {
	bad := mcpTool("broken", "bad_schema")
	bad.Parameters = json.RawMessage(`{"type":"objekt"}`)
	logger, logs := newLogger()
	rt := newRuntime(t, runtime.ModeTools, &runtime.Options{Logger: logger})
	run := startRun(t, rt, runtime.RunRequest{Tools: append(mixedTools(), bad)})
	require.Len(t, run.Catalog().Rejected(), 1)
	assert.Equal(t, "mcp:broken:bad_schema", run.Catalog().Rejected()[0].ID)
	assert.Contains(t, logs.String(), "its input schema does not compile")
	res := execute(t, run, "1", runtime.ToolCallName, map[string]any{"id": "mcp:broken:bad_schema"})
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, "Unknown tool id: mcp:broken:bad_schema.")
	assert.Equal(t, 4, run.Catalog().Len(), "the other tools are cataloged (the fifth is direct-only)")

	// A draft-4 schema that does not say so (what zod-to-json-schema writes) is a schema, not a broken one.
	draft4 := mcpTool("pdf", "read_pdf")
	draft4.Parameters = json.RawMessage(`{"type":"object","properties":{"page":{"type":"integer","minimum":0,` +
		`"exclusiveMinimum":true}},"required":["page"]}`)
	run = startRun(t, rt, runtime.RunRequest{SessionID: "draft4", Tools: []catalog.Tool{draft4}})
	require.Empty(t, run.Catalog().Rejected())
	res = execute(t, run, "2", runtime.ToolCallName, map[string]any{"id": "read_pdf", "args": map[string]int{"page": 0}})
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, "at /page: exclusiveMinimum", "draft 4 semantics: exclusiveMinimum true excludes the minimum")
	res = execute(t, run, "3", runtime.ToolCallName, map[string]any{"id": "read_pdf", "args": map[string]int{"page": 1}})
	assert.False(t, res.IsError, res.Content)
}

// Every conflict that involves a client tool says so, whatever the mode.
func TestClientToolConflictsSayClient(t *testing.T) {
	named := func(names ...string) []catalog.Tool {
		var out []catalog.Tool
		for _, n := range names {
			out = append(out, catalog.Tool{Name: n, Handler: okHandler(n)})
		}
		return out
	}
	direct := pluginTool("notify", "direct-only")
	direct.CatalogMode = catalog.CatalogModeDirectOnly
	tests := []struct {
		name    string
		mode    runtime.Mode
		tools   []catalog.Tool
		clients []catalog.Tool
		want    string
	}{
		{"off: a client tool and a plugin tool", runtime.ModeOff, mixedTools(), named("web_search"), "client tool name conflict: web_search"},
		{"off: two client tools", runtime.ModeOff, nil, named("pick", "pick"), "client tool name conflict: pick"},
		{"code: two client tools", runtime.ModeCode, nil, named("pick", "pick"), "client tool name conflict: pick"},
		{"tools: two client tools", runtime.ModeTools, nil, named("pick", "pick"), "client tool name conflict: pick"},
		{"tools: a control tool's name", runtime.ModeTools, nil, named("tool_call"), "client tool name conflict: tool_call"},
		{"code: another mode's control tool", runtime.ModeCode, nil, named("tool_search"), "client tool name conflict: tool_search"},
		{"directory: a cataloged tool", runtime.ModeDirectory, mixedTools(), named("read_file"), "client tool name conflict: read_file"},
		{"directory: a direct-only tool", runtime.ModeDirectory, []catalog.Tool{direct}, named("notify"), "client tool name conflict: notify"},
		{"directory: a control tool", runtime.ModeDirectory, nil, named("tool_describe"), "client tool name conflict: tool_describe"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := newRuntime(t, tt.mode, nil)
			_, err := rt.StartRun(context.Background(), runtime.RunRequest{SessionID: "s", Tools: tt.tools, ClientTools: tt.clients})
			assert.EqualError(t, err, tt.want)
			assert.ErrorIs(t, err, runtime.ErrToolConflict)
		})
	}
	// A client tool in off mode may take a control tool's name: there are none.
	rt := newRuntime(t, runtime.ModeOff, nil)
	startRun(t, rt, runtime.RunRequest{ClientTools: named("tool_call")})
}
