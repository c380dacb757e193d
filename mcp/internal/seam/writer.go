package seam

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// BoundedWriter bounds each write to a server's input by a deadline. The SDK does not watch contexts while it
// writes, so once a server stops reading (it hangs, or is stopped) and the pipe is full, a request would hold its
// call — and every call and ping queued behind it — past any timeout. A write that times out may have left half a
// message behind, so every later write fails too: the session ends and the Source reconnects. Where the platform
// has no deadlines on pipes, writes are unbounded.
type BoundedWriter struct {
	w     DeadlineWriteCloser
	limit time.Duration

	mu  sync.Mutex
	err error
}

// DeadlineWriteCloser is a pipe or connection whose writes can be given a deadline.
type DeadlineWriteCloser interface {
	io.WriteCloser
	SetWriteDeadline(time.Time) error
}

// NewBoundedWriter bounds each write to w by limit.
func NewBoundedWriter(w DeadlineWriteCloser, limit time.Duration) *BoundedWriter {
	return &BoundedWriter{w: w, limit: limit}
}

func (b *BoundedWriter) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil {
		return 0, b.err
	}
	_ = b.w.SetWriteDeadline(time.Now().Add(b.limit))
	n, err := b.w.Write(p)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		b.err = fmt.Errorf("the server read none of its input for %s: %w", b.limit, err)
		err = b.err
	}
	return n, err
}

func (b *BoundedWriter) Close() error { return b.w.Close() }
