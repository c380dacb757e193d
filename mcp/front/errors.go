package front

import "errors"

// ErrServerClosed is returned for requests that arrive while or after Server.Close runs.
var ErrServerClosed = errors.New("mcp: server closed")
