package wasm

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDeadlineWithoutHolds(t *testing.T) {
	d := NewDeadline(50 * time.Millisecond)
	defer d.Stop()
	ctx, cancel := d.Context(context.Background())
	defer cancel()
	when, ok := ctx.Deadline()
	require.True(t, ok)
	assert.WithinDuration(t, time.Now().Add(50*time.Millisecond), when, 20*time.Millisecond)
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the deadline never fired")
	}
	assert.ErrorIs(t, ctx.Err(), context.DeadlineExceeded)
	assert.True(t, d.Expired())
	assert.Equal(t, 50*time.Millisecond, d.Spent())
}

// A held deadline does not run down: the budget is what runs, not the wall clock.
func TestDeadlineHold(t *testing.T) {
	d := NewDeadline(100 * time.Millisecond)
	defer d.Stop()
	ctx, cancel := d.Context(context.Background())
	defer cancel()
	release := d.Hold()
	inner := d.Hold() // holds nest
	time.Sleep(300 * time.Millisecond)
	assert.False(t, d.Expired(), "three times its budget has passed, all of it held")
	assert.NoError(t, ctx.Err())
	when, _ := ctx.Deadline()
	assert.True(t, when.After(time.Now()), "a held deadline is always ahead")
	release()
	release() // idempotent
	time.Sleep(150 * time.Millisecond)
	assert.False(t, d.Expired(), "still held by the inner hold")
	start := time.Now()
	inner()
	<-ctx.Done()
	assert.ErrorIs(t, ctx.Err(), context.DeadlineExceeded)
	assert.GreaterOrEqual(t, time.Since(start), 50*time.Millisecond, "the unheld rest of the budget, about 100 ms")
	assert.Equal(t, 100*time.Millisecond, d.Spent())

	// Holding what has expired changes nothing.
	d.Hold()()
	assert.True(t, d.Expired())
}

// The parent's end wins, with its own error.
func TestDeadlineContextParent(t *testing.T) {
	d := NewDeadline(time.Hour)
	defer d.Stop()
	parent, cancelParent := context.WithCancel(context.Background())
	ctx, cancel := d.Context(parent)
	defer cancel()
	cancelParent()
	<-ctx.Done()
	assert.ErrorIs(t, ctx.Err(), context.Canceled)

	short, cancelShort := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancelShort()
	ctx, cancel = d.Context(short)
	defer cancel()
	pd, _ := short.Deadline()
	when, _ := ctx.Deadline()
	assert.Equal(t, pd, when, "the earlier deadline")
	<-ctx.Done()
	assert.ErrorIs(t, ctx.Err(), context.DeadlineExceeded)
}

// While the host holds its deadline the guest does not run: a script ticking a host function in a loop stops
// ticking, and its timeout comes only after the held time, reporting the budget it really used.
func TestHeldDeadlineSuspendsTheGuest(t *testing.T) {
	var ticks atomic.Int64
	e, err := New(context.Background(), &Options{HostFunctions: []HostFunction{
		{Name: "tick", Func: func(context.Context, *Args) (string, error) {
			ticks.Add(1)
			return "", nil
		}},
	}})
	require.NoError(t, err)
	defer e.Close(context.Background())

	d := NewDeadline(time.Second)
	defer d.Stop()
	held := make(chan [2]int64, 1)
	go func() {
		for ticks.Load() < 100 {
			time.Sleep(time.Millisecond)
		}
		release := d.Hold()
		time.Sleep(50 * time.Millisecond) // the guest reaches its next check and stops there
		before := ticks.Load()
		time.Sleep(1500 * time.Millisecond)
		held <- [2]int64{before, ticks.Load()}
		release()
	}()
	start := time.Now()
	_, err = e.Run(context.Background(), "for (;;) tick()", &RunOptions{Deadline: d})
	var limit *LimitError
	require.True(t, errors.As(err, &limit), "%v", err)
	assert.Equal(t, LimitTimeout, limit.Kind)
	assert.EqualValues(t, 1000, limit.Limit)
	assert.InDelta(t, 1000, limit.Used, 200, "held time is not counted")
	assert.GreaterOrEqual(t, time.Since(start), 2500*time.Millisecond, "the run outlived its budget by the held time")
	counts := <-held
	assert.Equal(t, counts[0], counts[1], "no tick while the deadline was held")
}

// A run derives several contexts from its deadline (the sandbox's, the bridge calls', the engine's), each from
// the one before with values in between. None may cost a goroutine: the deadline ends them itself, and each
// follows its parent through the parent.
func TestDeadlineContextsStartNoGoroutine(t *testing.T) {
	d := NewDeadline(time.Hour)
	defer d.Stop()
	parent, cancelParent := context.WithCancel(context.Background())
	defer cancelParent()
	before := runtime.NumGoroutine()
	const n = 1000
	ctx := context.Context(parent)
	var cancels []context.CancelFunc
	var chain []context.Context
	for i := range n {
		var cancel context.CancelFunc
		ctx, cancel = d.Context(context.WithValue(ctx, valueKey{}, i))
		cancels = append(cancels, cancel)
		chain = append(chain, ctx)
		if i%100 == 0 {
			// The context package's own derivation from one of them, as a caller's WithCancel makes it.
			child, cancel := context.WithCancel(ctx)
			cancels = append(cancels, cancel)
			chain = append(chain, child)
		}
	}
	assert.Less(t, runtime.NumGoroutine()-before, n/2, "a goroutine per context")
	cancelParent()
	for _, c := range chain {
		select {
		case <-c.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("a context did not follow its parent's end")
		}
		assert.ErrorIs(t, c.Err(), context.Canceled)
	}
	for _, cancel := range cancels {
		cancel()
	}
}

type valueKey struct{}

// The deadline's expiry ends every context made from it, derived ones included, with DeadlineExceeded; a
// cancelled one is forgotten and keeps its own error.
func TestDeadlineExpiryEndsEveryContext(t *testing.T) {
	d := NewDeadline(30 * time.Millisecond)
	defer d.Stop()
	outer, cancelOuter := d.Context(context.Background())
	defer cancelOuter()
	inner, cancelInner := d.Context(context.WithValue(outer, valueKey{}, 1))
	defer cancelInner()
	child, cancelChild := context.WithCancel(inner)
	defer cancelChild()
	gone, cancelGone := d.Context(outer)
	cancelGone()
	assert.ErrorIs(t, gone.Err(), context.Canceled)
	for _, c := range []context.Context{outer, inner, child} {
		select {
		case <-c.Done():
		case <-time.After(5 * time.Second):
			t.Fatal("the deadline never ended a context")
		}
		assert.ErrorIs(t, c.Err(), context.DeadlineExceeded)
	}
	assert.ErrorIs(t, gone.Err(), context.Canceled, "cancelled before the deadline")
	late, cancelLate := d.Context(context.Background())
	defer cancelLate()
	assert.ErrorIs(t, late.Err(), context.DeadlineExceeded, "made after the deadline passed")

	// Cancelling an inner context leaves the outer one running.
	d2 := NewDeadline(time.Hour)
	defer d2.Stop()
	o2, c2 := d2.Context(context.Background())
	defer c2()
	i2, ci2 := d2.Context(o2)
	ci2()
	assert.ErrorIs(t, i2.Err(), context.Canceled)
	assert.NoError(t, o2.Err())
}
