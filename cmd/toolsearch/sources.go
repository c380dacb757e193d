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
	"github.com/toolsearch/toolsearch/mcp"
)

// toolSource is where search, describe and call find their tools: a catalog file (--catalog), or the MCP servers
// of a config file (--mcp-config, the same file `toolsearch mcp serve --config` reads).
type toolSource struct {
	catalogPath, mcpConfigPath string
}

const toolSourceFlags = `  --catalog FILE      catalog file: a JSON array of {name, description, inputSchema, outputSchema?, source?,
                      server?, label?}
  --mcp-config FILE   a config file with "mcpServers" (the shape MCP clients use); its servers are started and
                      their tools listed (exactly one of --catalog and --mcp-config)
`

func (s *toolSource) register(fs *flag.FlagSet) {
	fs.StringVar(&s.catalogPath, "catalog", "", "")
	fs.StringVar(&s.mcpConfigPath, "mcp-config", "", "")
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
// no handler; tools of MCP servers call their server. Progress of server start-up goes to progress.
func (s toolSource) load(ctx context.Context, progress io.Writer) ([]catalog.Tool, func(), error) {
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
	lc, err := loadConfig(s.mcpConfigPath)
	if err != nil {
		return nil, nil, err
	}
	printWarnings(progress, "toolsearch: "+s.mcpConfigPath, lc.warnings)
	src, err := mcp.New(ctx, lc.servers, &mcp.Options{Progress: progress})
	if err != nil {
		return nil, nil, err
	}
	release := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*mcp.DefaultCloseTimeout)
		defer cancel()
		_ = src.Close(ctx)
	}
	for _, st := range src.Status() {
		if st.State != mcp.StateReady {
			fmt.Fprintf(progress, "mcp server %q is unavailable: %v\n", st.Name, st.Err)
		}
	}
	return src.Tools(), release, nil
}

// toolSourceTimeout bounds how long a one-shot command waits for MCP servers to start.
const toolSourceTimeout = time.Minute
