package upstream

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readServer offers a resource and a prompt of about size bytes each, and small ones.
func readServer(size int) *fakeServer {
	f := newFakeServer(0)
	text := func(s string) sdk.ResourceHandler {
		return func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, Text: s}}}, nil
		}
	}
	f.Srv.AddResource(&sdk.Resource{URI: "big://r", Name: "big"}, text(strings.Repeat("x", size)))
	f.Srv.AddResource(&sdk.Resource{URI: "small://r", Name: "small"}, text("small"))
	prompt := func(s string) sdk.PromptHandler {
		return func(context.Context, *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: s}}}}, nil
		}
	}
	f.Srv.AddPrompt(&sdk.Prompt{Name: "big"}, prompt(strings.Repeat("y", size)))
	f.Srv.AddPrompt(&sdk.Prompt{Name: "small"}, prompt("small"))
	return f
}

// A resources/read or prompts/get result over MaxReadBytes fails with ErrResultTooLarge, over stdio-like
// connections and over streamable HTTP alike, and the session goes on serving what fits.
func TestReadResultsOverTheBoundAreRefused(t *testing.T) {
	const bound = 64 << 10
	for _, transport := range []string{"connection", "http"} {
		t.Run(transport, func(t *testing.T) {
			f := readServer(bound) // with its JSON around it, just over the bound
			opts := fastOptions(nil)
			opts.MaxReadBytes = bound
			var src *Source
			if transport == "http" {
				ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return f.Srv }, nil))
				t.Cleanup(ts.Close)
				var err error
				src, err = New(t.Context(), &Config{Servers: map[string]ServerConfig{"docs": {URL: ts.URL}}}, opts)
				require.NoError(t, err)
				t.Cleanup(func() { closeNow(t, src) })
			} else {
				src = startSource(t, inMemoryConfig("docs"), opts, map[string]dialFunc{"docs": f.dial})
			}
			u := src.servers[0]
			require.Equal(t, StateReady, u.status().State)

			_, err := u.ReadResource(t.Context(), &sdk.ReadResourceParams{URI: "big://r"})
			require.ErrorIs(t, err, ErrResultTooLarge)
			assert.Contains(t, err.Error(), `mcp server "docs": read resource big://r`)
			assert.Contains(t, err.Error(), "more than the 65536 bytes toolsearch relays")
			_, err = u.GetPrompt(t.Context(), &sdk.GetPromptParams{Name: "big"})
			require.ErrorIs(t, err, ErrResultTooLarge)

			res, err := u.ReadResource(t.Context(), &sdk.ReadResourceParams{URI: "small://r"})
			require.NoError(t, err, "the session survives a refused result")
			assert.Equal(t, "small", res.Contents[0].Text)
			got, err := u.GetPrompt(t.Context(), &sdk.GetPromptParams{Name: "small"})
			require.NoError(t, err)
			assert.Equal(t, "small", got.Messages[0].Content.(*sdk.TextContent).Text)
		})
	}
}

func TestReadBoundDefaults(t *testing.T) {
	o := (*Options)(nil).resolve()
	assert.Equal(t, DefaultMaxReadBytes, o.maxReadBytes)
	assert.Equal(t, DefaultMaxConcurrentReads, o.maxReads)
	o = (&Options{MaxReadBytes: 1 << 30}).resolve()
	assert.Equal(t, MaxMessageBytes, o.maxReadBytes, "no read is larger than a message")

	// The default admits a resource of a few MiB and refuses one of 15 MiB, as sent.
	f := readServer(DefaultMaxReadBytes + 1)
	src := startSource(t, inMemoryConfig("docs"), fastOptions(nil), map[string]dialFunc{"docs": f.dial})
	_, err := src.servers[0].ReadResource(t.Context(), &sdk.ReadResourceParams{URI: "big://r"})
	require.ErrorIs(t, err, ErrResultTooLarge)
}

// At most MaxConcurrentReads reads of one server are in flight; the others wait, within their context.
func TestReadsInFlightAreBounded(t *testing.T) {
	f := newFakeServer(0)
	var inside, most atomic.Int32
	release := make(chan struct{})
	f.Srv.AddResource(&sdk.Resource{URI: "slow://r", Name: "slow"},
		func(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			n := inside.Add(1)
			defer inside.Add(-1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			select {
			case <-release:
			case <-ctx.Done():
			}
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, Text: "done"}}}, nil
		})
	opts := fastOptions(nil)
	opts.MaxConcurrentReads = 2
	src := startSource(t, inMemoryConfig("docs"), opts, map[string]dialFunc{"docs": f.dial})
	u := src.servers[0]

	var wg sync.WaitGroup
	errs := make(chan error, 6)
	for range 6 {
		wg.Go(func() {
			_, err := u.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: "slow://r"})
			errs <- err
		})
	}
	require.Eventually(t, func() bool { return inside.Load() == 2 }, 10*time.Second, 5*time.Millisecond)
	assert.Never(t, func() bool { return inside.Load() > 2 }, 200*time.Millisecond, 5*time.Millisecond)

	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	_, err := u.ReadResource(ctx, &sdk.ReadResourceParams{URI: "slow://r"})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), "waiting for one of the 2 reads in flight to end")

	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		assert.NoError(t, err)
	}
	assert.Equal(t, int32(2), most.Load())
}
