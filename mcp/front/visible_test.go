package front

import (
	"context"
	"fmt"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/runtime"
)

// Tools that tools.toolSearch.visible selects are offered in tools/list beside the control tools in code, tools
// and directory mode, as their server listed them, and a call of one runs through the client's run: the policy
// that hides one of them also refuses its call.
func TestFrontVisibleTools(t *testing.T) {
	weather := newFakeServer(0)
	weather.AddTool("forecast", "Weather forecast for a city.", echo("sunny in "))
	weather.AddTool("alerts", "Severe weather alerts for a region.", echo("alerts for "))
	weather.AddTool("history", "Past weather of a city.", echo("rainy in "))
	src := startSource(t, inMemoryConfig("weather"), fastOptions(nil), map[string]dialFunc{"weather": weather.dial})
	controls := map[runtime.Mode][]string{
		runtime.ModeCode:      {runtime.ToolSearchCodeName},
		runtime.ModeTools:     {runtime.ToolCallName, runtime.ToolDescribeName, runtime.ToolSearchName},
		runtime.ModeDirectory: {runtime.ToolCallName, runtime.ToolDescribeName, runtime.ToolSearchName},
	}
	for mode, control := range controls {
		t.Run(string(mode), func(t *testing.T) {
			rt, err := runtime.New(context.Background(), &runtime.Options{
				Config: runtime.Config{Enabled: true, Mode: mode, Visible: []string{"mcp:weather:forecast", "mcp:weather:alerts"}},
				Policy: &catalog.Policy{Agent: catalog.Rule{Deny: []string{"mcp:weather:alerts"}}},
			})
			require.NoError(t, err)
			t.Cleanup(func() { require.NoError(t, rt.Close(context.Background())) })
			srv := newTestServer(t, rt, src, nil)
			sess := connectStdio(t, srv)

			names := listNames(t, sess)
			assert.Subset(t, names, append([]string{"forecast"}, control...))
			assert.NotContains(t, names, "alerts", "denied, visible or not")
			assert.NotContains(t, names, "history", "not selected: found by search only")

			text, isErr := callText(t, sess, "forecast", map[string]any{"text": "Oslo"})
			require.False(t, isErr, text)
			assert.Contains(t, text, "sunny in Oslo")
			_, err = sess.CallTool(t.Context(), &sdk.CallToolParams{Name: "alerts", Arguments: map[string]any{"text": "Oslo"}})
			assert.ErrorContains(t, err, `unknown tool "alerts"`, "a denied tool is not offered, so not callable")
		})
	}
}

// A visible selector that matches more tools than may be kept in view refuses the front, with the figure, when
// the servers are up as it starts.
func TestFrontVisibleToolsBound(t *testing.T) {
	big := newFakeServer(0)
	for i := range runtime.MaxVisibleTools + 1 {
		big.AddTool(fmt.Sprintf("tool_%02d", i), "A tool.", echo("ok "))
	}
	src := startSource(t, inMemoryConfig("big"), fastOptions(nil), map[string]dialFunc{"big": big.dial})
	rt, err := runtime.New(context.Background(), &runtime.Options{
		Config: runtime.Config{Enabled: true, Mode: runtime.ModeTools, Visible: []string{"server:big"}}})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, rt.Close(context.Background())) })
	_, err = NewServer(t.Context(), rt, src, nil)
	require.ErrorIs(t, err, runtime.ErrVisibleLimit)
	var lim *runtime.VisibleLimitError
	require.ErrorAs(t, err, &lim)
	assert.Equal(t, runtime.MaxVisibleTools+1, lim.Tools)
}
