package front

import "errors"

// ErrServerClosed is returned for requests that arrive while or after Server.Close runs.
var ErrServerClosed = errors.New("mcp: server closed")

// ErrProfileChanged is returned for a request of a client session that presents a token of another profile than
// the one its session began with: a session's profile is fixed for its whole life.
var ErrProfileChanged = errors.New("mcp: the session began with another token's profile")
