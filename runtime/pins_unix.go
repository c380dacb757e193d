//go:build unix

package runtime

import (
	"os"
	"syscall"
)

// lockPins takes an exclusive advisory lock on the pin file's lock file, held across a read-merge-write, so
// that toolsearch processes sharing one pin file never lose each other's pins.
func lockPins(lockPath string) (unlock func(), err error) {
	f, err := os.OpenFile(lockPath, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
