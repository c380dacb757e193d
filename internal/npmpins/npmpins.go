// Package npmpins reads the real MCP servers that mcp/testdata/npm pins, for the tests that start them with
// `npx -y` (the cold-install tests of mcp/upstream and cmd/toolsearch): package.json pins each package's version,
// servers.json says how to start it and which harmless tool to find and call. Only tests import it.
package npmpins

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Server is one pinned server.
type Server struct {
	Pkg       string            // name@version, as package.json pins it
	Name      string            `json:"name"`
	Args      []string          `json:"args"`
	Env       map[string]string `json:"env"`
	Query     string            `json:"query"`
	Tool      string            `json:"tool"`
	Arguments json.RawMessage   `json:"arguments"`
	Expect    string            `json:"expect"`
}

// Read reads the servers pinned in npmDir, sorted by package, with "{dir}" in their args and env replaced by dir.
// Every pinned package must say in servers.json how it is started and called, and servers.json may describe
// only pinned packages, so that the two files cannot drift apart.
func Read(npmDir, dir string) ([]Server, error) {
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	var specs struct {
		Servers map[string]Server `json:"servers"`
	}
	for file, v := range map[string]any{"package.json": &pkg, "servers.json": &specs} {
		data, err := os.ReadFile(filepath.Join(npmDir, file))
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(data, v); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
	}
	var out []Server
	for name, version := range pkg.Dependencies {
		s, ok := specs.Servers[name]
		if !ok {
			return nil, fmt.Errorf("servers.json does not say how to start and call %s", name)
		}
		s.Pkg = name + "@" + version
		for i, a := range s.Args {
			s.Args[i] = strings.ReplaceAll(a, "{dir}", dir)
		}
		for k, v := range s.Env {
			s.Env[k] = strings.ReplaceAll(v, "{dir}", dir)
		}
		out = append(out, s)
	}
	if len(out) != len(specs.Servers) {
		return nil, fmt.Errorf("servers.json describes %d servers, package.json pins %d: it must describe only "+
			"pinned packages", len(specs.Servers), len(out))
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s pins no server", npmDir)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Pkg < out[j].Pkg })
	return out, nil
}
