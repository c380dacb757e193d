package front

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/runtime"
)

func toolCallRequest(id string) *sdk.CallToolRequest {
	return &sdk.CallToolRequest{Params: &sdk.CallToolParamsRaw{
		Name: runtime.ToolCallName, Arguments: json.RawMessage(`{"id":"` + id + `"}`),
	}}
}

// A call admitted before Close holds Close until it finishes; a call arriving once Close has begun is refused.
func TestServerCloseWaitsForAdmittedCalls(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	slow := catalog.Tool{Source: catalog.SourceOpenClaw, SourceName: "core", Name: "slow",
		Handler: catalog.HandlerFunc(func(context.Context, json.RawMessage) (*catalog.Result, error) {
			close(started)
			<-release
			return &catalog.Result{Content: []catalog.Content{{Type: "text", Text: "done"}}}, nil
		})}
	rt := newTestRuntime(t, runtime.ModeTools)
	srv, err := NewServer(t.Context(), rt, nil, &ServerOptions{Tools: []catalog.Tool{slow}})
	require.NoError(t, err)
	call := srv.handle(runtime.ToolCallName)

	first := make(chan error, 1)
	go func() {
		res, err := call(context.Background(), toolCallRequest("slow"))
		if err == nil && res.IsError {
			err = assert.AnError
		}
		first <- err
	}()
	<-started
	closed := make(chan struct{})
	go func() {
		assert.NoError(t, srv.Close())
		close(closed)
	}()
	require.Eventually(t, func() bool {
		_, err := call(context.Background(), toolCallRequest("slow"))
		return err == ErrServerClosed
	}, 5*time.Second, time.Millisecond, "a call arriving during Close is refused")
	select {
	case <-closed:
		t.Fatal("Close returned while an admitted call was still running")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	require.NoError(t, <-first, "the admitted call completed normally")
	<-closed
}

// Calls hammering the server while it closes: each one either runs to completion on an open run or is refused;
// none reaches a closed run, and the WaitGroup is never added to while Close waits on it (-race checks).
func TestServerCloseRacesNewCalls(t *testing.T) {
	var ran atomic.Int64
	fast := catalog.Tool{Source: catalog.SourceOpenClaw, SourceName: "core", Name: "fast",
		Handler: catalog.HandlerFunc(func(context.Context, json.RawMessage) (*catalog.Result, error) {
			ran.Add(1)
			return &catalog.Result{Content: []catalog.Content{{Type: "text", Text: "ok"}}}, nil
		})}
	for range 20 {
		rt := newTestRuntime(t, runtime.ModeTools)
		srv, err := NewServer(t.Context(), rt, nil, &ServerOptions{Tools: []catalog.Tool{fast}})
		require.NoError(t, err)
		call := srv.handle(runtime.ToolCallName)
		var wg sync.WaitGroup
		var ok, refused atomic.Int64
		stop := make(chan struct{})
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					res, err := call(context.Background(), toolCallRequest("fast"))
					switch {
					case err == ErrServerClosed:
						refused.Add(1)
						return
					case err != nil:
						t.Errorf("call failed with %v", err)
						return
					case res.IsError:
						t.Errorf("call reached a closed run: %s", res.Content[0].(*sdk.TextContent).Text)
						return
					}
					ok.Add(1)
					select {
					case <-stop:
						return
					default:
					}
				}
			}()
		}
		require.Eventually(t, func() bool { return ok.Load() > 0 }, 10*time.Second, time.Millisecond, "calls run before Close")
		require.NoError(t, srv.Close())
		close(stop)
		wg.Wait()
	}
	assert.Positive(t, ran.Load())
}
