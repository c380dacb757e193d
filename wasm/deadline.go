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
	// contexts are the live contexts made by Context: the deadline ends them itself when it expires, so a run's
	// contexts need no goroutine each to wait for it (three per run were a fifth of a cold run's CPU).
	contexts []*deadlineContext
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
	d.holds--
	if d.holds > 0 {
		d.mu.Unlock()
		return
	}
	d.since = time.Now()
	close(d.resumed)
	d.resumed = nil
	var ended []*deadlineContext
	if left := d.budget - d.spent; left > 0 {
		d.timer.Reset(left)
	} else {
		ended = d.expireLocked()
	}
	d.mu.Unlock()
	endContexts(ended)
}

// fire is the timer: it expires the budget unless a hold or a release moved it.
func (d *Deadline) fire() {
	d.mu.Lock()
	if d.over || d.holds > 0 {
		d.mu.Unlock()
		return
	}
	if left := d.leftLocked(time.Now()); left > 0 {
		d.timer.Reset(left)
		d.mu.Unlock()
		return
	}
	ended := d.expireLocked()
	d.mu.Unlock()
	endContexts(ended)
}

func (d *Deadline) leftLocked(now time.Time) time.Duration {
	spent := d.spent
	if d.holds == 0 {
		spent += now.Sub(d.since)
	}
	return d.budget - spent
}

// expireLocked marks the budget spent. The caller ends the returned contexts once it has released d.mu:
// ending one runs callbacks that may ask the deadline again.
func (d *Deadline) expireLocked() []*deadlineContext {
	if d.over {
		return nil
	}
	d.over = true
	d.timer.Stop()
	close(d.expired)
	ended := d.contexts
	d.contexts = nil
	return ended
}

// endContexts ends what expireLocked returned, with DeadlineExceeded.
func endContexts(cs []*deadlineContext) {
	for _, c := range cs {
		c.finish(context.DeadlineExceeded)
	}
}

// Expired reports whether the budget is spent, by the clock: exact even before the timer has fired.
func (d *Deadline) Expired() bool {
	d.mu.Lock()
	var ended []*deadlineContext
	if !d.over && d.holds == 0 && d.leftLocked(time.Now()) <= 0 {
		ended = d.expireLocked()
	}
	over := d.over
	d.mu.Unlock()
	endContexts(ended)
	return over
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
//
// It starts no goroutine: the deadline ends the context itself when it expires, and the parent's end reaches it
// through the parent (directly when the parent is, or only adds values to, another context of a Deadline;
// through context.AfterFunc otherwise, which needs no goroutine for the standard library's contexts either).
func (d *Deadline) Context(parent context.Context) (ctx context.Context, cancel context.CancelFunc) {
	c := &deadlineContext{Context: parent, d: d, done: make(chan struct{})}
	d.mu.Lock()
	over := d.over
	if !over {
		d.contexts = append(d.contexts, c)
	}
	d.mu.Unlock()
	if over {
		c.finish(context.DeadlineExceeded)
		return c, func() {}
	}
	var stop func() bool
	if pdone := parent.Done(); pdone != nil {
		if anc, ok := parent.Value(deadlineContextKey{}).(*deadlineContext); ok && anc.done == pdone {
			stop = anc.AfterFunc(func() { c.finish(anc.Err()) })
		} else {
			stop = context.AfterFunc(parent, func() { c.finish(parent.Err()) })
		}
	}
	return c, func() {
		if stop != nil {
			stop()
		}
		c.finish(context.Canceled)
		d.forget(c)
	}
}

// forget drops a cancelled context from the ones the deadline ends.
func (d *Deadline) forget(c *deadlineContext) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for i, o := range d.contexts {
		if o == c {
			d.contexts = append(d.contexts[:i], d.contexts[i+1:]...)
			return
		}
	}
}

// deadlineContext is the context of a run with a Deadline: a fixed context.WithTimeout could not be held.
type deadlineContext struct {
	context.Context // the parent: values and cancellation
	d               *Deadline
	done            chan struct{}

	mu    sync.Mutex
	err   error
	after []*afterFunc // to run when the context ends
}

// deadlineContextKey finds the nearest deadlineContext among a context's ancestors.
type deadlineContextKey struct{}

// afterFunc is one function registered with AfterFunc; f is nil once it ran or was stopped.
type afterFunc struct{ f func() }

// finish ends the context with err, once, and runs what was registered with AfterFunc, outside the lock: those
// functions end contexts derived from this one and ask it for its error.
func (c *deadlineContext) finish(err error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err = err
	close(c.done)
	var fs []func()
	for _, a := range c.after {
		fs = append(fs, a.f)
		a.f = nil
	}
	c.after = nil
	c.mu.Unlock()
	for _, f := range fs {
		f()
	}
}

// AfterFunc runs f when the context ends (at once, if it has), and makes the context package derive contexts
// from this one without a goroutine each. f runs on the goroutine that ends the context; the context package
// only ever registers functions that cancel a child, and runs a caller's own function on a goroutine of its own.
// stop reports whether it kept f from running.
func (c *deadlineContext) AfterFunc(f func()) (stop func() bool) {
	a := &afterFunc{f: f}
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		a.f = nil
		f()
		return func() bool { return false }
	}
	c.after = append(c.after, a)
	c.mu.Unlock()
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		if a.f == nil {
			return false
		}
		a.f = nil
		for i, o := range c.after {
			if o == a {
				c.after = append(c.after[:i], c.after[i+1:]...)
				break
			}
		}
		return true
	}
}

func (c *deadlineContext) Value(key any) any {
	if key == (deadlineContextKey{}) {
		return c
	}
	return c.Context.Value(key)
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
