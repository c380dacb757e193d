package toolsearch_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// exportedNames lists the exported top-level names of the package in dir (test files left out), methods as
// Type.Method.
func exportedNames(t *testing.T, dir string) []string {
	t.Helper()
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, dir, func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	require.NoError(t, err)
	var names []string
	for _, pkg := range pkgs {
		for _, file := range pkg.Files {
			for _, decl := range file.Decls {
				switch d := decl.(type) {
				case *ast.FuncDecl:
					name := d.Name.Name
					if d.Recv != nil && len(d.Recv.List) > 0 {
						typ := d.Recv.List[0].Type
						if star, ok := typ.(*ast.StarExpr); ok {
							typ = star.X
						}
						if id, ok := typ.(*ast.Ident); ok {
							name = id.Name + "." + name
						}
					}
					names = append(names, name)
				case *ast.GenDecl:
					for _, spec := range d.Specs {
						switch s := spec.(type) {
						case *ast.TypeSpec:
							names = append(names, s.Name.Name)
						case *ast.ValueSpec:
							for _, n := range s.Names {
								names = append(names, n.Name)
							}
						}
					}
				}
			}
		}
	}
	var exported []string
	for _, n := range names {
		typ, method, isMethod := strings.Cut(n, ".")
		if ast.IsExported(typ) && (!isMethod || ast.IsExported(method)) {
			exported = append(exported, n)
		}
	}
	return exported
}

// The config file has one home, package config: the runtime exports nothing that reads, edits or locks it, and
// mcp/upstream nothing that parses it.
func TestConfigFileHasOneHome(t *testing.T) {
	runtimeNames := exportedNames(t, "runtime")
	require.Contains(t, runtimeNames, "ParseConfig", "the runtime still reads tools.toolSearch's value")
	for _, n := range runtimeNames {
		assert.NotRegexp(t, `ConfigFile|^(SplitConfigKey|FormatConfigKey|DefaultConfigPath|ConfigPathEnv|ErrConfigLocked)$`,
			n, "runtime exports %s: reading, editing and locking the config file is package config's", n)
	}
	upstreamNames := exportedNames(t, "mcp/upstream")
	require.Contains(t, upstreamNames, "ServerConfig")
	for _, n := range []string{"ParseConfig", "LoadConfig"} {
		assert.NotContains(t, upstreamNames, n, "mcp/upstream takes server entries already read (config.Load)")
	}
	configNames := exportedNames(t, "config")
	for _, n := range []string{"Load", "Check", "File", "LoadFile", "ParseFile", "UpdateFile", "ErrLocked", "SplitKey", "FormatKey"} {
		assert.Contains(t, configNames, n)
	}
}
