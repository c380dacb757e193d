package runtime

import (
	"strconv"
	"strings"

	"github.com/toolsearch/toolsearch/catalog"
)

// maxNoticeWords bounds the words a notice lists, and maxNotices the notices one code run collects: a script
// that searches a hundred times for nonsense gets a bounded answer.
const (
	maxNoticeWords = 8
	maxNotices     = 8
)

// noMatchNotice tells the model why a query found nothing and how to retry: which of its words no tool has, or
// that it had no words to match at all. An unmatched search still returns no hits (never "the first N tools");
// this is the text that goes with the empty list.
// partial says that sources of the run are not ready: the words are missing from the tools available now, which
// is all the notice may claim.
func (r *Run) noMatchNotice(query string, partial bool) string {
	var b strings.Builder
	none := "No tool"
	if partial {
		none = "No tool available now"
	}
	b.WriteString(none + " matched. ")
	unmatched := r.cur().cat.Unmatched(query)
	switch {
	case strings.TrimSpace(query) == "":
		b.WriteString("The query is empty. ")
	case len(catalog.Words(query)) == 0:
		b.WriteString("It has only common words (such as \"please\" or \"a tool that\"), which name no capability. ")
	case len(unmatched) == 0:
	default:
		b.WriteString(none + " has the word")
		if len(unmatched) > 1 {
			b.WriteString("s")
		}
		b.WriteString(" ")
		for i, w := range unmatched[:min(len(unmatched), maxNoticeWords)] {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(strconv.Quote(w))
		}
		if len(unmatched) > maxNoticeWords {
			b.WriteString(", ...")
		}
		b.WriteString(". ")
	}
	b.WriteString("Retry with other words for what the tool does (an action and an object, e.g. \"send email\"), " +
		"with fewer words, or with a tool or service name.")
	return b.String()
}

// noMatchNotices explains a search that found nothing, one notice per query (a batch lists each query's words).
func (r *Run) noMatchNotices(req searchRequest, partial bool) []string {
	out := make([]string, 0, len(req.queries))
	for i, q := range req.queries {
		n := r.noMatchNotice(q, partial)
		if len(req.queries) > 1 {
			n = "queries[" + strconv.Itoa(i) + "]: " + n
		}
		out = append(out, n)
	}
	return out
}
