package upstream

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
)

// ConfigKey is the key of the servers section in a config file (read by package config), in the shape Claude Desktop, Cursor and most MCP
// clients use, so an existing section can be pasted as it is.
const ConfigKey = "mcpServers"

// Config lists the MCP servers whose tools become a catalog source. Package config reads it from a config file
// (config.Load), checked; a program may also build it in Go.
type Config struct {
	// Servers by name. The name becomes the source name of the server's tools (made safe: see
	// catalog.SafeMCPNames), so "github" gives ids like mcp:github:create_issue.
	Servers map[string]ServerConfig `json:"mcpServers"`
}

// ServerConfig is one server: a command started as a child process speaking MCP on its standard input and
// output, or the URL of a streamable HTTP endpoint. Exactly one of Command and URL is set.
type ServerConfig struct {
	// Command is the program to start; it is looked up in PATH like a shell would.
	Command string `json:"command,omitempty"`
	// Args are the command's arguments.
	Args []string `json:"args,omitempty"`
	// Env is the child's environment besides a base set of toolsearch's own (PATH, HOME, USER, SHELL, TERM,
	// LOGNAME, the locale, TMPDIR, the XDG directories, proxies and CA certificates; nothing else of toolsearch's
	// environment reaches a server). "${NAME}" in a value is replaced by the variable NAME of toolsearch's
	// environment when the server starts ({"GITHUB_TOKEN": "${GITHUB_TOKEN}"} passes one on); one that is not set
	// fails the start, naming it. "${NAME:-default}" gives default when NAME is unset or empty.
	Env map[string]string `json:"env,omitempty"`
	// Cwd is the child's working directory; empty means toolsearch's.
	Cwd string `json:"cwd,omitempty"`

	// URL is a streamable HTTP endpoint (http or https).
	URL string `json:"url,omitempty"`
	// Headers are sent with every HTTP request, for example {"Authorization": "Bearer ${GITHUB_TOKEN}"}: each
	// ${NAME} is replaced by the environment variable NAME when the server starts, and one that is not set fails
	// the start, naming it. Values are secrets: never logged or shown, and scrubbed from what the server sends.
	Headers map[string]string `json:"headers,omitempty"`

	// Type is optional: "stdio", or "http" / "streamable-http" / "streamableHttp" for a URL. The older SSE
	// transport is refused rather than silently spoken wrongly.
	Type string `json:"type,omitempty"`
	// Disabled servers are kept in the file but not started.
	Disabled bool `json:"disabled,omitempty"`
	// Trusted vouches for the server: its tools' input schemas are rendered into search hits (saving the model a
	// describe per call), trusted tools may appear in directory mode's system-prompt directory, and its tool
	// annotations are believed by the policy (annotation:readOnly and the like). By default a server is
	// untrusted: hits say input "unknown", and its annotations can only make a tool stricter.
	Trusted bool `json:"trusted,omitempty"`

	// StartTimeoutMs is how long one attempt to start or connect the server, initialize it and list its tools
	// may take, in milliseconds, from 0 to 600000; 0 means the default: 2 min for a server a package runner
	// fetches on first use (npx, uvx, pipx, bunx, docker run, ...), 30 s for any other, unless the program
	// embedding toolsearch sets another. For a package runner it counts from the start's last sign of progress
	// (CPU time, reads and writes, output, processes started or ended), so an install that keeps working is not
	// cut short (such a start is still bounded: 15 min, or twice this timeout when longer). A start that runs out
	// of time ends with SIGTERM, then SIGKILL after 10 s.
	StartTimeoutMs int `json:"startTimeoutMs,omitempty"`
	// Lazy is set for a server that starts on its first call rather than with the others. Until then its tools
	// come from a cache of its last listing in the user's cache directory, refreshed whenever it lists its tools.
	// Without a usable cache entry it starts at once, and the progress output says why.
	Lazy bool `json:"lazy,omitempty"`
	// Isolation says whose session of the server a client of `toolsearch mcp serve` uses: "shared" (the
	// default, also "") gives every client the one session; "per-client" gives each client its own session (its
	// own process, for a command), started at its first use and closed when it goes away, for servers that keep
	// state per session such as a browser or a shell; at most maxInstances clients at once.
	Isolation string `json:"isolation,omitempty"`
	// MaxInstances caps how many clients of `toolsearch mcp serve` may have a session of their own (their own
	// process, for a command) of a "per-client" server at once, counting those still starting, from 0 to 1000;
	// 0 means the default, 16 unless the program embedding toolsearch sets another. A client whose call would
	// start one more gets a failed call at once saying so, and the same call succeeds once another client's
	// session has ended (its client went away or it crashed). The shared session every server keeps is not
	// counted.
	MaxInstances int `json:"maxInstances,omitempty"`

	// DisabledTools are tools of this server that are hidden: names as the server lists them, case included, "*"
	// globs allowed (["delete_*"]), as in Roo Code and Windsurf. toolsearch denies them (as
	// listed:<server>:<name> in tools.deny, which matches the listed name and never the tool id, so non-ASCII,
	// over-long and colliding names each hide the tool they name), so they are unknown to search, describe and
	// call in every mode and absent from off mode's tools/list. An entry that names no tool the server lists
	// refuses its listing (ErrUnresolvedDisabled): none of its tools is served until the entry is fixed.
	DisabledTools []string `json:"disabledTools,omitempty"`
	// ExcludeTools is Gemini CLI's name for disabledTools; when both are set, the two lists are merged.
	ExcludeTools []string `json:"excludeTools,omitempty"`
	// AutoApprove are tools of this server that tools.ask does not hold for approval, as in Cline: names as the
	// server lists them, "*" globs allowed. They never allow a denied or disabled tool, never lift the ask of a
	// profile (tools.profiles), and never approve a tool whose pinned definition changed.
	AutoApprove []string `json:"autoApprove,omitempty"`
	// AlwaysAllow is Roo Code's name for autoApprove; when both are set, the two lists are merged.
	AlwaysAllow []string `json:"alwaysAllow,omitempty"`
	// Visible are the tools of this server kept in the model's tool list beside the search tools, as
	// tools.toolSearch.visible keeps them: true for every tool of the server, or a list of names as the server
	// lists them ("*" globs allowed). They stay searchable, their calls go through the same pipeline, and the bounds of
	// tools.toolSearch.visible count them.
	Visible VisibleTools `json:"visible,omitempty"`
}

// MaxStartTimeoutMs is the largest ServerConfig.StartTimeoutMs: ten minutes.
const MaxStartTimeoutMs = 600_000

// MaxMaxInstances is the largest ServerConfig.MaxInstances: above it, the cap no longer protects the host.
const MaxMaxInstances = 1000

// The values of ServerConfig.Isolation.
const (
	IsolationShared    = "shared"
	IsolationPerClient = "per-client"
)

// ErrConfig is wrapped by every configuration error.
var ErrConfig = errors.New("mcp config")

// Validate reports every problem of the config at once, each naming its server.
func (c *Config) Validate() error {
	var problems []string
	for _, name := range c.names() {
		if err := c.Servers[name].validate(); err != nil {
			problems = append(problems, fmt.Sprintf("server %q: %v", name, err))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: %s", ErrConfig, strings.Join(problems, "; "))
	}
	return nil
}

// names returns the server names in sorted order, so that start-up, safe-name suffixes and messages are
// deterministic.
func (c *Config) names() []string {
	if c == nil {
		return nil
	}
	return slices.Sorted(maps.Keys(c.Servers))
}

func (s ServerConfig) validate() error {
	if s.StartTimeoutMs < 0 || s.StartTimeoutMs > MaxStartTimeoutMs {
		return fmt.Errorf(`"startTimeoutMs" must be between 0 (the default) and %d, not %d`, MaxStartTimeoutMs, s.StartTimeoutMs)
	}
	switch {
	case strings.TrimSpace(s.Command) == "" && s.URL == "":
		return errors.New(`needs "command" or "url"`)
	case s.Command != "" && s.URL != "":
		return errors.New(`has both "command" and "url"; give one`)
	}
	switch s.Isolation {
	case "", IsolationShared, IsolationPerClient:
	default:
		return fmt.Errorf("unknown isolation %q (want %q or %q)", s.Isolation, IsolationShared, IsolationPerClient)
	}
	switch {
	case s.MaxInstances < 0 || s.MaxInstances > MaxMaxInstances:
		return fmt.Errorf(`"maxInstances" must be between 0 (the default) and %d, not %d`, MaxMaxInstances, s.MaxInstances)
	case s.MaxInstances > 0 && s.Isolation != IsolationPerClient:
		return fmt.Errorf(`"maxInstances" applies to an "isolation": %q server only`, IsolationPerClient)
	}
	switch strings.ToLower(s.Type) {
	case "", "stdio", "http", "streamable-http", "streamablehttp", "streamable_http":
	case "sse":
		return errors.New(`type "sse" (the deprecated HTTP+SSE transport) is not supported; use a streamable HTTP endpoint`)
	default:
		return fmt.Errorf("unknown type %q", s.Type)
	}
	if s.URL == "" {
		if t := strings.ToLower(s.Type); t != "" && t != "stdio" {
			return fmt.Errorf(`type %q needs "url"`, s.Type)
		}
		if len(s.Headers) > 0 {
			return errors.New(`"headers" apply to a "url" server only`)
		}
		return nil
	}
	if strings.ToLower(s.Type) == "stdio" {
		return errors.New(`type "stdio" needs "command"`)
	}
	if len(s.Args) > 0 || len(s.Env) > 0 || s.Cwd != "" {
		return errors.New(`"args", "env" and "cwd" apply to a "command" server only`)
	}
	u, err := url.Parse(s.URL)
	if err != nil {
		return fmt.Errorf("bad url: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("url %q must be an absolute http or https URL", s.URL)
	}
	for _, name := range slices.Sorted(maps.Keys(s.Headers)) {
		if err := checkHeader(name, s.Headers[name]); err != nil {
			return err
		}
	}
	return nil
}
