package upstream

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/toolsearch/toolsearch/internal/textcut"
)

// stderrTail keeps the last bytes a child wrote to stderr, for failure messages, and optionally forwards each
// line with the server's name in front.
type stderrTail struct {
	prefix  string
	forward io.Writer

	mu      sync.Mutex
	buf     []byte // the last stderrTailBytes bytes
	partial []byte // an unfinished line waiting to be forwarded
}

const stderrTailBytes = 4 << 10

func newStderrTail(name string, forward io.Writer) *stderrTail {
	return &stderrTail{prefix: "[" + name + "] ", forward: forward}
}

func (t *stderrTail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > stderrTailBytes {
		t.buf = append(t.buf[:0], textcut.Suffix(t.buf, stderrTailBytes)...)
	}
	if t.forward != nil {
		t.partial = append(t.partial, p...)
		for {
			i := bytes.IndexByte(t.partial, '\n')
			if i < 0 {
				break
			}
			fmt.Fprintf(t.forward, "%s%s\n", t.prefix, t.partial[:i])
			t.partial = t.partial[i+1:]
		}
		if len(t.partial) > stderrTailBytes {
			t.partial = t.partial[:0] // a line that long is noise, not a message
		}
	}
	return len(p), nil
}

// reset forgets what an earlier process wrote, so failures quote only the current one.
func (t *stderrTail) reset() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = t.buf[:0]
}

// lastLine is the last non-empty line written, cut to 300 bytes.
func (t *stderrTail) lastLine() string { return t.lastLines(1) }

// stderrQuoteLines is how many of a failed server's last stderr lines its error quotes: the one line npm ends
// with ("npm error A complete log of this run can be found in: ...") says nothing of what went wrong, the lines
// before it do ("npm error 404 ... could not be found").
const stderrQuoteLines = 6

// lastLines is the last n non-empty lines written, each cut to 300 bytes, joined by " | ".
func (t *stderrTail) lastLines(n int) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var kept []string
	lines := strings.Split(strings.TrimSpace(string(t.buf)), "\n")
	for i := len(lines) - 1; i >= 0 && len(kept) < n; i-- {
		if line := strings.TrimSpace(lines[i]); line != "" {
			kept = append(kept, cutUTF8(line, 300))
		}
	}
	slices.Reverse(kept)
	return strings.Join(kept, " | ")
}
