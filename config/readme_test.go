package config

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/mcp/upstream"
	"github.com/toolsearch/toolsearch/runtime"
)

var update = flag.Bool("update", false, "rewrite the generated tables of README.md and the golden files of testdata/import")

const readmePath = "../README.md"

// TestREADMEConfigTables keeps the README's tables of config keys equal to what the code accepts: the keys of
// tools.toolSearch come from runtime.ConfigKeys, the fields of an mcpServers entry from upstream.ServerConfig (types
// by reflection, descriptions from the field comments). A key added to either fails this test until the README
// is regenerated with -update.
func TestREADMEConfigTables(t *testing.T) {
	data, err := os.ReadFile(readmePath)
	require.NoError(t, err)
	readme := string(data)
	for _, section := range []struct{ marker, table string }{
		{"config-keys", toolSearchTable()},
		{"server-keys", serverTable(t)},
		{"policy-keys", policyTable()},
	} {
		re := regexp.MustCompile(`(?s)(<!-- ` + section.marker + `:start[^\n]*-->\n)(.*?)(<!-- ` + section.marker + `:end -->)`)
		m := re.FindStringSubmatch(readme)
		require.NotNil(t, m, "README.md has no %s markers", section.marker)
		if *update {
			readme = re.ReplaceAllString(readme, "${1}"+strings.ReplaceAll(section.table, "$", "$$")+"${3}")
			continue
		}
		assert.Equal(t, section.table, m[2], "README.md's %s table is out of date: run "+
			"go test ./config -run TestREADMEConfigTables -update", section.marker)
	}
	if *update {
		require.NoError(t, os.WriteFile(readmePath, []byte(readme), 0o644))
	}
}

// policyTable is the policy keys of "tools", from the same list `config keys` prints.
func policyTable() string {
	var b strings.Builder
	b.WriteString("| key | type | what it does |\n|---|---|---|\n")
	for _, k := range policyKeyDocs {
		fmt.Fprintf(&b, "| `tools.%s` | %s | %s |\n", k.key, k.typ, k.doc)
	}
	return b.String()
}

func toolSearchTable() string {
	var b strings.Builder
	b.WriteString("| key | type | default | range | what it does |\n|---|---|---|---|---|\n")
	for _, k := range runtime.ConfigKeys() {
		def, rng := "`"+k.DefaultText()+"`", k.RangeText()
		if k.DefaultText() == "" {
			def = "unset"
		}
		if k.Type == runtime.ConfigInteger {
			def, rng = humanNumber(k.Default, k.Unit), integerRange(k)
		}
		if k.Type == runtime.ConfigEnum {
			rng = "`" + strings.Join(k.Values, "`, `") + "`"
		}
		if k.Type == runtime.ConfigBoolean {
			rng = ""
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", k.Name, k.Type, def, rng, k.Doc)
	}
	return b.String()
}

// integerRange writes "1,000 – 60,000 ms", "16 MiB – 1 GiB" or "1 – `maxSearchLimit`".
func integerRange(k runtime.ConfigKey) string {
	switch {
	case k.MaxKey != "":
		return thousands(int(k.Min)) + " – `" + k.MaxKey + "`"
	case k.Unit == "bytes":
		return humanNumber(k.Min, k.Unit) + " – " + humanNumber(k.Max, k.Unit)
	}
	return thousands(int(k.Min)) + " – " + humanNumber(k.Max, k.Unit)
}

// humanNumber writes a default or a bound with its unit, sizes in KiB/MiB/GiB when they divide evenly.
func humanNumber(n uint64, unit string) string {
	if unit == "bytes" {
		for _, u := range []struct {
			name  string
			shift uint
		}{{"GiB", 30}, {"MiB", 20}, {"KiB", 10}} {
			if n >= 1<<u.shift && n%(1<<u.shift) == 0 {
				return fmt.Sprintf("%d %s", n>>u.shift, u.name)
			}
		}
		return fmt.Sprintf("%s bytes", thousands(int(n)))
	}
	s := thousands(int(n))
	if unit != "" {
		s += " " + unit
	}
	return s
}

func serverTable(t *testing.T) string {
	docs := serverFieldDocs(t)
	var b strings.Builder
	b.WriteString("| key | type | what it does |\n|---|---|---|\n")
	typ := reflect.TypeFor[upstream.ServerConfig]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "" || name == "-" {
			continue
		}
		doc := docs[f.Name]
		assert.NotEmpty(t, doc, "upstream.ServerConfig.%s needs a doc comment: it is the README's description of %q", f.Name, name)
		expected, _ := describeType(f.Type)
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", name, expected, doc)
	}
	return b.String()
}

// serverFieldDocs reads the doc comments of upstream.ServerConfig's fields from its source, as one line each, without
// the leading "Name is" of Go doc style.
func serverFieldDocs(t *testing.T) map[string]string {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, "../mcp/upstream", func(fi os.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, parser.ParseComments)
	require.NoError(t, err)
	docs := map[string]string{}
	for _, pkg := range pkgs {
		ast.Inspect(pkg, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok || ts.Name.Name != "ServerConfig" {
				return true
			}
			for _, field := range ts.Type.(*ast.StructType).Fields.List {
				text := strings.Join(strings.Fields(field.Doc.Text()), " ")
				for _, name := range field.Names {
					docs[name.Name] = withoutSubject(text, name.Name)
				}
			}
			return false
		})
	}
	return docs
}

func withoutSubject(doc, name string) string {
	for _, verb := range []string{" is ", " are "} {
		if rest, ok := strings.CutPrefix(doc, name+verb); ok && rest != "" {
			return strings.ToUpper(rest[:1]) + rest[1:]
		}
	}
	return doc
}

// TestREADMEPolicyExample: the complete config of the README's "Policy and approvals" loads as written, and
// means what the prose around it says.
func TestREADMEPolicyExample(t *testing.T) {
	data, err := os.ReadFile(readmePath)
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(data), "\n## Policy and approvals\n")
	require.True(t, ok, "the README has a Policy and approvals section")
	_, block, ok := strings.Cut(section, "```json5\n")
	require.True(t, ok)
	block, _, ok = strings.Cut(block, "```")
	require.True(t, ok)
	lc, err := Load(t.Context(), writeFile(t, "config.json5", block))
	require.NoError(t, err)
	require.NotNil(t, lc.Policy)
	require.Len(t, lc.Profiles, 2)
	assert.Equal(t, 120000, lc.ToolSearch.ApprovalTimeoutMs)
	assert.NotEmpty(t, lc.ToolSearch.PinFile)

	tool := func(server, name string) *catalog.Tool {
		return &catalog.Tool{Source: catalog.SourceMCP, SourceName: server, Name: name}
	}
	assert.False(t, lc.Policy.Allows(tool("github", "delete_repository")), "disabledTools")
	assert.False(t, lc.Policy.Allows(tool("notes", "move_file")), "tools.deny")
	rule, ask := lc.Policy.NeedsApproval(tool("github", "create_issue"))
	assert.True(t, ask)
	assert.Equal(t, "annotation:destructive", rule)
	_, ask = lc.Policy.NeedsApproval(tool("github", "get_issue"))
	assert.False(t, ask, "autoApprove")
	ci := lc.Profiles[slices.IndexFunc(lc.Profiles, func(p Profile) bool { return p.Name == "ci" })].Policy
	assert.True(t, ci.Allows(tool("notes", "read_file")))
	assert.False(t, ci.Allows(tool("github", "create_issue")), "the ci profile has the readers only")
	assert.Equal(t, "CI_AGENT_TOKEN", lc.Profiles[0].TokenEnv)
}

// thousands writes n with commas between groups of three digits, as the README's tables do.
func thousands(n int) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + thousands(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
