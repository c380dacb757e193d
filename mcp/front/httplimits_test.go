package front

import (
	"bufio"
	"fmt"
	"net"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/runtime"
)

// A request whose body trickles in (or never ends) is cut off at RequestBodyTimeout: it cannot hold a
// connection and its file descriptor for as long as it likes.
func TestSlowRequestBodyIsCutOff(t *testing.T) {
	rt := newTestRuntime(t, runtime.ModeTools)
	srv, err := NewServer(t.Context(), rt, nil, &ServerOptions{RequestBodyTimeout: 200 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, srv.Close()) })
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)

	conn, err := net.Dial("tcp", ts.Listener.Addr().String())
	require.NoError(t, err)
	defer conn.Close()
	fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"+
		"Accept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{\"jsonrpc\":", ts.Listener.Addr())
	// The rest of the body never comes. The server must give up on it, long before this read's own limit.
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(20*time.Second)))
	status, err := bufio.NewReader(conn).ReadString('\n')
	if err == nil {
		assert.NotContains(t, status, "200", "a request whose body never arrived is not served")
	} else {
		var ne net.Error
		if assert.ErrorAs(t, err, &ne) {
			assert.False(t, ne.Timeout(), "the server still waited for the body after 20 s")
		}
	}
}

// Sessions are capped: a client that would open one more gets 503, and once a session ends a new one opens.
func TestSessionsAreCapped(t *testing.T) {
	rt := newTestRuntime(t, runtime.ModeTools)
	srv, err := NewServer(t.Context(), rt, nil, &ServerOptions{MaxSessions: 2})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, srv.Close()) })
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	connect := func() (*sdk.ClientSession, error) {
		client := sdk.NewClient(&sdk.Implementation{Name: "c", Version: "1"}, nil)
		sess, err := client.Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: ts.URL}, nil)
		if err == nil {
			t.Cleanup(func() { sess.Close() }) // before the server's cleanup: an open session holds ts.Close
		}
		return sess, err
	}
	first, err := connect()
	require.NoError(t, err)
	second, err := connect()
	require.NoError(t, err)
	third, err := connect()
	if err == nil {
		third.Close()
	}
	require.Error(t, err, "a third session is refused")
	assert.True(t, strings.Contains(err.Error(), "503") || strings.Contains(err.Error(), "Service Unavailable"), err.Error())

	// The sessions that are open keep working.
	_, err = second.ListTools(t.Context(), nil)
	require.NoError(t, err)

	require.NoError(t, first.Close())
	require.Eventually(t, func() bool {
		s, err := connect()
		if err != nil {
			return false
		}
		s.Close()
		return true
	}, 10*time.Second, 20*time.Millisecond, "a session opens again once one has ended")
}
