package front

import (
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// DefaultRequestBodyTimeout is ServerOptions.RequestBodyTimeout's default: a JSON-RPC request is small, and even
// the largest message the front accepts arrives well within it on any real link.
const DefaultRequestBodyTimeout = 15 * time.Second

// DefaultMaxSessions is ServerOptions.MaxSessions's default.
const DefaultMaxSessions = 100

// limitBodies bounds how long a request's body may take to arrive. A client that sends its body a byte at a
// time, or never finishes it, otherwise holds a connection, a goroutine and a file descriptor for as long as it
// likes: two hundred such requests held two hundred descriptors. Once the body has been read the deadline is
// lifted, so a call whose answer streams for minutes is not cut off. (net/http clears it as well when the body
// ends, before it starts watching the connection for the client going away; a deadline still set then would
// fail that watch, cancel the request and drop the connection: TestBodyDeadlineIsLifted.)
func limitBodies(next http.Handler, timeout time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && r.Body != http.NoBody {
			rc := http.NewResponseController(w)
			if rc.SetReadDeadline(time.Now().Add(timeout)) == nil {
				r.Body = &deadlineBody{ReadCloser: r.Body, lift: func() { _ = rc.SetReadDeadline(time.Time{}) }}
			}
		}
		next.ServeHTTP(w, r)
	})
}

// deadlineBody lifts the read deadline of its connection once the body has been read to its end.
type deadlineBody struct {
	io.ReadCloser
	once sync.Once
	lift func()
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.once.Do(b.lift)
	}
	return n, err
}

// limitSessions refuses a request that would open a session (one without Mcp-Session-Id) while max clients are
// connected: each session costs memory for as long as it lives (until it ends or idles out) and, with a
// per-client server, a process of its own. A client that is refused is told to retry later.
func (s *Server) limitSessions(next http.Handler, max int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Mcp-Session-Id") == "" && r.Method == http.MethodPost && s.clientCount() >= max {
			w.Header().Set("Retry-After", strconv.Itoa(60))
			http.Error(w, "Service Unavailable: the server has "+strconv.Itoa(max)+" sessions open, the most it keeps",
				http.StatusServiceUnavailable)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// clientCount counts the HTTP sessions the front keeps: clients whose session has an id and was initialized. A
// request that is not an initialize (a client's server/discover probe) makes a transient session, with an id, that
// holds nothing once answered and goes away a moment later: counted, it refused the next client's initialize.
func (s *Server) clientCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for ss := range s.clients {
		if ss != nil && ss.ID() != "" && ss.InitializeParams() != nil {
			n++
		}
	}
	return n
}
