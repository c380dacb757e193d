package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/toolsearch/toolsearch/config"
	"github.com/toolsearch/toolsearch/mcp/front"
	"github.com/toolsearch/toolsearch/mcp/upstream"
	"github.com/toolsearch/toolsearch/runtime"
)

const mcpUsage = `usage: toolsearch mcp serve [--config FILE] [--mode code|tools|directory|off] [--http ADDR]
                           [--token TOKEN] [--allow-origin ORIGIN] [--session-log DIR] [--metrics] [--verbose]
                           [--start-wait D]
       toolsearch mcp status [--url URL] [--token TOKEN] [--json]
       toolsearch mcp restart [--url URL] [--token TOKEN] NAME

Runs toolsearch as an MCP server in front of every server of the config file's "mcpServers" section (the shape
Claude Desktop and other MCP clients use). It shows its own clients the Tool Search surface over all of their
tools instead of every schema — tool_search_code in code mode, or tool_search, tool_describe and tool_call — or,
in off mode, every tool directly, as a plain aggregating proxy. Every call goes through the Tool Search pipeline
to the server that owns the tool. The servers' resources, resource templates and prompts are offered too, and
progress, cancellation and log messages pass through.

  {
    "mcpServers": {
      "memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]},
      "browser": {"command": "npx", "args": ["-y", "@playwright/mcp"], "isolation": "per-client"},
      "github": {"url": "https://api.githubcopilot.com/mcp/", "headers": {"Authorization": "Bearer ${GITHUB_TOKEN}"}}
    },
    "tools": {"toolSearch": {"mode": "code"}}
  }

The file's tools.allow, tools.deny and tools.ask (and each server's disabledTools and autoApprove) hold for
every client. A call that needs approval is put to the user of the client that made it, as an MCP elicitation
form; a client that cannot show one gets the call blocked, with the rule and how to allow the tool. Over --http,
tools.profiles give each bearer token its own tool set (tokens from the environment: "${CI_AGENT_TOKEN}").

It speaks MCP on standard input and output (for a client that starts it), or streamable HTTP with --http.
Progress and logs go to standard error. Servers start in the background: clients are answered at once, and
each server's tools appear when it is ready.

flags:
  --config FILE        the config file (default $TOOLSEARCH_CONFIG, else $XDG_CONFIG_HOME/toolsearch/config.json,
                       else ~/.config/toolsearch/config.json); JSON5 (JSON with comments, unquoted keys, ...)
  --mode MODE          code, tools, directory or off (default: tools.toolSearch of the file, else code;
                       toolSearch: false means off)
  --http ADDR          serve streamable HTTP at http://ADDR/mcp instead of stdio; ADDR is HOST:PORT (a host
                       alone gets port 8931) and must be a loopback address (localhost, 127.0.0.1:8931) unless
                       a token is set (or tools.profiles, whose tokens each client must send one of)
  --token TOKEN        require "Authorization: Bearer TOKEN" of every HTTP request (or set $TOOLSEARCH_MCP_TOKEN,
                       which keeps the token out of the process list)
  --allow-origin ORIG  also accept browser requests from this origin (repeatable); other origins than loopback
                       ones are refused
  --session-log DIR    write one JSON Lines session log per client session into DIR
  --metrics            with --http, serve the metrics as Prometheus text at /metrics (behind the server's
                       own token when one is set, never a profile's); /healthz and /readyz are always served

Traces and metrics are exported over OTLP/HTTP when the standard variables ask for it
(OTEL_EXPORTER_OTLP_ENDPOINT=http://localhost:4318, OTEL_SERVICE_NAME, OTEL_TRACES_SAMPLER, ...); with none set,
nothing is exported. OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true also records tool arguments,
results and search queries in spans (they can hold secrets).
  --verbose            also log every run and call, and forward the servers' stderr
  --start-wait D       how long one request may wait, in all, for servers still starting when it cannot be
                       answered without them (default 55s, within the TypeScript SDK's 60 s request timeout; at
                       most 15m); the wait sends progress notifications every 2 s, so raise it for a client that
                       resets its request timeout on progress, and cold npx installs on a busy machine are waited for

Between two garbage collections the heap may grow 32 MiB past what is live (a proxy's live heap is small and its
garbage short-lived, so collecting at Go's default pace cost a third of its CPU per call); with GOGC set (GOGC=100
is Go's default) the collector is left to it, and GOMEMLIMIT bounds the heap as it always does.
`

// tokenEnv holds the bearer token of `mcp serve --http`, for those who keep it out of the process list.
const tokenEnv = "TOOLSEARCH_MCP_TOKEN"

// shutdownTimeout bounds each step of shutting down: HTTP, the runtime, the upstream servers.
const shutdownTimeout = 5 * time.Second

// httpLimits bound what one connection to `mcp serve --http` may hold, besides what the front bounds (a request
// body's time, sessions): a client that trickles its headers, or keeps a connection open between requests, holds
// a file descriptor and a goroutine for as long as it is allowed to.
type httpLimits struct {
	readHeader time.Duration // from accepting a connection (or its previous request) to the end of the headers
	idle       time.Duration // a kept-alive connection between two requests
	maxHeader  int           // bytes of headers
}

// defaultHTTPLimits are `mcp serve --http`'s: an MCP client sends its headers at once and sends its next request
// within seconds or opens a new connection; a long answer (an SSE stream) is a request, never idle, so neither
// bound cuts it. No write timeout, for the same reason: a stream may last as long as its session.
func defaultHTTPLimits() httpLimits {
	return httpLimits{readHeader: 10 * time.Second, idle: 60 * time.Second, maxHeader: 64 << 10}
}

// newHTTPServer is the http.Server of `mcp serve --http`, within lim.
func newHTTPServer(h http.Handler, lim httpLimits) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: lim.readHeader, IdleTimeout: lim.idle, MaxHeaderBytes: lim.maxHeader}
}

// serveFlags are the settings of one `mcp serve`.
// maxStartWait bounds --start-wait: the longest a package runner's start is let run while it shows progress, so a
// wait never outlasts every start it could be waiting for.
const maxStartWait = upstream.MaxProgressingStart

type serveFlags struct {
	mode        runtime.Mode // "" when --mode was not given
	httpAddr    string
	token       string
	origins     []string
	sessionLogs string
	metrics     bool
	verbose     bool
	startWait   time.Duration // 0: the front's default
	configPath  string        // the file the servers came from, watched for changes
}

func runMCP(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		return mcpUsageError(stderr, "a subcommand is required: serve")
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		io.WriteString(stdout, mcpUsage)
		return exitOK
	case "serve":
	case "status":
		return runStatus(ctx, args[1:], stdout, stderr)
	case "restart":
		return runRestart(ctx, args[1:], stdout, stderr)
	default:
		return mcpUsageError(stderr, fmt.Sprintf("unknown subcommand %q (want serve, status or restart)", args[0]))
	}

	fs := flag.NewFlagSet("mcp serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	configPath := fs.String("config", "", "")
	modeFlag := fs.String("mode", "", "")
	var sf serveFlags
	fs.StringVar(&sf.httpAddr, "http", "", "")
	fs.StringVar(&sf.token, "token", "", "")
	fs.Func("allow-origin", "", func(v string) error { sf.origins = append(sf.origins, v); return nil })
	fs.StringVar(&sf.sessionLogs, "session-log", "", "")
	fs.BoolVar(&sf.metrics, "metrics", false, "")
	fs.BoolVar(&sf.verbose, "verbose", false, "")
	fs.DurationVar(&sf.startWait, "start-wait", 0, "")
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			io.WriteString(stdout, mcpUsage)
			return exitOK
		}
		return mcpUsageError(stderr, err.Error())
	}
	if fs.NArg() > 0 {
		arg := fs.Arg(0)
		if ext := strings.ToLower(filepath.Ext(arg)); ext == ".json" || ext == ".json5" || ext == ".jsonc" {
			return mcpUsageError(stderr, fmt.Sprintf("unexpected argument %q: to serve the servers of a config file, "+
				"write --config %s", arg, arg))
		}
		return mcpUsageError(stderr, fmt.Sprintf("unexpected argument %q", arg))
	}
	if *modeFlag != "" {
		mode, err := parseMode(*modeFlag)
		if err != nil {
			return mcpUsageError(stderr, err.Error())
		}
		sf.mode = mode
	}
	if sf.startWait < 0 || sf.startWait > maxStartWait {
		return mcpUsageError(stderr, fmt.Sprintf("--start-wait must be between 0 and %s, not %s", maxStartWait, sf.startWait))
	}
	if sf.token == "" {
		sf.token = os.Getenv(tokenEnv)
	}
	if sf.metrics && sf.httpAddr == "" {
		return mcpUsageError(stderr, "--metrics serves /metrics on the HTTP front: it needs --http")
	}
	if sf.httpAddr != "" {
		addr, note, err := listenAddr(sf.httpAddr)
		if err != nil {
			return mcpUsageError(stderr, err.Error())
		}
		if note != "" {
			fmt.Fprintf(stderr, "toolsearch mcp serve: %s\n", note)
		}
		sf.httpAddr = addr
	}
	path := *configPath
	if path == "" {
		var err error
		if path, err = config.DefaultPath(os.Getenv); err != nil {
			fmt.Fprintf(stderr, "toolsearch mcp serve: %v\n", err)
			return exitFailure
		}
	}
	lc, err := config.Load(ctx, path)
	if err != nil {
		fmt.Fprintf(stderr, "toolsearch mcp serve: %v\n", err)
		return exitFailure
	}
	if err := checkNesting(os.Getenv); err != nil {
		fmt.Fprintf(stderr, "toolsearch mcp serve: %v\n", err)
		return exitFailure
	}
	printWarnings(stderr, "toolsearch mcp serve: "+path, lc.Warnings)
	servers, tsConfig := lc.Servers, lc.ToolSearch
	if sf.mode != "" {
		if sf.mode != tsConfig.Mode {
			fmt.Fprintf(stderr, "toolsearch mcp serve: --mode %s overrides the mode of %s (%s)\n", sf.mode, path, tsConfig.Mode)
		}
		tsConfig.Mode, tsConfig.Enabled = sf.mode, sf.mode != runtime.ModeOff
	}
	skipSelfReferences(stderr, "toolsearch mcp serve", servers)
	if len(servers.Servers) == 0 {
		fmt.Fprintf(stderr, "toolsearch mcp serve: warning: %s has no %q servers; serving no tools\n", path, upstream.ConfigKey)
	}
	// With tools.profiles every request needs one of the profiles' tokens, which guard the address as --token
	// would.
	if sf.httpAddr != "" && sf.token == "" && len(lc.Profiles) == 0 && !front.IsLoopbackAddr(sf.httpAddr) {
		fmt.Fprintf(stderr, "toolsearch mcp serve: --http %s can be reached from other machines, and every tool of every "+
			"server would be theirs: set a bearer token that clients must send (%s=<a long random secret>, or --token), "+
			"or listen on a loopback address such as 127.0.0.1:%s\n", sf.httpAddr, tokenEnv, portOf(sf.httpAddr))
		return exitUsage
	}
	switch {
	case len(lc.Profiles) > 0 && sf.httpAddr != "":
		if err := config.ResolveProfileTokens(lc.Profiles, os.Getenv); err != nil {
			fmt.Fprintf(stderr, "toolsearch mcp serve: %s: %v\n", path, err)
			return exitFailure
		}
		for _, p := range lc.Profiles {
			if p.Token == sf.token {
				// The default token would have two policies; say which variables clash, never the token.
				fmt.Fprintf(stderr, "toolsearch mcp serve: %s: %s ($%s) holds the same token as --token or $%s: a "+
					"request's token must decide its profile\n", path,
					config.FormatKey("tools", config.ProfilesKey, p.Name, "token"), p.TokenEnv, tokenEnv)
				return exitFailure
			}
		}
		if sf.token == "" {
			// Metrics and readiness name every server and tool, which a profile's token must not open.
			endpoints := "/readyz takes"
			if sf.metrics {
				endpoints = "/readyz and /metrics take"
			}
			fmt.Fprintf(stderr, "toolsearch mcp serve: note: %s the server's own token, and none is set (%s or "+
				"--token): a profile's token does not open them, so they refuse every request\n", endpoints, tokenEnv)
		}
	case len(lc.Profiles) > 0:
		// Profiles are chosen by a request's bearer token, and standard input has none: its one client is the
		// person who started it. Their variables need not be set here (a client's config file may be shared with
		// an HTTP deployment).
		fmt.Fprintf(stderr, "toolsearch mcp serve: %s: tools.profiles apply to --http clients by their token; on stdio "+
			"the client gets tools.allow, tools.deny and tools.ask\n", path)
	}
	sf.configPath = path
	return serve(ctx, lc, tsConfig, sf, stdin, stdout, stderr)
}

// serve is serveMCP; a test replaces it to see what the command hands the runtime and the front.
var serve = serveMCP

// defaultHTTPPort is the port of --http when the address names only a host.
const defaultHTTPPort = "8931"

// listenAddr reads --http: host:port as net.Listen takes it, or a host alone (localhost, 127.0.0.1, ::1), which
// gets defaultHTTPPort and a note saying so: a host without a port keeps its meaning (localhost is loopback,
// never "every interface"). A port alone is refused, since it could mean this machine or every interface and
// the two differ in who can reach every tool.
func listenAddr(flag string) (addr, note string, err error) {
	if host, port, err := net.SplitHostPort(flag); err == nil {
		if _, err := strconv.ParseUint(port, 10, 16); err != nil && port != "" {
			if host == "" {
				host = "127.0.0.1"
			}
			return "", "", fmt.Errorf("--http %s: the port %q is not a number from 0 to 65535: write %s", flag, port,
				net.JoinHostPort(host, defaultHTTPPort))
		}
		return flag, "", nil
	}
	host := strings.TrimSuffix(strings.TrimPrefix(flag, "["), "]")
	if _, err := strconv.Atoi(host); err == nil {
		return "", "", fmt.Errorf("--http %s has no host: write 127.0.0.1:%s to serve this machine only, or :%[2]s to "+
			"listen on every interface (which needs a token)", flag, host)
	}
	if net.ParseIP(host) == nil && !hostName.MatchString(host) {
		return "", "", fmt.Errorf("--http %q is not a listen address: want HOST:PORT, for example 127.0.0.1:%s", flag,
			defaultHTTPPort)
	}
	addr = net.JoinHostPort(host, defaultHTTPPort)
	return addr, fmt.Sprintf("--http %s has no port: listening on %s", flag, addr), nil
}

// hostName is what a host name may look like (an IP address is checked apart).
var hostName = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9_.-]*[A-Za-z0-9])?$`)

// portOf is the port of a listen address, for the hint to listen on loopback instead.
func portOf(addr string) string {
	if _, port, err := net.SplitHostPort(addr); err == nil && port != "" {
		return port
	}
	return "8931"
}

// selfReferences finds servers that would run this very binary as `mcp serve`: easy to get by pointing --config
// at the MCP client's own config file, which lists toolsearch itself.
func selfReferences(cfg *upstream.Config) []string {
	self, err := os.Executable()
	if err != nil {
		return nil
	}
	if resolved, err := filepath.EvalSymlinks(self); err == nil {
		self = resolved
	}
	var names []string
	for name, s := range cfg.Servers {
		if s.Command == "" || len(s.Args) == 0 || s.Args[0] != "mcp" {
			continue
		}
		path, err := exec.LookPath(s.Command)
		if err != nil {
			continue
		}
		if resolved, err := filepath.EvalSymlinks(path); err == nil {
			path = resolved
		}
		if abs, err := filepath.Abs(path); err == nil && abs == self {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

func serveMCP(ctx context.Context, lc *config.Config, cfg runtime.Config, sf serveFlags,
	stdin io.Reader, stdout, stderr io.Writer) int {
	defer keepHeapFloor(proxyHeapFloor)()
	servers := lc.Servers
	level := slog.LevelWarn
	srcOpts := &upstream.Options{Progress: stderr, ChildEnv: childEnv()}
	if sf.verbose {
		level = slog.LevelInfo
		srcOpts.ServerStderr = stderr
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	tel, err := startTelemetry(ctx, stderr, sf.metrics && sf.httpAddr != "")
	if err != nil {
		fmt.Fprintf(stderr, "toolsearch mcp serve: %v\n", err)
		return exitFailure
	}
	defer closeWithin(stderr, "telemetry exporters", tel.Shutdown)
	srcOpts.TracerProvider, srcOpts.MeterProvider = tel.TracerProvider, tel.MeterProvider

	// Servers start in the background: the client is answered at once, and a server that is slow to start (or
	// hangs) adds its tools when it is ready, without holding anyone up.
	background, cancel := context.WithCancel(ctx)
	cancel()
	src, err := upstream.New(background, servers, srcOpts)
	if err != nil {
		fmt.Fprintf(stderr, "toolsearch mcp serve: %v\n", err)
		return exitFailure
	}
	defer closeWithin(stderr, "mcp servers", src.Close)
	// A changed entry (or SIGHUP) restarts its server, without restarting the client.
	watching, stopWatching := context.WithCancel(ctx)
	watched := make(chan struct{})
	hup := notifyHUP()
	go func() {
		defer close(watched)
		watchConfig(watching, sf.configPath, src, stderr, hup)
	}()
	defer func() {
		stopWatching()
		<-watched
	}()
	// The sandbox compiles in the background, so that code mode answers initialize as fast as tools mode.
	// The file's policy holds for stdio's client and the default token's; each profile has its own (below). A
	// call the policy asks about is put to the user of the client that made it (the front's approver for the
	// client's runs), or blocked with a message saying how to allow the tool when the client cannot ask.
	rtOpts := &runtime.Options{Config: cfg, Logger: logger, SandboxFactory: serveSandbox(cfg),
		SandboxInBackground: serveInBackground, Policy: lc.Policy,
		TracerProvider: tel.TracerProvider, MeterProvider: tel.MeterProvider, TraceContent: captureContent()}
	if sf.sessionLogs != "" {
		logs, err := runtime.NewSessionLogDir(sf.sessionLogs)
		if err != nil {
			fmt.Fprintf(stderr, "toolsearch mcp serve: %v\n", err)
			return exitFailure
		}
		rtOpts.SessionLog = logs
	}
	rt, err := runtime.New(ctx, rtOpts)
	if err != nil {
		fmt.Fprintf(stderr, "toolsearch mcp serve: %v\n", err)
		return exitFailure
	}
	defer closeWithin(stderr, "runtime", rt.Close)
	serving := make(chan struct{}) // closed before rt.Close, which ends a start still under way
	defer close(serving)
	go func() {
		select {
		case <-rt.SandboxReady():
			if reason := rt.FallbackReason(); reason != "" && !isClosed(serving) {
				fmt.Fprintf(stderr, "toolsearch mcp serve: code mode is unavailable here (%s); serving tools mode\n", reason)
			}
		case <-serving:
		}
	}()
	go warnUnmatched(src, lc, stderr, serving)
	fopts := &front.ServerOptions{Version: version, Logger: logger, BearerToken: sf.token, AllowedOrigins: sf.origins,
		ApprovalHint: serveApprovalHint(lc), StartWait: sf.startWait, TracerProvider: tel.TracerProvider, MeterProvider: tel.MeterProvider}
	if sf.httpAddr != "" {
		for _, p := range lc.Profiles {
			fopts.Profiles = append(fopts.Profiles, front.Profile{Name: p.Name, Token: p.Token, Policy: p.Policy})
		}
	}
	srv, err := front.NewServer(ctx, rt, src, fopts)
	if err != nil {
		fmt.Fprintf(stderr, "toolsearch mcp serve: %v\n", err)
		return exitFailure
	}
	defer srv.Close()
	what := fmt.Sprintf("%s mode over %d server(s)", rt.Mode(), len(servers.Servers))
	if rt.Mode() == runtime.ModeOff {
		what = fmt.Sprintf("every tool of %d server(s) directly (off mode)", len(servers.Servers))
	}

	if sf.httpAddr == "" {
		fmt.Fprintf(stderr, "toolsearch: serving %s on stdio\n", what)
		if err := srv.Run(ctx, stdin, stdout); err != nil {
			fmt.Fprintf(stderr, "toolsearch mcp serve: %v\n", err)
			return exitFailure
		}
		return exitOK
	}

	ln, err := net.Listen("tcp", sf.httpAddr)
	if err != nil {
		fmt.Fprintf(stderr, "toolsearch mcp serve: %v\n", err)
		return exitFailure
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", srv.Handler())
	mux.Handle("/healthz", srv.HealthHandler())
	mux.Handle("/readyz", srv.HealthHandler())
	mux.Handle("/restart", srv.Protect(restartHandler(src)))
	if tel.Metrics != nil {
		mux.Handle("/metrics", srv.Protect(tel.Metrics))
	}
	hs := newHTTPServer(srv.GuardHost(mux), defaultHTTPLimits()) // every path, a 404 too, checks the Host
	auth := "no token: loopback only"
	switch {
	case len(fopts.Profiles) > 0:
		names := make([]string, len(fopts.Profiles))
		for i, p := range fopts.Profiles {
			names[i] = p.Name
		}
		auth = "bearer token required; profiles " + strings.Join(names, ", ")
		if sf.token != "" {
			auth += ", and the default one for " + tokenEnv
		}
	case sf.token != "":
		auth = "bearer token required"
	}
	fmt.Fprintf(stderr, "toolsearch: serving %s at http://%s/mcp (%s)\n", what, ln.Addr(), auth)
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	select {
	case err := <-served:
		fmt.Fprintf(stderr, "toolsearch mcp serve: %v\n", err)
		return exitFailure
	case <-ctx.Done():
	}
	shutdownCtx, cancelShutdown := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancelShutdown()
	if err := hs.Shutdown(shutdownCtx); err != nil {
		// Streamable HTTP keeps a stream open per session; past the bound they are cut.
		hs.Close()
	}
	return exitOK
}

// warnUnmatched names the policy's selectors that match no tool, once every server has started or failed (a
// server still starting may yet bring the tool a selector names), or never if serving ends first.
func warnUnmatched(src *upstream.Source, lc *config.Config, stderr io.Writer, serving <-chan struct{}) {
	if lc.Policy == nil && len(lc.Profiles) == 0 {
		return
	}
	for {
		changed := src.Changed()
		starting := false
		for _, st := range src.Status() {
			starting = starting || st.State == upstream.StateStarting
		}
		if !starting {
			break
		}
		select {
		case <-changed:
		case <-serving:
			return
		}
	}
	tools := src.Tools()
	var warnings []string
	if lc.Policy != nil {
		warnings = lc.Origins.UnmatchedWarnings(lc.Policy, "", tools)
	}
	for _, p := range lc.Profiles {
		for _, w := range lc.Origins.UnmatchedWarnings(p.Policy, p.Name, tools) {
			if !slices.Contains(warnings, w) {
				warnings = append(warnings, w)
			}
		}
	}
	if !isClosed(serving) {
		printWarnings(stderr, "toolsearch mcp serve", warnings)
	}
}

// closeWithin runs a bounded Close on the way out; a failure is reported but does not change the exit code,
// since the work itself is done.
func closeWithin(stderr io.Writer, what string, closeFn func(context.Context) error) {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := closeFn(ctx); err != nil {
		fmt.Fprintf(stderr, "toolsearch mcp serve: closing the %s: %v\n", what, err)
	}
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// serveSandbox makes the factory of mcp serve's sandbox, and serveInBackground says whether the runtime compiles
// it in the background; variables so that a test can hold the compile and a benchmark can compare with waiting.
var (
	serveSandbox      = cachedSandbox
	serveInBackground = true
)

func mcpUsageError(stderr io.Writer, msg string) int {
	fmt.Fprintf(stderr, "toolsearch mcp: %s (run `toolsearch mcp --help`)\n", msg)
	return exitUsage
}
