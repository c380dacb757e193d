//go:build !unix

package upstream

// reaper does nothing where there are no process groups.
type reaper struct{}

func startReaper() *reaper  { return nil }
func (r *reaper) watch(int) {}
func (r *reaper) stop()     {}
