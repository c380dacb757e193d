package wasm

import (
	"context"
	"sync"
	"time"
)

// Deadline is the wall-clock budget of one run, which the host can hold. While at least one hold is active the
// budget does not run down, and the guest does not run either: it is suspended at its next fuel refill or host
// call (within a fuel slice) until every hold is released. A host that makes the script wait for something that
// is not the script's doing — a person approving a tool call — holds the deadline for that long, so the wait
// neither counts against the script's time nor gives it free time to compute.
//
// Without holds a Deadline behaves like context.WithTimeout. It is safe for concurrent use.
type Deadline struct {
	budget time.Duration

	mu      sync.Mutex
	spent   time.Duration // by the end of the last running stretch
	since   time.Time     // when the current running stretch began (meaningful while holds == 0)
	holds   int
	resumed chan struct{} // closed when the last hold is released; nil while running
	expired chan struct{} // closed once the budget is spent
	over    bool
	timer   *time.Timer
}

// NewDeadline starts a budget of d (at least a millisecond) running now.
func NewDeadline(d time.Duration) *Deadline {
	dl := &Deadline{budget: max(d, time.Millisecond), since: time.Now(), expired: make(chan struct{})}
	dl.timer = time.AfterFunc(dl.budget, dl.fire)
	return dl
}

// Budget is the run's whole budget, as it was given.
func (d *Deadline) Budget() time.Duration { return d.budget }

// Hold stops the budget from running down, and the guest from running, until release is called. Holds nest;
// release is idempotent. Holding an expired deadline changes nothing.
func (d *Deadline) Hold() (release func()) {
	d.mu.Lock()
	if d.over {
		d.mu.Unlock()
		return func() {}
	}
	if d.holds == 0 {
		d.spent += time.Since(d.since)
		d.timer.Stop()
		d.resumed = make(chan struct{})
	}
	d.holds++
	d.mu.Unlock()
	var once sync.Once
	return func() { once.Do(d.release) }
}

func (d *Deadline) release() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.holds--
	if d.holds > 0 {
		return
	}
	d.since = time.Now()
	close(d.resumed)
	d.resumed = nil
	if left := d.budget - d.spent; left > 0 {
		d.timer.Reset(left)
	} else {
		d.expireLocked()
	}
}

// fire is the timer: it expires the budget unless a hold or a release moved it.
func (d *Deadline) fire() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.over || d.holds > 0 {
		return
	}
	if left := d.leftLocked(time.Now()); left > 0 {
		d.timer.Reset(left)
		return
	}
	d.expireLocked()
}

func (d *Deadline) leftLocked(now time.Time) time.Duration {
	spent := d.spent
	if d.holds == 0 {
		spent += now.Sub(d.since)
	}
	return d.budget - spent
}

func (d *Deadline) expireLocked() {
	if !d.over {
		d.over = true
		d.timer.Stop()
		close(d.expired)
	}
}

// Expired reports whether the budget is spent, by the clock: exact even before the timer has fired.
func (d *Deadline) Expired() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.over && d.holds == 0 && d.leftLocked(time.Now()) <= 0 {
		d.expireLocked()
	}
	return d.over
}

// Done is closed once the budget is spent.
func (d *Deadline) Done() <-chan struct{} { return d.expired }

// Spent is how much of the budget has run down: wall time minus the time held.
func (d *Deadline) Spent() time.Duration {
	d.mu.Lock()
	defer d.mu.Unlock()
	return min(d.budget-d.leftLocked(time.Now()), d.budget)
}

// When is the moment the budget runs out if nothing holds it again: now plus what is left.
func (d *Deadline) When() time.Time {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := time.Now()
	return now.Add(d.leftLocked(now))
}

// Stop releases the timer once the run is over. The deadline reads as it was.
func (d *Deadline) Stop() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.timer.Stop()
}

// waitHeld blocks while a hold is active, until the last one is released or ctx ends.
func (d *Deadline) waitHeld(ctx context.Context) {
	d.mu.Lock()
	resumed := d.resumed
	d.mu.Unlock()
	if resumed == nil {
		return
	}
	select {
	case <-resumed:
	case <-ctx.Done():
	}
}

// Context returns a context that ends with context.DeadlineExceeded when the budget is spent, or with parent's
// error when parent ends first. Its Deadline is When (or parent's, if earlier), so it moves while the deadline
// is held. cancel releases its resources; call it when the run is over.
func (d *Deadline) Context(parent context.Context) (ctx context.Context, cancel context.CancelFunc) {
	c := &deadlineContext{Context: parent, d: d, done: make(chan struct{}), stop: make(chan struct{})}
	go func() {
		select {
		case <-parent.Done():
			c.finish(parent.Err())
		case <-d.expired:
			c.finish(context.DeadlineExceeded)
		case <-c.stop:
			c.finish(context.Canceled)
		}
	}()
	var once sync.Once
	return c, func() { once.Do(func() { close(c.stop) }) }
}

// deadlineContext is the context of a run with a Deadline: a fixed context.WithTimeout could not be held.
type deadlineContext struct {
	context.Context // the parent: values and cancellation
	d               *Deadline
	done, stop      chan struct{}

	mu  sync.Mutex
	err error
}

func (c *deadlineContext) finish(err error) {
	c.mu.Lock()
	c.err = err
	c.mu.Unlock()
	close(c.done)
}

func (c *deadlineContext) Deadline() (time.Time, bool) {
	when := c.d.When()
	if pd, ok := c.Context.Deadline(); ok && pd.Before(when) {
		return pd, true
	}
	return when, true
}

func (c *deadlineContext) Done() <-chan struct{} { return c.done }

func (c *deadlineContext) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}
