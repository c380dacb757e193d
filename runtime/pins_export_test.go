package runtime

import "time"

// SetLockTimeout shortens (or lengthens) the wait for the pin file's lock, for tests that hold one.
func SetLockTimeout(d time.Duration) (restore func()) {
	old := lockTimeout
	lockTimeout = d
	return func() { lockTimeout = old }
}
