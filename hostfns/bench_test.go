package hostfns

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/internal/jsprep"
)

// benchScripts are the script shapes a model sends, the same work written four ways.
var benchScripts = []struct{ name, code, want string }{
	{"trivial", "return 1", "1"},
	{"plain", "const hits = await openclaw.tools.search('weather', {limit: 3});\nreturn hits.map(h => h.name)", `["web_search"]`},
	{"expression", "const hits = await openclaw.tools.search('weather', {limit: 3});\nhits.map(h => h.name)", `["web_search"]`},
	{"arrow", "async () => {\n  const hits = await openclaw.tools.search('weather', {limit: 3});\n  return hits.map(h => h.name)\n}", `["web_search"]`},
	{"typescript", "interface Hit { name: string }\nconst hits: Hit[] = await openclaw.tools.search('weather', {limit: 3});\nreturn hits.map((h: Hit): string => h.name)", `["web_search"]`},
}

// TestBenchScripts is the correctness twin of BenchmarkRunForms and BenchmarkPrepare.
func TestBenchScripts(t *testing.T) {
	for _, s := range benchScripts {
		res, err := run(t, s.code, nil, nil)
		require.NoError(t, err, s.name)
		assert.JSONEq(t, s.want, string(res.Value), s.name)
		p, err := jsprep.Read(s.code)
		require.NoError(t, err)
		assert.Equal(t, s.name == "typescript", p.TypeScript, s.name)
	}
}

// BenchmarkRunForms is a cold run of each script shape: what plain JavaScript pays for the parse that finds
// its form, and what TypeScript pays for the transform, against the run itself.
func BenchmarkRunForms(b *testing.B) {
	sb := sandbox(b)
	for _, s := range benchScripts {
		b.Run(s.name, func(b *testing.B) {
			b.ReportAllocs()
			cpu := processCPU()
			for b.Loop() {
				if _, err := sb.Run(context.Background(), s.code, &fakeBridge{}, nil); err != nil {
					b.Fatal(err)
				}
			}
			// CPU time, which other processes on a loaded machine disturb far less than wall time.
			b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkPrepare is the preparation alone, as Run does it: a script that returns at its top level is not
// parsed at all.
func BenchmarkPrepare(b *testing.B) {
	for _, s := range benchScripts {
		b.Run(s.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := jsprep.Prepare(s.code); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
