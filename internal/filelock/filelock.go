package filelock

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// ErrBusy is returned by Lock when another holder kept the lock past the wait.
var ErrBusy = errors.New("locked by another process")

// Lock takes an exclusive advisory lock on lockPath (created if needed), waiting for it at most timeout and
// never past ctx. Waiting polls with a short backoff rather than blocking in flock, so that no deadline is
// outlived and no goroutine is stuck in a system call that nothing can interrupt.
func Lock(ctx context.Context, lockPath string, timeout time.Duration) (release func(), err error) {
	f, err := os.OpenFile(lockPath, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	wait := time.Millisecond
	for {
		busy, err := tryLock(f)
		if err != nil {
			f.Close()
			return nil, err
		}
		if !busy {
			return func() { unlock(f); f.Close() }, nil
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			f.Close()
			if err := parent.Err(); err != nil {
				return nil, fmt.Errorf("%w: %w", ErrBusy, err) // the caller gave up first
			}
			return nil, ErrBusy
		case <-t.C:
		}
		wait = min(2*wait, 50*time.Millisecond)
	}
}

// maxSymlinks is how many links ResolveLink follows before it calls the chain a loop (the limit Linux uses).
const maxSymlinks = 40

// ResolveLink follows path through symbolic links to the file they name, which need not exist yet: a config
// or pin file kept in a dotfiles repository and linked into place is written where it lives, not replaced by a
// regular file beside the link.
func ResolveLink(path string) (string, error) {
	for range maxSymlinks {
		info, err := os.Lstat(path)
		if errors.Is(err, fs.ErrNotExist) {
			return path, nil
		}
		if err != nil {
			return "", err
		}
		if info.Mode()&fs.ModeSymlink == 0 {
			return path, nil
		}
		target, err := os.Readlink(path)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(path), target)
		}
		path = target
	}
	return "", fmt.Errorf("%s: too many levels of symbolic links", path)
}

// WriteAtomic replaces the file at path (through any symbolic links) with data: a temporary file in the
// target's own directory, renamed over it, so a reader sees the old content or the new and never half of one,
// and the link stays a link. An existing file keeps its permissions; a new one gets perm.
func WriteAtomic(path string, data []byte, perm fs.FileMode) error {
	target, err := ResolveLink(path)
	if err != nil {
		return err
	}
	dir := filepath.Dir(target)
	if st, err := os.Stat(target); err == nil {
		perm = st.Mode().Perm()
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(target)+".*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after the rename there is nothing left to remove
	_, werr := tmp.Write(data)
	if werr == nil {
		werr = tmp.Chmod(perm)
	}
	if werr == nil {
		werr = tmp.Sync()
	}
	if err := errors.Join(werr, tmp.Close()); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), target)
}
