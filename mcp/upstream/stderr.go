package upstream

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
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
	written uint64 // bytes written in all, a sign of life
	buf     []byte // the last stderrTailBytes bytes
	partial []byte // an unfinished line waiting to be forwarded
}

// stderrTailBytes is how much of a child's stderr is kept: a Node.js crash writes its error line, then a source
// excerpt and about twenty stack frames of 100–200 bytes each, and the error line must still be in the tail.
const stderrTailBytes = 16 << 10

func newStderrTail(name string, forward io.Writer) *stderrTail {
	return &stderrTail{prefix: "[" + name + "] ", forward: forward}
}

func (t *stderrTail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.written += uint64(len(p))
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

func (t *stderrTail) bytesWritten() uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.written
}

// reset forgets what an earlier process wrote, so failures quote only the current one.
func (t *stderrTail) reset() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = t.buf[:0]
}

// stderrQuoteLines is how many lines a failed server's error quotes from its stderr at most.
const stderrQuoteLines = 4

// errorLine matches a line that says what went wrong, as runtimes and tools start one: Node's "Error
// [ERR_MODULE_NOT_FOUND]: Cannot find package 'zod' ...", Python's "ModuleNotFoundError: ...", npm's "npm error
// 404 ...", Go's "panic: ...", "fatal: ...", "error: ...".
var errorLine = regexp.MustCompile(`(?i)^(?:[\w.$]*(?:error|exception)\b|fatal\b|panic:|npm (?:err!|error)\b|err_|uncaught\b)`)

// noiseLine matches lines that never say what went wrong: stack frames (Node's "at f (file:1:2)", Python's
// `File "x.py", line 3`, Go's "goroutine 1 [running]:"), the caret under a source excerpt, braces, and npm's
// pointer to its log.
var noiseLine = regexp.MustCompile(`^(?:at |File "|goroutine \d|\^+$|[{}\[\]]+$|npm (?:err!|error) A complete log of this run|Node\.js v\d)`)

// reason is what a failed server's error quotes of its stderr: the last block of lines that say what went wrong
// (an error line and the error lines right before it, as npm writes several), without the stack that follows;
// with no such line, the last lines that are not stack frames. At most stderrQuoteLines lines of 300 bytes,
// joined by " | ".
func (t *stderrTail) reason() string {
	t.mu.Lock()
	text := string(t.buf)
	t.mu.Unlock()
	var lines []string
	for _, line := range strings.Split(text, "\n") {
		if line = strings.TrimSpace(line); line != "" && !noiseLine.MatchString(line) {
			lines = append(lines, line)
		}
	}
	last := -1
	for i := len(lines) - 1; i >= 0; i-- {
		if errorLine.MatchString(lines[i]) {
			last = i
			break
		}
	}
	var kept []string
	if last >= 0 {
		first := last
		for first > 0 && last-first+1 < stderrQuoteLines && errorLine.MatchString(lines[first-1]) {
			first--
		}
		kept = lines[first : last+1]
	} else {
		kept = lines[max(0, len(lines)-stderrQuoteLines+1):] // one line fewer: with no error line, less is known
	}
	out := make([]string, len(kept))
	for i, line := range kept {
		out[i] = cutUTF8(line, 300)
	}
	return strings.Join(out, " | ")
}
