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
	"sort"
	"time"

	"github.com/toolsearch/toolsearch/mcp"
	"github.com/toolsearch/toolsearch/runtime"
)

const mcpUsage = `usage: toolsearch mcp serve [--config FILE] [--mode code|tools|directory] [--http ADDR] [--verbose]

Runs toolsearch as an MCP server. It starts every server of the config file's "mcpServers" section (the shape
Claude Desktop and other MCP clients use), and shows its own client the Tool Search surface over all of their
tools instead of every schema: tool_search_code in code mode, or tool_search, tool_describe and tool_call.
Every call goes through the Tool Search pipeline to the server that owns the tool.

  {
    "mcpServers": {
      "memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]},
      "remote": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ..."}}
    },
    "tools": {"toolSearch": {"mode": "code"}}
  }

It speaks MCP on standard input and output (for a client that starts it), or streamable HTTP with --http.
Progress and logs go to standard error.

flags:
  --config FILE   the config file (default $TOOLSEARCH_CONFIG, else $XDG_CONFIG_HOME/toolsearch/config.json,
                  else ~/.config/toolsearch/config.json); JSON5 (JSON with comments, unquoted keys, ...)
  --mode MODE     code, tools or directory (default: tools.toolSearch.mode of the file, else code)
  --http ADDR     serve streamable HTTP at http://ADDR/mcp (for example 127.0.0.1:8931) instead of stdio
  --verbose       also log every run and call, and forward the servers' stderr
`

// shutdownTimeout bounds each step of shutting down: HTTP, the runtime, the upstream servers.
const shutdownTimeout = 5 * time.Second

func runMCP(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		return mcpUsageError(stderr, "a subcommand is required: serve")
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		io.WriteString(stdout, mcpUsage)
		return exitOK
	case "serve":
	default:
		return mcpUsageError(stderr, fmt.Sprintf("unknown subcommand %q (want serve)", args[0]))
	}

	fs := flag.NewFlagSet("mcp serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	configPath := fs.String("config", "", "")
	modeFlag := fs.String("mode", "", "")
	httpAddr := fs.String("http", "", "")
	verbose := fs.Bool("verbose", false, "")
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			io.WriteString(stdout, mcpUsage)
			return exitOK
		}
		return mcpUsageError(stderr, err.Error())
	}
	if fs.NArg() > 0 {
		return mcpUsageError(stderr, fmt.Sprintf("unexpected argument %q", fs.Arg(0)))
	}
	if *modeFlag != "" {
		if _, err := parseMode(*modeFlag); err != nil {
			return mcpUsageError(stderr, err.Error())
		}
	}

	path := *configPath
	if path == "" {
		var err error
		if path, err = runtime.DefaultConfigPath(os.Getenv); err != nil {
			fmt.Fprintf(stderr, "toolsearch mcp serve: %v\n", err)
			return exitFailure
		}
	}
	servers, tsConfig, err := loadServeConfig(path, runtime.Mode(*modeFlag))
	if err != nil {
		fmt.Fprintf(stderr, "toolsearch mcp serve: %v\n", err)
		return exitFailure
	}
	if err := checkNesting(os.Getenv); err != nil {
		fmt.Fprintf(stderr, "toolsearch mcp serve: %v\n", err)
		return exitFailure
	}
	skipSelfReferences(stderr, "toolsearch mcp serve", servers)
	if len(servers.Servers) == 0 {
		fmt.Fprintf(stderr, "toolsearch mcp serve: warning: %s has no %q servers; serving no tools\n", path, mcp.ConfigKey)
	}
	return serveMCP(ctx, servers, tsConfig, *httpAddr, *verbose, stdin, stdout, stderr)
}

// loadServeConfig reads the servers and tools.toolSearch from one file. Serving means Tool Search is on: an
// unset or disabled tools.toolSearch still gets its limits from the file, with the mode of the flag, else of the
// file, else code.
func loadServeConfig(path string, mode runtime.Mode) (*mcp.Config, runtime.Config, error) {
	lc, err := loadConfig(path)
	if err != nil {
		return nil, runtime.Config{}, err
	}
	servers, cfg := lc.servers, lc.toolSearch
	switch {
	case mode != "":
		cfg.Mode = mode
	case !cfg.Enabled || cfg.Mode == runtime.ModeOff:
		cfg.Mode = runtime.ModeCode
	}
	cfg.Enabled = true
	return servers, cfg, nil
}

// selfReferences finds servers that would run this very binary as `mcp serve`: easy to get by pointing --config
// at the MCP client's own config file, which lists toolsearch itself.
func selfReferences(cfg *mcp.Config) []string {
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

func serveMCP(ctx context.Context, servers *mcp.Config, cfg runtime.Config, httpAddr string, verbose bool,
	stdin io.Reader, stdout, stderr io.Writer) int {
	level := slog.LevelWarn
	srcOpts := &mcp.Options{Progress: stderr, ChildEnv: childEnv()}
	if verbose {
		level = slog.LevelInfo
		srcOpts.ServerStderr = stderr
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))

	src, err := mcp.New(ctx, servers, srcOpts)
	if err != nil {
		fmt.Fprintf(stderr, "toolsearch mcp serve: %v\n", err)
		return exitFailure
	}
	defer closeWithin(stderr, "mcp servers", src.Close)
	rt, err := runtime.New(ctx, &runtime.Options{Config: cfg, Logger: logger, SandboxFactory: cachedSandbox(cfg)})
	if err != nil {
		fmt.Fprintf(stderr, "toolsearch mcp serve: %v\n", err)
		return exitFailure
	}
	defer closeWithin(stderr, "runtime", rt.Close)
	if reason := rt.FallbackReason(); reason != "" {
		fmt.Fprintf(stderr, "toolsearch mcp serve: code mode is unavailable here (%s); serving tools mode\n", reason)
	}
	srv, err := mcp.NewServer(ctx, rt, src, &mcp.ServerOptions{Version: version, Logger: logger})
	if err != nil {
		fmt.Fprintf(stderr, "toolsearch mcp serve: %v\n", err)
		return exitFailure
	}
	defer srv.Close()
	ready := 0
	for _, st := range src.Status() {
		if st.State == mcp.StateReady {
			ready++
		}
	}
	tools := len(src.Tools())

	if httpAddr == "" {
		fmt.Fprintf(stderr, "toolsearch: %d tool(s) of %d/%d server(s) behind %s mode, on stdio\n",
			tools, ready, len(servers.Servers), rt.Mode())
		if err := srv.Run(ctx, stdin, stdout); err != nil {
			fmt.Fprintf(stderr, "toolsearch mcp serve: %v\n", err)
			return exitFailure
		}
		return exitOK
	}

	ln, err := net.Listen("tcp", httpAddr)
	if err != nil {
		fmt.Fprintf(stderr, "toolsearch mcp serve: %v\n", err)
		return exitFailure
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", srv.Handler())
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stderr, "toolsearch: %d tool(s) of %d/%d server(s) behind %s mode, at http://%s/mcp\n",
		tools, ready, len(servers.Servers), rt.Mode(), ln.Addr())
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	select {
	case err := <-served:
		fmt.Fprintf(stderr, "toolsearch mcp serve: %v\n", err)
		return exitFailure
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := hs.Shutdown(shutdownCtx); err != nil {
		// Streamable HTTP keeps a stream open per session; past the bound they are cut.
		hs.Close()
	}
	return exitOK
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

func mcpUsageError(stderr io.Writer, msg string) int {
	fmt.Fprintf(stderr, "toolsearch mcp: %s (run `toolsearch mcp --help`)\n", msg)
	return exitUsage
}
