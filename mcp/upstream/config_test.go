package upstream

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNewRefusesInvalidConfigAndSkipsDisabled(t *testing.T) {
	_, err := New(t.Context(), &Config{Servers: map[string]ServerConfig{"a": {}}}, nil)
	require.ErrorIs(t, err, ErrConfig)

	f := newFakeServer(0)
	f.AddTool("echo", "Echo.", echo(""))
	cfg := inMemoryConfig("on", "off")
	off := cfg.Servers["off"]
	off.Disabled = true
	cfg.Servers["off"] = off
	src := startSource(t, cfg, nil, map[string]dialFunc{"on": f.dial})
	require.Len(t, src.Status(), 1)
	assert.Equal(t, "on", src.Status()[0].Name)

	empty, err := New(t.Context(), nil, nil)
	require.NoError(t, err, "no servers is a valid, empty source")
	assert.Empty(t, empty.Tools())
	require.NoError(t, empty.Close(t.Context()))
}

func TestOptionsDefaults(t *testing.T) {
	o := (*Options)(nil).resolve()
	assert.Equal(t, DefaultStartTimeout, o.startTimeout)
	assert.Equal(t, DefaultCallTimeout, o.callTimeout)
	assert.Equal(t, DefaultCloseTimeout, o.closeTimeout)
	assert.Equal(t, DefaultRetryDelay, o.retryDelay)
	assert.Equal(t, DefaultMaxRetryDelay, o.maxRetryDelay)
	assert.Equal(t, DefaultMaxClientInstances, o.maxInstances)
	o = (&Options{RetryDelay: 2 * time.Minute}).resolve()
	assert.Equal(t, 2*time.Minute, o.maxRetryDelay, "the cap is never below the first delay")
}

// TestHammer calls tools from many goroutines while the server's tools change and its connection is cut: every
// call ends in a result or a *ServerError, and the race detector sees no unsynchronized access.
func TestHammer(t *testing.T) {
	f := newFakeServer(3)
	for i := range 5 {
		f.AddTool(fmt.Sprintf("echo_%d", i), "Echo.", echo(""))
	}
	src := startSource(t, inMemoryConfig("fake"), fastOptions(nil), map[string]dialFunc{"fake": f.dial})
	stop := make(chan struct{})
	var churn sync.WaitGroup
	churn.Add(1)
	go func() {
		defer churn.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(15 * time.Millisecond):
			}
			if i%5 == 4 {
				f.Sever()
			} else {
				f.AddTool(fmt.Sprintf("extra_%d", i), "Added under load.", echo(""))
			}
			_ = src.Status()
		}
	}()

	const workers, calls = 8, 40
	var ok, failed atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range calls {
				tools := src.Tools()
				if len(tools) == 0 {
					continue
				}
				tool := tools[(w+i)%len(tools)]
				res, err := tool.Handler.Call(context.Background(), []byte(`{"text":"x"}`))
				var se *ServerError
				switch {
				case err == nil && res != nil:
					ok.Add(1)
				case errors.As(err, &se):
					failed.Add(1)
				default:
					t.Errorf("call %s: want a result or a *ServerError, got %v", tool.ID(), err)
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	churn.Wait()
	t.Logf("%d calls succeeded, %d failed while the server was cut", ok.Load(), failed.Load())
	assert.Positive(t, ok.Load())
}
