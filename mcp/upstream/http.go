package upstream

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolsearch/toolsearch/mcp/internal/seam"
)

// dialHTTP connects to a streamable HTTP endpoint with a transport of its own, so that stopping the server
// drops its idle connections without touching anyone else's. The headers' ${NAME} references are resolved from
// lookup now, at each start, so a variable set later is picked up by the next retry.
func dialHTTP(u *server, lookup func(string) (string, bool)) (*dialed, error) {
	headers, secrets, err := expandHeaders(u.config().Headers, lookup)
	if err != nil {
		return nil, err
	}
	base := http.DefaultTransport.(*http.Transport).Clone()
	rt := &httpUpstream{base: base, headers: headers, secrets: secrets, maxReadBytes: u.src.opts.maxReadBytes}
	return &dialed{
		transport: &sdk.StreamableClientTransport{Endpoint: u.config().URL, HTTPClient: &http.Client{Transport: rt},
			// Events were bounded by MaxMessageBytes as they arrived; rewriting a listing may make them larger.
			MaxEventSize: 3 * MaxMessageBytes},
		stop:            func(time.Time) { base.CloseIdleConnections() },
		filtersListings: true,
	}, nil
}

// httpUpstream is the HTTP side of one streamable HTTP server. It adds the configured headers to every request
// and stands between the server's answers and the SDK: every message is bounded by MaxMessageBytes (the SDK reads
// a JSON body whole, without a bound), has the header secrets scrubbed out (a server that echoes a token must not
// put it into an error, a log or the model's context), and tools/list, resources/read and prompts/get results go
// through filterReply.
type httpUpstream struct {
	base         http.RoundTripper
	headers      map[string]string
	secrets      [][]byte
	pending      pendingLists
	maxReadBytes int
}

// maxPeekBytes bounds the request bodies read to see whether filterReply is to see their responses; such
// requests are small.
const maxPeekBytes = 64 << 10

func (t *httpUpstream) RoundTrip(req *http.Request) (*http.Response, error) {
	traced := trace.SpanContextFromContext(req.Context()).IsValid()
	if len(t.headers) > 0 || traced {
		req = req.Clone(req.Context())
		for k, v := range t.headers {
			req.Header.Set(k, v)
		}
		if traced {
			// The request's trace context, for HTTP-level tracing on the server's side (proxies, gateways); the
			// message carries the same in its _meta.
			seam.Propagator.Inject(req.Context(), propagation.HeaderCarrier(req.Header))
		}
	}
	if req.Method == http.MethodPost && req.GetBody != nil && req.ContentLength <= maxPeekBytes {
		if body, err := req.GetBody(); err == nil {
			data, _ := io.ReadAll(io.LimitReader(body, maxPeekBytes))
			body.Close()
			if bytes.Contains(data, []byte(`"tools/list"`)) || bytes.Contains(data, []byte(`"resources/read"`)) ||
				bytes.Contains(data, []byte(`"prompts/get"`)) {
				if msg, err := jsonrpc.DecodeMessage(data); err == nil {
					t.pending.noteRequest(msg)
				}
			}
		}
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if mediaType, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mediaType == "text/event-stream" {
		resp.Body = &eventFilter{t: t, body: resp.Body, r: bufio.NewReader(resp.Body)}
	} else {
		resp.Body = &messageBody{t: t, body: resp.Body}
		resp.ContentLength = -1
		resp.Header.Del("Content-Length")
	}
	return resp, nil
}

// errMessageTooLarge ends a connection whose server sent a message over MaxMessageBytes.
var errMessageTooLarge = fmt.Errorf("a message from the server is larger than %d bytes", MaxMessageBytes)

// rewrite applies the scrubbing and, for the response to a pending request it is for, filterReply to one
// message.
func (t *httpUpstream) rewrite(msg []byte) []byte {
	msg = scrub(msg, t.secrets)
	if t.pending.empty() {
		return msg
	}
	decoded, err := jsonrpc.DecodeMessage(msg)
	if err != nil {
		return msg
	}
	resp, ok := decoded.(*jsonrpc.Response)
	if !ok {
		return msg
	}
	method := t.pending.take(resp.ID)
	if method == "" || resp.Error != nil {
		return msg
	}
	filterReply(resp, method, t.maxReadBytes)
	if out, err := jsonrpc.EncodeMessage(resp); err == nil {
		return out
	}
	return msg
}

// messageBody is a response body read whole (within MaxMessageBytes) and rewritten before the SDK reads it.
type messageBody struct {
	t    *httpUpstream
	body io.ReadCloser
	out  *bytes.Reader
	err  error
}

func (m *messageBody) Read(p []byte) (int, error) {
	if m.out == nil && m.err == nil {
		data, err := io.ReadAll(io.LimitReader(m.body, MaxMessageBytes+1))
		switch {
		case err != nil:
			m.err = err
		case len(data) > MaxMessageBytes:
			m.err = errMessageTooLarge
		default:
			m.out = bytes.NewReader(m.t.rewrite(data))
		}
	}
	if m.err != nil {
		return 0, m.err
	}
	return m.out.Read(p)
}

func (m *messageBody) Close() error { return m.body.Close() }

// eventFilter rewrites a server-sent event stream event by event: each event's data is one message.
type eventFilter struct {
	t    *httpUpstream
	body io.ReadCloser
	r    *bufio.Reader
	out  []byte
	err  error
}

func (f *eventFilter) Read(p []byte) (int, error) {
	for len(f.out) == 0 {
		if f.err != nil {
			return 0, f.err
		}
		f.out, f.err = f.nextEvent()
	}
	n := copy(p, f.out)
	f.out = f.out[n:]
	return n, nil
}

func (f *eventFilter) Close() error { return f.body.Close() }

// nextEvent reads the lines of one event up to its blank line and returns them rewritten: the other fields as
// they came, the data as one line. An event cut off by the end of the stream is passed on scrubbed, for the
// SDK to discard.
func (f *eventFilter) nextEvent() ([]byte, error) {
	var fields, data [][]byte
	size := 0
	for {
		line, err := f.readLine(MaxMessageBytes - size)
		size += len(line)
		if err != nil {
			if errors.Is(err, io.EOF) {
				var out []byte
				for _, l := range append(fields, line) {
					out = append(out, scrub(l, f.t.secrets)...)
				}
				for _, d := range data {
					out = append(append(append(out, "data: "...), scrub(d, f.t.secrets)...), '\n')
				}
				return out, io.EOF
			}
			return nil, err
		}
		content := bytes.TrimRight(line, "\r\n")
		if len(content) == 0 {
			break
		}
		if value, ok := bytes.CutPrefix(content, []byte("data:")); ok {
			data = append(data, bytes.TrimPrefix(value, []byte(" ")))
			continue
		}
		fields = append(fields, line)
	}
	var out []byte
	for _, l := range fields {
		out = append(out, scrub(l, f.t.secrets)...)
	}
	if len(data) > 0 {
		msg := f.t.rewrite(bytes.Join(data, []byte("\n")))
		// A message on several data lines is one JSON value with line breaks in it: one line carries it as well.
		msg = bytes.ReplaceAll(msg, []byte("\n"), []byte(" "))
		out = append(append(append(out, "data: "...), msg...), '\n')
	}
	return append(out, '\n'), nil
}

// readLine reads one line, ending in \n or at the end of the stream, of at most limit bytes.
func (f *eventFilter) readLine(limit int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := f.r.ReadSlice('\n')
		if len(line)+len(chunk) > limit {
			return nil, errMessageTooLarge
		}
		line = append(line, chunk...)
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, err
		}
	}
}
