package catalog

import (
	"context"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// FuzzTokenize checks the query tokenizer on any input: it never panics, every word is lowercase letters and
// digits within the length bounds, splitting the joined words again gives the same words (nothing is left to
// split), and analysis never returns an empty or longer term.
func FuzzTokenize(f *testing.F) {
	for _, s := range []string{"", "browser_take_screenshot", "getHTTPResponseCode", "ÄÖÜ ß", "a\x00b", "\xff\xfe",
		"mcp:github:create_issue", "İstanbul", "x" + strings.Repeat("y", 100), "CamelCASEWord123abc"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var words []string
		splitWords(s, func(w string) { words = append(words, w) })
		for _, w := range words {
			if len(w) == 0 || !utf8.ValidString(w) {
				t.Fatalf("bad word %q from %q", w, s)
			}
			for _, r := range w {
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

// FuzzSearch checks that no query makes search panic, return more than the limit or return duplicates.
func FuzzSearch(f *testing.F) {
	c, err := New(append(sampleTools(), synthTools(50)...), nil)
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{"", "sceenshot", "mcp:github:create_issue", "`exec`", "the", "zzzz zzzz", "creat isue"} {
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
	})
}
