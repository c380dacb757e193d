package upstream

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// jsonLinesOf is what the filter must let through: every line whose first byte other than white space opens a
// JSON value, and the white space itself.
func jsonLinesOf(in string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(in, "\n") {
		trimmed := strings.TrimLeft(line, " \t\r\n")
		if trimmed == "" || trimmed[0] == '{' || trimmed[0] == '[' {
			b.WriteString(line)
			continue
		}
		b.WriteString(line[:len(line)-len(trimmed)]) // the white space before the noise
	}
	return b.String()
}

func TestNoiseFilter(t *testing.T) {
	msg := `{"jsonrpc":"2.0","id":1,"result":{}}` + "\n"
	cases := []struct {
		name, in string
		skipped  int
	}{
		{"messages only", msg + msg, 0},
		{"a banner first", "Knowledge Graph MCP Server running on stdio\n" + msg, 1},
		{"banners between messages", "Starting Time MCP server...\n" + msg + "Allowed directories: []\n" + msg, 2},
		{"blank and indented lines", "\n  \n" + msg + "  " + msg, 0},
		{"a batch", `[{"jsonrpc":"2.0","id":1,"result":{}}]` + "\n", 0},
		{"noise with no newline at the end", msg + "bye", 1},
		{"a long banner", strings.Repeat("x", 100_000) + "\n" + msg, 1},
		{"crlf", "banner\r\n" + strings.TrimSuffix(msg, "\n") + "\r\n", 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, r := range map[string]func(io.Reader) io.Reader{
				"whole": func(r io.Reader) io.Reader { return r }, "byte by byte": iotest.OneByteReader,
				"half": iotest.HalfReader,
			} {
				var reports []string
				f := newNoiseFilter(r(strings.NewReader(tc.in)), func(line string, _ int) { reports = append(reports, line) })
				out, err := io.ReadAll(f)
				require.NoError(t, err)
				assert.Equal(t, jsonLinesOf(tc.in), string(out))
				assert.Equal(t, tc.skipped, f.skippedLines())
				assert.Len(t, reports, tc.skipped)
				for _, line := range reports {
					assert.LessOrEqual(t, len(line), maxNoiseQuote, "a report quotes a bounded part of the line")
				}
			}
		})
	}
}

// A server that prints a thousand lines of noise is reported a bounded number of times, and counted.
func TestNoiseFilterReportsAreBounded(t *testing.T) {
	in := strings.Repeat("log line\n", 1000) + `{"jsonrpc":"2.0","id":1,"result":{}}` + "\n"
	reports := 0
	f := newNoiseFilter(strings.NewReader(in), func(string, int) { reports++ })
	out, err := io.ReadAll(f)
	require.NoError(t, err)
	assert.Equal(t, `{"jsonrpc":"2.0","id":1,"result":{}}`+"\n", string(out))
	assert.Equal(t, 1000, f.skippedLines())
	assert.Equal(t, maxNoiseReports+1, reports, "the first lines one by one, then one line saying more are skipped")
}

func FuzzNoiseFilter(f *testing.F) {
	f.Add("Server running on stdio\n{\"jsonrpc\":\"2.0\"}\n", 3)
	f.Add("\n\n[1]\n x\n{", 1)
	f.Add(strings.Repeat("é", 300)+"\n{}", 7)
	f.Fuzz(func(t *testing.T, in string, chunk int) {
		chunk = 1 + max(chunk, -chunk)%64
		fl := newNoiseFilter(&chunkReader{data: []byte(in), n: chunk}, func(line string, _ int) {
			if len(line) > maxNoiseQuote {
				t.Fatalf("report of %d bytes", len(line))
			}
		})
		out, err := io.ReadAll(fl)
		if err != nil {
			t.Fatal(err)
		}
		if want := jsonLinesOf(in); !bytes.Equal(out, []byte(want)) {
			t.Fatalf("filtered %q into %q, want %q", in, out, want)
		}
	})
}

// chunkReader returns at most n bytes per Read.
type chunkReader struct {
	data []byte
	n    int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	k := copy(p[:min(len(p), c.n)], c.data)
	c.data = c.data[k:]
	return k, nil
}
