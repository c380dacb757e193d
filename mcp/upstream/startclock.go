package upstream

import (
	"context"
	"fmt"
	"time"
)

// A package runner's first start installs the server: a cold `npx -y` of a reference server from an empty cache
// took 9.5 s on the idle 2-core machine, and eight at once on a loaded one took minutes. Killing it mid-install
// leaves the runner's cache broken for every later start (npm does not roll back), so its start deadline counts
// from its last sign of progress instead of from its start: a start is stopped only once it has done nothing
// for the whole start timeout. What npm was seen doing during a cold install, sampled every 0.6 s: its CPU time
// grew in every sample (30–70 ticks), its bytes read and written and its cache directory in most, its stderr not
// at all until the server ran; once the server waited for input, none of them moved.

// activity is what a started server's processes have done so far, for telling progress from a hang.
type activity struct {
	cpuTicks uint64 // CPU time of the live processes of its group, in clock ticks (1/100 s)
	ioBytes  uint64 // bytes read and written by them, sockets included
	pids     uint64 // the sum of their pids: it changes when one starts or ends
	stderr   uint64 // bytes written to stderr
}

// Thresholds of progress between two samples: an idle process uses no CPU tick in a second and reads nothing;
// a runner installing on a loaded machine still gets tens of ticks.
const (
	progressTicks = 2
	progressBytes = 4 << 10
)

// progressedSince reports whether a shows work done since prev.
func (a activity) progressedSince(prev activity) bool {
	return a.cpuTicks >= prev.cpuTicks+progressTicks || a.ioBytes >= prev.ioBytes+progressBytes ||
		a.pids != prev.pids || a.stderr != prev.stderr
}

// progressSample is how often a runner's start is sampled for progress.
const progressSample = time.Second

// MaxProgressingStart bounds a package runner's start even while it shows progress: a server that works
// without ever answering (a loop) is stopped after this long, or twice its start timeout when that is longer.
const MaxProgressingStart = 15 * time.Minute

// progressingStartCap is MaxProgressingStart as clockStart reads it: a variable so that a test can see the cap
// end a start without working for fifteen minutes.
var progressingStartCap = MaxProgressingStart

// activity samples the attempt's processes now.
func (u *server) activity() activity {
	u.mu.Lock()
	conn := u.conn
	u.mu.Unlock()
	a := conn.activity()
	a.stderr = u.stderr.bytesWritten()
	return a
}

// activity is what the processes a dial started have done so far; nothing for a dial that started none (or
// none yet: conn nil).
func (conn *dialed) activity() activity {
	if conn == nil || conn.pgid <= 0 {
		return activity{}
	}
	return groupActivity(conn.pgid)
}

// clockStart is startClock for an attempt of u's shared session: its progress pushes back u's deadline (what
// the model is told it may wait for) and names the runner installing.
func (u *server) clockStart(ctx context.Context, began time.Time, timeout time.Duration, cancel context.CancelCauseFunc) {
	startClock(ctx, u.config(), began, timeout, cancel, u.activity, func(runner string, next time.Time) {
		u.mu.Lock()
		u.installer = runner
		if u.deadline.Before(next) {
			u.deadline = next
		}
		u.mu.Unlock()
	})
}

// startClock ends the attempt whose context cancel cancels when it runs out of time: for a package runner, after
// the start timeout without progress (or MaxProgressingStart in all); for any other server, after the start
// timeout. The cause given to cancel wraps context.DeadlineExceeded and says which. sample reads the attempt's
// activity; progressed, when set, hears of each sign of progress with the deadline it pushes the start to. It
// returns once ctx ends.
func startClock(ctx context.Context, cfg ServerConfig, began time.Time, timeout time.Duration, cancel context.CancelCauseFunc,
	sample func() activity, progressed func(runner string, next time.Time)) {
	runner, isRunner := packageRunner(cfg.Command, cfg.Args)
	if !isRunner || cfg.URL != "" {
		timer := time.NewTimer(timeout)
		defer timer.Stop()
		select {
		case <-ctx.Done():
		case <-timer.C:
			cancel(fmt.Errorf("no answer within %s: %w", timeout, context.DeadlineExceeded))
		}
		return
	}
	limit := began.Add(max(progressingStartCap, 2*timeout))
	tick := time.NewTicker(min(progressSample, timeout/4))
	defer tick.Stop()
	last, prev := began, sample()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			cur := sample()
			if cur.progressedSince(prev) {
				last = now
				if progressed != nil {
					next := now.Add(timeout)
					if next.After(limit) {
						next = limit
					}
					progressed(runner, next)
				}
			}
			prev = cur
			switch {
			case !now.Before(limit):
				cancel(fmt.Errorf("still starting after %s, the most a start may take even while %s works: %w",
					now.Sub(began).Round(time.Second), runner, context.DeadlineExceeded))
				return
			case now.Sub(last) >= timeout:
				cancel(fmt.Errorf("no answer, and no sign of progress (CPU, reads and writes, output) for %s: %w",
					timeout, context.DeadlineExceeded))
				return
			}
		}
	}
}
