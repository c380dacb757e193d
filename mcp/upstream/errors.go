package upstream

import (
	"errors"
	"fmt"
	"time"
)

var (
	// ErrUnavailable is wrapped by the errors of calls to a server that is not connected right now: it failed to
	// start, crashed, stopped answering, or sent something that broke the connection. Its tools stay in the
	// catalog and fail with this error until a retry reconnects it.
	ErrUnavailable = errors.New("unavailable")
	// ErrToolGone is wrapped when a server no longer offers a tool that an earlier listing had.
	ErrToolGone = errors.New("no longer offered by the server")
	// ErrClosed is returned for calls after Source.Close.
	ErrClosed = errors.New("mcp: source closed")
	// ErrNotSupported is wrapped when a server does not offer what a client asked of it through the front (a
	// resource subscription, say).
	ErrNotSupported = errors.New("not supported by the server")
	// ErrResultTooLarge is wrapped when a resources/read or prompts/get result is larger than
	// Options.MaxReadBytes; it was dropped unread.
	ErrResultTooLarge = errors.New("result too large")
	// ErrTooManyInstances is wrapped when a client's call would start one more instance of a per-client server
	// than its cap (ServerConfig.MaxInstances, or Options.MaxClientInstances): the call fails at once, and the
	// same call succeeds once another client's instance has ended.
	ErrTooManyInstances = errors.New("too many per-client instances")
	// ErrUnknownServer is wrapped when Restart names no enabled server of the Source.
	ErrUnknownServer = errors.New("no such server")
)

// RepeatedFailureError is a server's failure that repeated identically (the same message, numbers aside) on
// RepeatedFailures attempts in a row: a missing module, a missing file, a command that exits 127, a syntax
// error. It fails again until someone changes something, so the next attempt waits
// DefaultRepeatedFailureDelay, and its text says so. errors.Is and errors.As see the failure through it.
type RepeatedFailureError struct {
	Err   error
	Times int           // attempts in a row that failed this way
	Wait  time.Duration // until the next attempt
}

func (e *RepeatedFailureError) Error() string {
	return fmt.Sprintf("%v [the same failure %d times in a row: the next attempt waits %s; a restart, or a change "+
		"of its config entry, tries again at once]", e.Err, e.Times, e.Wait)
}

func (e *RepeatedFailureError) Unwrap() error { return e.Err }

// ServerError is a failure of one upstream server. Its text names the server, because it reaches the model and
// the log: "mcp server "github": call create_issue: no answer within 1m0s: context deadline exceeded".
// errors.Is sees through it (ErrUnavailable, context.DeadlineExceeded, ...).
type ServerError struct {
	Server string // the server's name in the config
	Op     string // what failed: "start", "list tools", "call <tool>", "close", ...
	Err    error
}

func (e *ServerError) Error() string {
	return fmt.Sprintf("mcp server %q: %s: %v", e.Server, e.Op, e.Err)
}

func (e *ServerError) Unwrap() error { return e.Err }
