package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/toolsearch/toolsearch/internal/corpus"
	"github.com/toolsearch/toolsearch/internal/devset"
)

// FuzzTokenize checks the query tokenizer on any input: it never panics, every word is lowercase letters and
// digits within the length bounds, splitting the joined words again gives the same words (nothing is left to
// split), and analysis never returns an empty or longer term.
func FuzzTokenize(f *testing.F) {
	for _, s := range []string{"", "browser_take_screenshot", "getHTTPResponseCode", "ÄÖÜ ß", "a\x00b", "\xff\xfe",
		"mcp:github:create_issue", "İstanbul", "x" + strings.Repeat("y", 100), "CamelCASEWord123abc", "搜索网页内容",
		"東京の天気を調べて", "カレンダーに予定を追加", "날씨 알려줘", "สวัสดีครับ", "हिन्दी में खोजें", "a\u0301b", "中", "Python编程"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var words []string
		splitWords(s, func(w string) { words = append(words, w) })
		for _, w := range words {
			if len(w) == 0 || !utf8.ValidString(w) {
				t.Fatalf("bad word %q from %q", w, s)
			}
			for i, r := range w {
				if i > 0 && unicode.In(r, unicode.Mn, unicode.Mc) {
					continue // a mark continues the character before it
				}
				if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
					t.Fatalf("word %q of %q has %q", w, s, r)
				}
				if unicode.IsUpper(r) && unicode.ToLower(r) != r {
					t.Fatalf("word %q of %q is not lowercase", w, s)
				}
			}
			if a := analyze(w); a != "" && len(a) > len(w)+1 {
				t.Fatalf("analyze(%q) = %q grew", w, a)
			}
		}
		var again []string
		splitWords(strings.Join(words, " "), func(w string) { again = append(again, w) })
		if strings.Join(again, " ") != strings.Join(words, " ") {
			t.Fatalf("not stable: %q → %q → %q", s, words, again)
		}
		for _, w := range tokenize(s) {
			if w == "" {
				t.Fatalf("empty term from %q", s)
			}
		}
	})
}

// FuzzSearch checks that no query makes search panic, return more than the limit or return duplicates, on our
// sample tools plus the 644 real MCP tools, seeded with real requests of the development sets; that a batch is
// bounded by its limit; and that Unmatched only reports words the search read.
func FuzzSearch(f *testing.F) {
	real, err := ParseFile(corpus.CatalogFile())
	if err != nil {
		f.Fatal(err)
	}
	c, err := New(append(append(sampleTools(), synthTools(50)...), real...), nil)
	if err != nil {
		f.Fatal(err)
	}
	sets, err := devset.Load("testdata", false)
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range sets {
		for _, q := range s.Queries[:min(20, len(s.Queries))] {
			f.Add(q.Text, 5)
		}
	}
	for _, s := range []string{"", "sceenshot", "mcp:github:create_issue", "`exec`", "the", "zzzz zzzz", "creat isue",
		"export it \"Now\"!", "\"unbalanced", "获取抖音热搜", "查询12306中转余票", "東京の天気を教えて", "カレンダー",
		"날씨", "สวัสดี", "中", "Ant Design 组件更新日志"} {
		f.Add(s, 5)
	}
	f.Fuzz(func(t *testing.T, q string, limit int) {
		limit = limit%30 + 1
		if limit <= 0 {
			limit += 30
		}
		hits, err := c.Search(context.Background(), q, limit)
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) > min(limit, DefaultMaxSearch) {
			t.Fatalf("%d hits for limit %d", len(hits), limit)
		}
		seen := map[string]bool{}
		for i, h := range hits {
			if seen[h.ID] {
				t.Fatalf("duplicate %s", h.ID)
			}
			seen[h.ID] = true
			if i > 0 && h.Score > hits[i-1].Score {
				t.Fatalf("not sorted: %v", hits)
			}
		}
		batch, err := c.SearchBatch(context.Background(), []string{q, q + " web", "screenshot " + q}, limit)
		if err != nil {
			t.Fatal(err)
		}
		if len(batch) > min(limit, DefaultMaxSearch) {
			t.Fatalf("%d batch hits for limit %d", len(batch), limit)
		}
		words := map[string]bool{}
		splitWords(q[:min(len(q), maxQueryBytes)], func(w string) { words[w] = true }) // words past the bound are not read
		for _, w := range c.Unmatched(q) {
			if !words[w] {
				t.Fatalf("Unmatched(%q) reports %q, not a word of the query", q, w)
			}
		}
	})
}

// FuzzNew builds catalogs from arbitrary tool entries: a JSON value whose array elements (or itself) are taken
// as {name, description, label, inputSchema, outputSchema} of any JSON shape, with the description repeated to
// make long (multi-byte) text and the schema nested deep. Seeded with every real tool of the corpus. Whatever
// the entries, New never panics and never fails for a bad tool: each is cataloged or rejected with a reason,
// hits and their JSON stay bounded, describe works, an id always ranks its tool first, and the index text of a
// schema stays bounded and never splits a character.
func FuzzNew(f *testing.F) {
	for _, d := range corpus.MCPTools() {
		entry, err := json.Marshal(map[string]any{"name": d.Server + "." + d.Name, "description": d.Description,
			"inputSchema": d.InputSchema})
		if err != nil {
			f.Fatal(err)
		}
		f.Add(entry, uint16(1), uint16(0))
	}
	f.Add([]byte(`[{"name":"deep","inputSchema":{"type":"object","properties":{"a":{"type":"array","items":{"anyOf":[{"$ref":"#"}]}}}}}]`), uint16(3), uint16(300))
	f.Add([]byte(`[{"name":"日本語のツール","description":"説明 — Größe\u0000\u001b[31m","inputSchema":{"properties":{"ä":{"description":"ü"}}}}]`), uint16(5000), uint16(2))
	f.Add([]byte(`[{"name":17,"description":["a"],"inputSchema":"string"},{"name":null},{"name":"x","inputSchema":[{}]},true,"s"]`), uint16(0), uint16(0))
	f.Add([]byte(`{"name":"one","label":"One","outputSchema":{"type":"object"},"inputSchema":{"properties":{"p":{"enum":[1,"a",null,{}]}}}}`), uint16(2), uint16(9))

	f.Fuzz(func(t *testing.T, data []byte, repeat, depth uint16) {
		tools := fuzzTools(data, int(repeat%8192), int(depth%2048))
		c, err := New(tools, nil)
		if err != nil {
			if !errors.Is(err, ErrDuplicateTool) {
				t.Fatalf("New failed for a reason other than a duplicate id: %v", err)
			}
			return
		}
		if c.Len()+len(c.Rejected()) != len(tools) {
			t.Fatalf("%d tools in, %d cataloged and %d rejected", len(tools), c.Len(), len(c.Rejected()))
		}
		for _, r := range c.Rejected() {
			if !errors.Is(r, ErrInvalidTool) || r.Reason == "" || len(r.ID) > maxErrorIDBytes+len(CutMarker) {
				t.Fatalf("unclear rejection: %#v", r)
			}
		}
		ctx := context.Background()
		for _, tool := range c.Tools() {
			if text := paramText(tool.Parameters); len(text) > maxParamText || (utf8.Valid(tool.Parameters) && !utf8.ValidString(text)) {
				t.Fatalf("parameter text of %d bytes, valid %v", len(text), utf8.ValidString(text))
			}
			d, err := c.Describe(tool.ID())
			if err != nil {
				t.Fatalf("describe %q: %v", tool.ID(), err)
			}
			if len(d.Description) > MaxDescribeDescriptionBytes {
				t.Fatalf("describe returned %d bytes of description", len(d.Description))
			}
			hits, err := c.Search(ctx, tool.ID(), 8)
			if err != nil || len(hits) == 0 || hits[0].ID != tool.ID() {
				t.Fatalf("search for the id %q: %v %v", tool.ID(), hits, err)
			}
			h := hits[0]
			if len(h.Description) > MaxHitDescriptionBytes || !utf8.ValidString(h.Description) ||
				len(h.Label) > MaxLabelBytes || utf8.RuneCountInString(h.Input) > 300 || utf8.RuneCountInString(h.Output) > 300 {
				t.Fatalf("unbounded hit: %d description bytes, %d label bytes, input %q, output %q",
					len(h.Description), len(h.Label), h.Input, h.Output)
			}
			raw, err := json.Marshal(hits)
			if err != nil || len(raw) > len(hits)*maxHitJSONBytes {
				t.Fatalf("%d hits marshal to %d bytes: %v", len(hits), len(raw), err)
			}
		}
	})
}

// maxHitJSONBytes bounds the JSON of one hit: an id and name of at most MaxNameBytes each (JSON-escaped, up to six
// bytes a byte), label, description, two hints and the keys.
const maxHitJSONBytes = 6*(2*MaxNameBytes+MaxNameBytes) + 6*(MaxLabelBytes+MaxHitDescriptionBytes) + 2*4*300 + 128

// fuzzTools turns any JSON value into tools: each element of an array (or the value itself) is one entry, whose
// fields may have any type; a string field is used as it is, any other value as its JSON text. The first
// entry's description is repeated repeat times and its schema nested depth levels deep. Sources cycle through
// openclaw (whose schemas are rendered), mcp and client.
func fuzzTools(data []byte, repeat, depth int) []Tool {
	var entries []json.RawMessage
	if json.Unmarshal(data, &entries) != nil {
		entries = []json.RawMessage{data}
	}
	sources := []Source{SourceOpenClaw, SourceMCP, SourceClient}
	text := func(raw json.RawMessage) string {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
		return string(raw)
	}
	var tools []Tool
	seen := map[string]bool{}
	for i, raw := range entries {
		var fields map[string]json.RawMessage
		if json.Unmarshal(raw, &fields) != nil {
			fields = map[string]json.RawMessage{"name": raw}
		}
		t := Tool{Source: sources[i%len(sources)], SourceName: "fuzz", Name: text(fields["name"]),
			Label: text(fields["label"]), Description: text(fields["description"]),
			Parameters: fields["inputSchema"], OutputSchema: fields["outputSchema"]}
		if i == 0 {
			t.Description = strings.Repeat(t.Description, repeat)
			for range depth {
				t.Parameters = json.RawMessage(`{"type":"object","properties":{"nested":` + string(orNull(t.Parameters)) + `}}`)
			}
		}
		if seen[t.ID()] {
			continue // a duplicate id is the one error New returns; it is tested elsewhere
		}
		seen[t.ID()] = true
		tools = append(tools, t)
	}
	return tools
}

func orNull(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return json.RawMessage("null")
	}
	return raw
}
