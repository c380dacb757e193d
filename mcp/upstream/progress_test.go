package upstream

import (
	"bytes"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// FuzzLineWatcher: whatever a server's HTTP body holds and however it arrives in pieces, the watcher passes the
// bytes on unchanged, sees exactly the lines that fit its bound, and never holds more than that bound.
func FuzzLineWatcher(f *testing.F) {
	f.Add([]byte("event: message\nid: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"toolsearch-1\",\"progress\":1,\"total\":3}}\n\n"), uint8(7))
	f.Add([]byte(`{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"done"}]}}`), uint8(1))
	f.Add([]byte("data: x\r\n\r\ndata: y"), uint8(3))
	f.Add(bytes.Repeat([]byte("a"), maxWatchedLine+10), uint8(200))
	f.Fuzz(func(t *testing.T, body []byte, chunk uint8) {
		var seen [][]byte
		w := &lineWatcher{ReadCloser: nopCloser{iotest.OneByteReader(bytes.NewReader(body))}, line: func(l []byte) {
			seen = append(seen, append([]byte(nil), l...))
		}}
		if chunk%2 == 0 {
			w.ReadCloser = nopCloser{bytes.NewReader(body)}
		}
		var out bytes.Buffer
		buf := make([]byte, int(chunk)+1)
		for {
			n, err := w.Read(buf)
			out.Write(buf[:n])
			if len(w.partial) > maxWatchedLine+len(buf) {
				t.Fatalf("holds %d bytes of a line, more than its bound", len(w.partial))
			}
			if err != nil {
				break
			}
		}
		require.Equal(t, string(body), out.String(), "the body passes unchanged")
		var want [][]byte
		lines := bytes.Split(body, []byte("\n"))
		for _, l := range lines[:len(lines)-1] { // the last piece has no newline yet
			if len(l) <= maxWatchedLine {
				want = append(want, l)
			}
		}
		assert.Equal(t, len(want), len(seen))
		for i := range min(len(want), len(seen)) {
			assert.Equal(t, string(want[i]), string(seen[i]))
		}
	})
}

type nopCloser struct {
	r interface{ Read([]byte) (int, error) }
}

func (n nopCloser) Read(p []byte) (int, error) { return n.r.Read(p) }
func (nopCloser) Close() error                 { return nil }
