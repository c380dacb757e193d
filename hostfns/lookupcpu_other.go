//go:build !linux

package hostfns

import "time"

// lookupClock measures a search or describe by wall time where a thread's CPU clock is not read (see the Linux
// version): waiting for a core then counts too.
type lookupClock struct{ start time.Time }

func startLookupClock() *lookupClock       { return &lookupClock{start: time.Now()} }
func (c *lookupClock) used() time.Duration { return time.Since(c.start) }
func (c *lookupClock) stop() time.Duration { return c.used() }
