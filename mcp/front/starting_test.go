package front

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/runtime"
)

// hungDial connects to a server that reads every request and never answers one, initialize included: its
// attempt lasts until its start timeout.
func hungDial(_ context.Context, _ *target) (*dialed, error) {
	c1, c2 := net.Pipe()
	go func() {
		buf := make([]byte, 4096)
		for {
			if _, err := c2.Read(buf); err != nil {
				return
			}
		}
	}()
	return &dialed{transport: &sdk.IOTransport{Reader: c1, Writer: c1}, stop: func(time.Time) {
		c1.Close()
		c2.Close()
	}}, nil
}

// A search for a ready server's tool is answered at once beside a server that never answers initialize, in
// tools and code mode, with the answer naming the hung server; the control is the same search over the ready
// server alone, in the same test. A wrong front waits for the hung server (its start timeout of a minute, or the
// wait's bound).
func TestHungServerDoesNotDelayAnswers(t *testing.T) {
	for _, mode := range []runtime.Mode{runtime.ModeTools, runtime.ModeCode} {
		t.Run(string(mode), func(t *testing.T) {
			rt := newTestRuntime(t, mode)
			search := func(withHung bool) (string, time.Duration) {
				issues := newFakeServer(0)
				issues.AddTool("create_issue", "Create an issue in a repository's tracker.", echo("created: "))
				dial := map[string]dialFunc{"issues": issues.dial}
				names := []string{"issues"}
				if withHung {
					dial["hung"] = hungDial
					names = append(names, "hung")
				}
				opts := fastOptions(nil)
				opts.StartTimeout = time.Minute
				// Servers start in the background, as `mcp serve` starts them: New does not wait.
				ctx, cancel := context.WithCancel(t.Context())
				cancel()
				src, err := newSource(ctx, inMemoryConfig(names...), opts, dialers(dial))
				require.NoError(t, err)
				t.Cleanup(func() { require.NoError(t, src.Close(context.Background())) })
				srv := newTestServer(t, rt, src, nil)
				sess := connectStdio(t, srv)
				began := time.Now()
				var text string
				if mode == runtime.ModeCode {
					text, _ = callText(t, sess, runtime.ToolSearchCodeName, map[string]any{"code": `
						return (await openclaw.tools.search("create an issue in the tracker")).map(h => h.id)`})
				} else {
					text, _ = callText(t, sess, runtime.ToolSearchName, map[string]any{"query": "create an issue in the tracker"})
				}
				return text, time.Since(began)
			}
			control, controlTook := search(false)
			text, took := search(true)
			assert.Contains(t, control, "mcp:issues:create_issue")
			assert.Contains(t, text, "mcp:issues:create_issue")
			assert.Regexp(t, `Server \\?"hung\\?" is still starting`, text)
			t.Logf("%s mode: beside a hung server %s, control %s", mode, took.Round(time.Millisecond), controlTook.Round(time.Millisecond))
			assert.Less(t, took, controlTook+10*time.Second, "the hung server (55 s of waiting, or its minute) is not waited for")
		})
	}
}

// startingUntilProgress connects a client (tools mode, stdio) to a front whose one server, name, is still
// starting until the client hears its first progress notification: the wait has begun and said so, and then the
// server comes up through dial. It returns the session and the progress notifications it heard.
func startingUntilProgress(t *testing.T, name string, dial dialFunc) (*sdk.ClientSession, <-chan *sdk.ProgressNotificationParams) {
	t.Helper()
	release := make(chan struct{})
	var once sync.Once
	slow := func(ctx context.Context, tg *target) (*dialed, error) {
		<-release
		return dial(ctx, tg)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel() // the Source starts its server in the background
	src, err := newSource(ctx, inMemoryConfig(name), fastOptions(nil), dialers(map[string]dialFunc{name: slow}))
	require.NoError(t, err)
	t.Cleanup(func() {
		once.Do(func() { close(release) })
		require.NoError(t, src.Close(context.Background()))
	})
	srv := newTestServer(t, newTestRuntime(t, runtime.ModeTools), src, nil)
	progress := make(chan *sdk.ProgressNotificationParams, 100)
	sess := connectStdioWith(t, srv, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			progress <- req.Params
			once.Do(func() { close(release) })
		},
	}, "")
	return sess, progress
}

// resources/list, resources/templates/list and prompts/list sent the moment a client connects, while the only
// server is still starting, wait for it rather than answer empty; a client that gave a progress token hears
// progress meanwhile.
func TestListsRightAfterConnectAreNotEmpty(t *testing.T) {
	a := newFeatureServer("a", 0)
	a.addText("a://readme", "read me")
	a.Srv.AddResourceTemplate(&sdk.ResourceTemplate{URITemplate: "a://item/{id}", Name: "item"},
		func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, Text: "item"}}}, nil
		})
	a.addPrompt("greet", "hello")
	a.AddTool("echo", "Echo.", echo(""))
	sess, progress := startingUntilProgress(t, "a", a.dial)

	params := &sdk.ListResourcesParams{}
	params.SetProgressToken("list-1")
	res, err := sess.ListResources(t.Context(), params)
	require.NoError(t, err)
	require.Len(t, res.Resources, 1, "not empty because the server was starting")
	assert.Equal(t, "a://readme", res.Resources[0].URI)
	p := <-progress
	assert.Equal(t, "list-1", p.ProgressToken)
	assert.Contains(t, p.Message, `"a"`)

	tmpls, err := sess.ListResourceTemplates(t.Context(), nil)
	require.NoError(t, err)
	assert.Len(t, tmpls.ResourceTemplates, 1)
	prompts, err := sess.ListPrompts(t.Context(), nil)
	require.NoError(t, err)
	assert.Len(t, prompts.Prompts, 1)
}

// A tools/call that has to wait for a server still starting (its answer would otherwise be empty) sends progress
// notifications under the client's token while it waits, so a client that resets its timeout on progress keeps
// waiting; the server comes up once the first one has arrived, and the answer has its tool.
func TestCallWaitingForAServerSendsProgress(t *testing.T) {
	issues := newFakeServer(0)
	issues.AddTool("create_issue", "Create an issue in a repository's tracker.", echo("created: "))
	sess, progress := startingUntilProgress(t, "issues", issues.dial)
	params := &sdk.CallToolParams{Name: runtime.ToolSearchName, Arguments: map[string]any{"query": "create an issue"}}
	params.SetProgressToken("call-1")
	res, err := sess.CallTool(t.Context(), params)
	require.NoError(t, err)
	assert.Contains(t, resultText(res), "mcp:issues:create_issue")
	require.NotEmpty(t, progress, "the wait sent progress")
	p := <-progress
	assert.Equal(t, "call-1", p.ProgressToken)
	assert.Contains(t, p.Message, `"issues"`)
	assert.Positive(t, p.Total, "the wait's bound, in seconds")
}
