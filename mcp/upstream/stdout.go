package upstream

import (
	"bytes"
	"io"
	"strconv"
	"sync"

	"github.com/toolsearch/toolsearch/internal/textcut"
)

// noiseFilter passes on the JSON-RPC lines of a child's stdout and drops every other line: a banner such as
// "Knowledge Graph MCP Server running on stdio", a log line, a blank line. Servers print them before (or
// between) messages, and the MCP TypeScript SDK, which most clients use, skips them; so must we, or such a
// server never gets past initialize. A line is JSON-RPC when its first byte other than white space is '{' or '['.
// The filter streams: it holds no line in memory, so a message of any size (bounded by the SDK's MaxLineLength
// behind it) costs nothing extra, and a skipped line of any length costs only its first maxNoiseQuote bytes,
// quoted in the first maxNoiseReports reports. Lines are reported through report (nil: counted only).
type noiseFilter struct {
	r      io.Reader
	report func(line string, count int)

	chunk   []byte // what reads from r go into
	buf     []byte // read from r, not yet handled
	state   int    // where in a line the next byte of buf is
	skipped []byte // the start of the line being skipped, for the report

	mu    sync.Mutex
	count int // lines skipped
}

const (
	lineStart = iota // at the start of a line, or in the white space that begins it
	inMessage        // in a JSON-RPC line: passed on up to and including its newline
	inNoise          // in any other line: dropped up to and including its newline
)

// maxNoiseQuote bounds how much of a skipped line a report quotes, and maxNoiseReports how many lines are
// reported one by one (the rest are only counted).
const (
	maxNoiseQuote   = 200
	maxNoiseReports = 3
)

func newNoiseFilter(r io.Reader, report func(line string, count int)) *noiseFilter {
	return &noiseFilter{r: r, report: report}
}

func (f *noiseFilter) Read(p []byte) (int, error) {
	for {
		if len(f.buf) == 0 {
			if f.chunk == nil {
				f.chunk = make([]byte, 64<<10)
			}
			n, err := f.r.Read(f.chunk)
			f.buf = f.chunk[:n]
			if n == 0 {
				if err == io.EOF && f.state == inNoise {
					f.endNoise()
				}
				return 0, err
			}
		}
		n := f.take(p)
		if n > 0 {
			return n, nil
		}
	}
}

// take moves what f.buf holds of JSON-RPC lines into p and drops the rest, until p is full or f.buf is empty.
func (f *noiseFilter) take(p []byte) int {
	n := 0
	for len(f.buf) > 0 && n < len(p) {
		switch f.state {
		case lineStart:
			c := f.buf[0]
			switch {
			case c == '{' || c == '[':
				f.state = inMessage
			case c == ' ' || c == '\t' || c == '\r' || c == '\n':
				// White space before a message (or a blank line) is harmless to the decoder: pass it on.
				p[n] = c
				n++
				f.buf = f.buf[1:]
			default:
				f.state = inNoise
			}
		case inMessage:
			end := bytes.IndexByte(f.buf, '\n')
			size := len(f.buf)
			if end >= 0 {
				size = end + 1
			}
			size = min(size, len(p)-n)
			copy(p[n:], f.buf[:size])
			n += size
			if f.buf[size-1] == '\n' {
				f.state = lineStart
			}
			f.buf = f.buf[size:]
		case inNoise:
			end := bytes.IndexByte(f.buf, '\n')
			part := f.buf
			if end >= 0 {
				part = f.buf[:end]
			}
			if room := maxNoiseQuote + 1 - len(f.skipped); room > 0 {
				f.skipped = append(f.skipped, part[:min(len(part), room)]...)
			}
			if end < 0 {
				f.buf = nil
				continue
			}
			f.buf = f.buf[end+1:]
			f.endNoise()
		}
	}
	return n
}

// endNoise counts and reports the line just skipped.
func (f *noiseFilter) endNoise() {
	f.mu.Lock()
	f.count++
	count := f.count
	f.mu.Unlock()
	line := textcut.Words(string(f.skipped), maxNoiseQuote, "...")
	f.skipped, f.state = f.skipped[:0], lineStart
	if f.report != nil && count <= maxNoiseReports+1 {
		f.report(line, count)
	}
}

// skippedLines is how many lines the filter has dropped so far.
func (f *noiseFilter) skippedLines() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.count
}

// noiseReport is how a server's skipped stdout lines reach the progress output.
func (u *server) noiseReport(line string, count int) {
	if count > maxNoiseReports {
		u.src.progressf("mcp: %s: skipping more lines on stdout that are not JSON-RPC (only the first %s are shown)",
			u.name, strconv.Itoa(maxNoiseReports))
		return
	}
	u.src.progressf("mcp: %s: skipped a line on stdout that is not JSON-RPC: %q", u.name, line)
}
