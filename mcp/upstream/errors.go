package upstream

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
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
	// ErrUnresolvedDisabled is what an UnresolvedDisabledError is (errors.Is).
	ErrUnresolvedDisabled = errors.New("a disabled tool is not listed by the server")
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

// maxListedQuoted is how many listed names an UnresolvedDisabledError quotes.
const maxListedQuoted = 20

// UnresolvedDisabledError is a listing refused because an entry of the server's disabledTools (or excludeTools)
// names no tool the server lists. None of the server's tools is served while it holds: the tool the entry was
// written to hide may be listed under another name.
type UnresolvedDisabledError struct {
	Entries []string // each as `disabledTools "rm.rf"`
	Listed  []string // the names the server lists
}

func (e *UnresolvedDisabledError) Error() string {
	listed := make([]string, 0, min(len(e.Listed), maxListedQuoted))
	for _, n := range e.Listed[:min(len(e.Listed), maxListedQuoted)] {
		listed = append(listed, strconv.QuoteToASCII(cutUTF8(n, maxDroppedName)))
	}
	more := ""
	if len(e.Listed) > maxListedQuoted {
		more = fmt.Sprintf(" and %d more", len(e.Listed)-maxListedQuoted)
	}
	return fmt.Sprintf("%s: %s names no tool it lists (it lists %d: %s%s); none of its tools is served until "+
		"the entry names a tool as the server lists it, or is removed", ErrUnresolvedDisabled,
		strings.Join(e.Entries, ", "), len(e.Listed), strings.Join(listed, ", "), more)
}

func (e *UnresolvedDisabledError) Is(target error) bool { return target == ErrUnresolvedDisabled }

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
