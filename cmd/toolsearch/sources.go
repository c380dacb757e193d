package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/config"
	"github.com/toolsearch/toolsearch/mcp/upstream"
)

// toolSource is where search, describe and call find their tools: a catalog file (--catalog), or the MCP servers
// of a config file (--mcp-config, the same file `toolsearch mcp serve --config` reads).
type toolSource struct {
	catalogPath, mcpConfigPath string
	startTimeout               time.Duration
	// allow and deny are the command line's --allow and --deny (a Session layer), for commands that have them.
	allow, deny []string
	// config is the --mcp-config file once load has read it; policy is its policy with the Session layer of
	// --allow and --deny.
	config *config.Config
	policy *catalog.Policy
}

const toolSourceFlags = `  --catalog FILE      catalog file: a JSON array of {name, description, inputSchema, outputSchema?, source?,
                      server?, label?}
  --mcp-config FILE   a config file with "mcpServers" (the shape MCP clients use); its servers are started and
                      their tools listed (exactly one of --catalog and --mcp-config); progress goes to stderr
  --start-timeout D   with --mcp-config: how long to wait for the servers to start (e.g. 10s, 2m); servers not
                      ready by then are left out (default: each server's startTimeoutMs, else 30s)
`

func (s *toolSource) register(fs *flag.FlagSet) {
	fs.StringVar(&s.catalogPath, "catalog", "", "")
	fs.StringVar(&s.mcpConfigPath, "mcp-config", "", "")
	fs.DurationVar(&s.startTimeout, "start-timeout", 0, "")
}

// errToolUsage marks a command-line mistake (exit 2) among the errors of loading tools.
var errToolUsage = errors.New("usage")

// check reports a usage error unless exactly one source is given.
func (s toolSource) check() error {
	switch {
	case s.catalogPath == "" && s.mcpConfigPath == "":
		return fmt.Errorf("%w: --catalog or --mcp-config is required", errToolUsage)
	case s.catalogPath != "" && s.mcpConfigPath != "":
		return fmt.Errorf("%w: give --catalog or --mcp-config, not both", errToolUsage)
	case s.startTimeout < 0:
		return fmt.Errorf("%w: --start-timeout must be positive", errToolUsage)
	case s.startTimeout > 0 && s.mcpConfigPath == "":
		return fmt.Errorf("%w: --start-timeout applies to --mcp-config only", errToolUsage)
	}
	return nil
}

// name is the source as error messages should mention it.
func (s toolSource) name() string {
	if s.catalogPath != "" {
		return s.catalogPath
	}
	return s.mcpConfigPath
}

// load returns the tools and a function that releases them (it stops MCP servers). Tools of a catalog file have
// no handler; tools of MCP servers call their server. Progress of server start-up goes to progress, and so do
// warnings naming the policy's selectors that match no tool. The tools the policy denies are left out, so
// that to every command they are unknown, as they are to the model; s.policy is the policy for what remains
// (its asks).
func (s *toolSource) load(ctx context.Context, progress io.Writer) ([]catalog.Tool, func(), error) {
	tools, release, err := s.loadAll(ctx, progress)
	if err != nil {
		return nil, nil, err
	}
	if s.config != nil {
		s.policy = s.config.Policy
	}
	s.policy = config.WithSession(s.policy, s.allow, s.deny)
	if s.policy == nil {
		return tools, release, nil
	}
	if err := s.policy.Validate(); err != nil {
		release()
		return nil, nil, fmt.Errorf("%w: --allow/--deny: %w", errToolUsage, err)
	}
	var pc *config.Origins
	if s.config != nil {
		pc = s.config.Origins
	}
	printWarnings(progress, "toolsearch: "+s.name(), pc.UnmatchedWarnings(s.policy, "", tools))
	kept := tools[:0]
	for _, t := range tools {
		if s.policy.Allows(&t) {
			kept = append(kept, t)
		}
	}
	return kept, release, nil
}

func (s *toolSource) loadAll(ctx context.Context, progress io.Writer) ([]catalog.Tool, func(), error) {
	if err := s.check(); err != nil {
		return nil, nil, err
	}
	if s.catalogPath != "" {
		data, err := os.ReadFile(s.catalogPath)
		if err != nil {
			return nil, nil, err
		}
		tools, err := catalog.ParseFile(data)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", s.catalogPath, err)
		}
		return tools, func() {}, nil
	}
	lc, err := config.Load(ctx, s.mcpConfigPath)
	if err != nil {
		return nil, nil, err
	}
	s.config = lc
	printWarnings(progress, "toolsearch: "+s.mcpConfigPath, lc.Warnings)
	if err := checkNesting(os.Getenv); err != nil {
		return nil, nil, err
	}
	skipSelfReferences(progress, "toolsearch: "+s.mcpConfigPath, lc.Servers)
	tel := providersFrom(ctx)
	opts := &upstream.Options{Progress: progress, ChildEnv: childEnv(), StartTimeout: s.startTimeout,
		TracerProvider: tel.tp, MeterProvider: tel.mp}
	if s.startTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.startTimeout)
		defer cancel()
	}
	src, err := upstream.New(ctx, lc.Servers, opts)
	if err != nil {
		return nil, nil, err
	}
	release := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*upstream.DefaultCloseTimeout)
		defer cancel()
		_ = src.Close(ctx)
	}
	for _, st := range src.Status() {
		if line := unreadyLine(st, s.startTimeout); line != "" {
			fmt.Fprintln(progress, line)
		}
	}
	return src.Tools(), release, nil
}

// unreadyLine says why a server's tools are missing after the start wait, or returns "" for a server that is
// ready (or lazy). With --start-timeout a server's own start deadline is the same one as the wait's, so a server
// that did not make it is either still starting or has just failed its start by that deadline, depending on
// which timer fired first: both are the one event, and are said so.
func unreadyLine(st upstream.Status, startTimeout time.Duration) string {
	timedOut := startTimeout > 0 && st.State == upstream.StateFailed && errors.Is(st.Err, context.DeadlineExceeded)
	switch {
	case st.State == upstream.StateReady || st.State == upstream.StateIdle:
		return ""
	case st.State == upstream.StateStarting || timedOut:
		return fmt.Sprintf("mcp server %q did not start within --start-timeout %s; its tools are left out", st.Name, startTimeout)
	}
	reason := st.Err
	var se *upstream.ServerError
	if errors.As(reason, &se) {
		reason = fmt.Errorf("%s: %w", se.Op, se.Err) // the line names the server already
	}
	return fmt.Sprintf("mcp server %q is unavailable: %v", st.Name, reason)
}
