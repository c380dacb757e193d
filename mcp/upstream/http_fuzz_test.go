package upstream

import (
	"bufio"
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sseEvent is one event as a server-sent-events parser reads it: the data lines joined by \n, and the other
// fields in order.
type sseEvent struct {
	data   string
	fields []string
	ended  bool // a blank line ended it (an event cut off by the end of the stream is discarded by parsers)
}

// parseSSE is a reference reader of a stream, simpler than the filter: lines end in \n (a \r before it is
// dropped).
func parseSSE(stream []byte) []sseEvent {
	var events []sseEvent
	var cur sseEvent
	var data []string
	started := false
	for line := range strings.Lines(string(stream)) {
		ended := strings.HasSuffix(line, "\n")
		content := strings.TrimRight(line, "\r\n")
		if content == "" && ended {
			cur.data, cur.ended = strings.Join(data, "\n"), true
			events = append(events, cur)
			cur, data, started = sseEvent{}, nil, false
			continue
		}
		started = true
		if v, ok := strings.CutPrefix(content, "data:"); ok {
			data = append(data, strings.TrimPrefix(v, " "))
		} else {
			cur.fields = append(cur.fields, content)
		}
	}
	if started {
		cur.data = strings.Join(data, "\n")
		events = append(events, cur)
	}
	return events
}

// FuzzEventFilter feeds the event-stream rewriter of HTTP upstreams any stream. Whatever comes in: no panic, the
// secret never comes out, and (where the secret does not occur) every complete event keeps its fields and its
// data, the data on one line.
func FuzzEventFilter(f *testing.F) {
	for _, seed := range []string{
		"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n",
		"id: 7\ndata: {\"a\":\ndata: 1}\n\n: comment\n\ndata: x",
		"data: Bearer ghp_SecretForFuzzing\r\n\r\n",
		"retry: 100\n\n\n\ndata:\n\n",
	} {
		f.Add([]byte(seed))
	}
	const secret = "ghp_SecretForFuzzing"
	f.Fuzz(func(t *testing.T, stream []byte) {
		up := &httpUpstream{secrets: scrubList([]string{secret})}
		ef := &eventFilter{t: up, body: io.NopCloser(nil), r: bufio.NewReader(bytes.NewReader(stream))}
		out, err := io.ReadAll(ef)
		require.NoError(t, err)
		assert.NotContains(t, string(out), secret)
		if bytes.Contains(stream, []byte(secret)) || bytes.ContainsRune(stream, '\r') {
			return
		}
		in, got := parseSSE(stream), parseSSE(out)
		var complete []sseEvent
		for _, e := range in {
			if e.ended {
				complete = append(complete, e)
			}
		}
		var gotComplete []sseEvent
		for _, e := range got {
			if e.ended {
				gotComplete = append(gotComplete, e)
			}
		}
		require.Len(t, gotComplete, len(complete), "%q -> %q", stream, out)
		for i, e := range complete {
			assert.Equal(t, e.fields, gotComplete[i].fields)
			assert.Equal(t, strings.ReplaceAll(e.data, "\n", " "), gotComplete[i].data)
		}
	})
}
