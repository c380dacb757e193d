package mcp_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	frontPkg    = "github.com/toolsearch/toolsearch/mcp/front"
	upstreamPkg = "github.com/toolsearch/toolsearch/mcp/upstream"
	seamPkg     = "github.com/toolsearch/toolsearch/mcp/internal/seam"
)

// TestSeam draws the file-level graph of the two MCP packages from what each file uses (every identifier,
// resolved by the type checker to the file that declares it) and holds the seam to its promise: no file of
// upstream uses a file of front, so no file of one is in a circle with a file of the other; and no front file
// reads or writes a field of an upstream struct, so whatever the front learns of the upstream side comes
// through functions it can see (the Source's methods, seam.Upstream, seam.Server).
func TestSeam(t *testing.T) {
	g := loadFileGraph(t, frontPkg, upstreamPkg, seamPkg)
	require.NotEmpty(t, g.edges[frontPkg], "the graph found no uses at all: the test is broken")

	for _, v := range g.violations() {
		t.Error(v)
	}
	for _, e := range g.crossEdges(frontPkg, upstreamPkg) {
		t.Logf("front → upstream: %s", e)
	}
	for _, pair := range [][2]string{{frontPkg, frontPkg}, {frontPkg, seamPkg}, {frontPkg, upstreamPkg},
		{upstreamPkg, upstreamPkg}, {upstreamPkg, seamPkg}, {upstreamPkg, frontPkg}} {
		t.Logf("%s → %s: %d file arrows", filepath.Base(pair[0]), filepath.Base(pair[1]), len(g.crossEdges(pair[0], pair[1])))
	}
}

// writeModule writes a module of the given files (path relative to the module → content) into a new folder.
func writeModule(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	files["go.mod"] = "module example.com/m\n\ngo 1.26\n"
	for rel, src := range files {
		path := filepath.Join(dir, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(src), 0o644))
	}
	return dir
}

// TestSeamCatchesBackArrows: an upstream file that uses a front file breaks the seam (in a module where the
// front does not import upstream, so that Go allows it).
func TestSeamCatchesBackArrows(t *testing.T) {
	dir := writeModule(t, map[string]string{
		"mcp/internal/seam/seam.go": "package seam\n",
		"mcp/front/server.go":       "package front\n\ntype Server struct{}\n",
		"mcp/upstream/source.go": "package upstream\n\nimport \"example.com/m/mcp/front\"\n\n" +
			"func serve() *front.Server { return nil }\n",
	})
	g := loadFileGraphIn(t, dir, "example.com/m/mcp/front", "example.com/m/mcp/upstream", "example.com/m/mcp/internal/seam")
	assert.Equal(t, []string{"upstream/source.go uses front/server.go: the upstream side must know nothing of fronts"},
		g.violations())
}

// TestSeamCatchesFieldReads runs the checks of TestSeam on packages that break them, so that a check that
// catches nothing fails here.
func TestSeamCatchesFieldReads(t *testing.T) {
	files := map[string]string{}
	write := func(rel, src string) { files[rel] = src }
	write("mcp/internal/seam/seam.go", "package seam\n\ntype Server interface{ Name() string }\n")
	write("mcp/upstream/status.go", "package upstream\n\ntype Status struct{ State string }\n")
	write("mcp/upstream/source.go", "package upstream\n\ntype Source struct{ status Status }\n\n"+
		"func (s *Source) Status() Status { return s.status }\n")
	write("mcp/front/ok.go", "package front\n\nimport \"example.com/m/mcp/upstream\"\n\n"+
		"func status(s *upstream.Source) upstream.Status { return s.Status() }\n")
	write("mcp/front/reads.go", "package front\n\nimport \"example.com/m/mcp/upstream\"\n\n"+
		"func state(s *upstream.Source) string { return s.Status().State }\n")
	dir := writeModule(t, files)
	g := loadFileGraphIn(t, dir, "example.com/m/mcp/front", "example.com/m/mcp/upstream", "example.com/m/mcp/internal/seam")
	got := strings.Join(g.violations(), "\n")
	assert.Contains(t, got, "front/reads.go uses field State of upstream/status.go")
	assert.NotContains(t, got, "front/ok.go")
	assert.Len(t, g.crossEdges("example.com/m/mcp/front", "example.com/m/mcp/upstream"), 3,
		"ok.go → source.go and status.go, reads.go → source.go (its field use is counted as a violation, not an edge)")
}

// fileGraph is which file uses which, over the files of a few packages.
type fileGraph struct {
	front, upstream string                         // import paths of the two sides
	pkgOf           map[string]string              // file → import path
	edges           map[string]map[string][]string // package → "from → to: what" lines, for logging
	uses            map[string]map[string]bool     // file → files it uses
	fieldUses       []string                       // front file uses a field of an upstream struct
}

func (g *fileGraph) violations() []string {
	var out []string
	out = append(out, g.fieldUses...)
	for from, tos := range g.uses {
		for to := range tos {
			if g.pkgOf[from] == g.upstream && g.pkgOf[to] == g.front {
				out = append(out, fmt.Sprintf("%s uses %s: the upstream side must know nothing of fronts", g.short(from), g.short(to)))
			}
		}
	}
	for _, scc := range g.circles() {
		pkgs := map[string]bool{}
		for _, f := range scc {
			pkgs[g.pkgOf[f]] = true
		}
		if len(pkgs) > 1 {
			var names []string
			for _, f := range scc {
				names = append(names, g.short(f))
			}
			slices.Sort(names)
			out = append(out, "files of two packages in one circle: "+strings.Join(names, ", "))
		}
	}
	slices.Sort(out)
	return out
}

// crossEdges lists "from → to" for every use of a file of package to by a file of package from.
func (g *fileGraph) crossEdges(from, to string) []string {
	var out []string
	for a, tos := range g.uses {
		for b := range tos {
			if g.pkgOf[a] == from && g.pkgOf[b] == to {
				key := g.short(a) + " → " + g.short(b)
				what := slices.Sorted(slices.Values(g.edges[from][key]))
				out = append(out, key+" ("+strings.Join(what, ", ")+")")
			}
		}
	}
	slices.Sort(out)
	return out
}

// circles are the strongly connected components of the use graph with more than one file (Tarjan).
func (g *fileGraph) circles() [][]string {
	index := map[string]int{}
	low := map[string]int{}
	onStack := map[string]bool{}
	var stack []string
	var out [][]string
	var visit func(v string)
	visit = func(v string) {
		index[v], low[v] = len(index), len(index)
		stack = append(stack, v)
		onStack[v] = true
		for w := range g.uses[v] {
			if _, seen := index[w]; !seen {
				visit(w)
				low[v] = min(low[v], low[w])
			} else if onStack[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] == index[v] {
			var scc []string
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[w] = false
				scc = append(scc, w)
				if w == v {
					break
				}
			}
			if len(scc) > 1 {
				out = append(out, scc)
			}
		}
	}
	files := make([]string, 0, len(g.pkgOf))
	for f := range g.pkgOf {
		files = append(files, f)
	}
	slices.Sort(files)
	for _, f := range files {
		if _, seen := index[f]; !seen {
			visit(f)
		}
	}
	return out
}

// short names a file by its package folder and name ("front/server.go").
func (g *fileGraph) short(file string) string {
	return filepath.Base(filepath.Dir(file)) + "/" + filepath.Base(file)
}

func loadFileGraph(t *testing.T, front, upstream string, others ...string) *fileGraph {
	return loadFileGraphIn(t, ".", front, upstream, others...)
}

// loadFileGraphIn type-checks the non-test files of front, upstream and others from source in the module at dir
// (everything else from the compiler's export data, which go list builds) and records which file uses which.
func loadFileGraphIn(t *testing.T, dir, front, upstream string, others ...string) *fileGraph {
	t.Helper()
	ours := append([]string{front, upstream}, others...)
	cmd := exec.Command("go", append([]string{"list", "-export", "-deps", "-json"}, ours...)...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "go list: %s", stderr.String())
	type listed struct {
		ImportPath, Dir, Export string
		GoFiles                 []string
	}
	pkgs := map[string]listed{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listed
		err := dec.Decode(&p)
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		pkgs[p.ImportPath] = p
	}

	fset := token.NewFileSet()
	gc := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		p, ok := pkgs[path]
		if !ok || p.Export == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(p.Export)
	})
	g := &fileGraph{front: front, upstream: upstream, pkgOf: map[string]string{},
		edges: map[string]map[string][]string{}, uses: map[string]map[string]bool{}}
	checked := map[string]*types.Package{}
	infos := map[string]*types.Info{}
	files := map[string][]*ast.File{}
	var imp importerFunc
	imp = func(path string) (*types.Package, error) {
		if done := checked[path]; done != nil {
			return done, nil
		}
		if !slices.Contains(ours, path) {
			return gc.Import(path)
		}
		p := pkgs[path]
		for _, name := range p.GoFiles {
			file := filepath.Join(p.Dir, name)
			f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
			if err != nil {
				return nil, err
			}
			files[path] = append(files[path], f)
			g.pkgOf[file] = path
		}
		info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
		pkg, err := (&types.Config{Importer: imp}).Check(path, fset, files[path], info)
		if err != nil {
			return nil, err
		}
		checked[path], infos[path] = pkg, info
		return pkg, nil
	}
	for _, path := range ours {
		_, err := imp(path)
		require.NoError(t, err, "type-checking %s", path)
	}
	for path, info := range infos {
		for id, obj := range info.Uses {
			if obj == nil || obj.Pkg() == nil || !obj.Pos().IsValid() {
				continue
			}
			from := fset.Position(id.Pos()).Filename
			to := fset.Position(obj.Pos()).Filename
			if _, ours := g.pkgOf[to]; !ours || from == to {
				continue
			}
			if v, ok := obj.(*types.Var); ok && v.IsField() && path == front && g.pkgOf[to] == upstream {
				g.fieldUses = append(g.fieldUses, fmt.Sprintf("%s uses field %s of %s: the front must go through the seam",
					g.short(from), obj.Name(), g.short(to)))
				continue
			}
			if g.uses[from] == nil {
				g.uses[from] = map[string]bool{}
			}
			g.uses[from][to] = true
			g.edges[path] = g.addEdge(g.edges[path], from, to, obj.Name())
		}
	}
	return g
}

func (g *fileGraph) addEdge(m map[string][]string, from, to, what string) map[string][]string {
	if m == nil {
		m = map[string][]string{}
	}
	key := g.short(from) + " → " + g.short(to)
	if !slices.Contains(m[key], what) {
		m[key] = append(m[key], what)
	}
	return m
}

type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }
