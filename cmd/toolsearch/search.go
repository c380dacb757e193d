package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/internal/textcut"
)

const searchUsage = `usage: toolsearch search (--catalog FILE | --mcp-config FILE) [--allow LIST] [--deny LIST] [--limit N] [--json] QUERY
       toolsearch search (--catalog FILE | --mcp-config FILE) --batch QUERIES.jsonl [--limit N]
       toolsearch search (--catalog FILE | --mcp-config FILE) --model-view [--limit N] QUERY
       toolsearch search (--catalog FILE | --mcp-config FILE) --explain [--tool ID]... [--limit N] [--json] QUERY

Ranks the tools of a catalog file, or of the MCP servers of a config file, for a query, the way the model's
search does. A tool the policy denies (the --mcp-config file's tools.allow, tools.deny and disabledTools, and
--allow/--deny) is never a hit.

Catalog file entries with "server" get ids mcp:<server>:<name>, the others openclaw:file:<name>. QUERIES.jsonl
has one {"query": "..."} object per line (other fields are ignored; "-" reads standard input); each query prints
one JSON line {"query":...,"hits":[{"id":...,"name":...,"score":...},...]}.

--model-view prints exactly the text the model's tool_search returns in tools mode: the same hits, limits
(searchDefaultLimit, maxSearchLimit, maxResultBytes of the --mcp-config file's tools.toolSearch, else the
defaults) and JSON, so you can see what your model sees and pays for.

--explain shows why each hit ranked where it did: for every query word, the term it matched in the tool (the
word's stem, or a synonym, prefix, typo fix or abbreviation), the tool's fields that hold it, its score and the
bonus for the word written as in the tool, then the factors for covering more of the query's words and for the
tool's action (create, list, ...) being the one asked for. --tool ID adds a tool that is not among the hits,
to see why it missed. The numbers are the search's own: the words' sum times the factors is the score.

flags:
` + toolSourceFlags + `  --allow LIST        comma-separated policy allow list (names, ids, server:<s>, source:<s>, group:<g>, globs with *)
  --deny LIST         comma-separated policy deny list
  --limit N           hits per query (default 8, at most 50)
  --json              print the single query's result as one JSON line
  --batch FILE        run every query of a JSON Lines file
  --model-view        print what the model's tool_search returns for QUERY
  --explain           show why each hit ranked where it did
  --tool ID           with --explain, explain this tool too (repeatable; an id or a unique name)
`

// cliMaxLimit lets evaluation runs ask for more hits than a model may (runtime.MaxMaxSearchLimit, the highest
// maxSearchLimit a config may set).
const cliMaxLimit = 50

// searchLine is one line of --json and --batch output.
type searchLine struct {
	Query string      `json:"query"`
	Hits  []searchHit `json:"hits"`
}

type searchHit struct {
	ID    string  `json:"id"`
	Name  string  `json:"name"`
	Score float64 `json:"score"`
}

func runSearch(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("search", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported below as one line, --help prints the full usage
	var source toolSource
	source.register(fs)
	source.registerPolicy(fs)
	limit := fs.Int("limit", 0, "")
	asJSON := fs.Bool("json", false, "")
	batch := fs.String("batch", "", "")
	modelView := fs.Bool("model-view", false, "")
	explain := fs.Bool("explain", false, "")
	var explainTools []string
	fs.Func("tool", "", func(v string) error { explainTools = append(explainTools, v); return nil })

	// Flags may come after the query words too ("search --catalog f.json take screenshot --limit 3").
	var words []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				io.WriteString(stdout, searchUsage)
				return exitOK
			}
			return searchUsageError(stderr, err.Error())
		}
		if fs.NArg() == 0 {
			break
		}
		words = append(words, fs.Arg(0))
		args = fs.Args()[1:]
	}
	query := strings.Join(words, " ")
	if err := source.check(); err != nil {
		return searchUsageError(stderr, strings.TrimPrefix(err.Error(), errToolUsage.Error()+": "))
	}
	switch {
	case *batch != "" && query != "":
		return searchUsageError(stderr, "give either a QUERY or --batch, not both")
	case *batch == "" && strings.TrimSpace(query) == "":
		return searchUsageError(stderr, "a QUERY or --batch is required")
	case *limit < 0:
		return searchUsageError(stderr, catalog.ErrInvalidLimit.Error())
	case *modelView && (*batch != "" || *asJSON):
		return searchUsageError(stderr, "--model-view prints one query's result as the model sees it: no --batch or --json")
	case *explain && (*batch != "" || *modelView):
		return searchUsageError(stderr, "--explain explains one query: no --batch or --model-view")
	case len(explainTools) > 0 && !*explain:
		return searchUsageError(stderr, "--tool goes with --explain")
	}

	tools, release, err := source.load(ctx, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "toolsearch search: %v\n", err)
		return exitFailure
	}
	defer release()
	if *modelView {
		return searchModelView(ctx, source, tools, query, *limit, stdout, stderr)
	}
	cat, err := catalog.New(tools, &catalog.Options{MaxSearchLimit: cliMaxLimit})
	if err != nil {
		fmt.Fprintf(stderr, "toolsearch search: %s: %v\n", source.name(), err)
		return exitFailure
	}

	out := bufio.NewWriter(stdout)
	defer out.Flush()
	if *batch != "" {
		return searchBatch(ctx, cat, *batch, *limit, stdin, out, stderr)
	}
	if *explain {
		return searchExplain(ctx, cat, query, *limit, explainTools, *asJSON, out, stderr)
	}
	hits, err := cat.Search(ctx, query, *limit)
	if err != nil {
		fmt.Fprintf(stderr, "toolsearch search: %v\n", err)
		return exitFailure
	}
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.SetAttributes(attribute.Int("toolsearch.search.hits", len(hits)), attribute.Int("toolsearch.catalog.size", len(tools)))
	}
	if *asJSON {
		return writeLine(out, stderr, query, hits)
	}
	if len(hits) == 0 {
		fmt.Fprintln(out, "no matching tools")
		return exitOK
	}
	for i, h := range hits {
		fmt.Fprintf(out, "%2d. %-50s %8.4f  %s\n", i+1, h.ID, h.Score, firstLine(h.Description, 100))
	}
	return exitOK
}

func searchBatch(ctx context.Context, cat *catalog.Catalog, path string, limit int, stdin io.Reader, out io.Writer, stderr io.Writer) int {
	in := stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			fmt.Fprintf(stderr, "toolsearch search: %v\n", err)
			return exitFailure
		}
		defer f.Close()
		in = f
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var q struct {
			Query *string `json:"query"`
		}
		if err := json.Unmarshal([]byte(line), &q); err != nil || q.Query == nil {
			fmt.Fprintf(stderr, "toolsearch search: %s:%d: want a JSON object with a \"query\" string\n", path, n)
			return exitFailure
		}
		hits, err := cat.Search(ctx, *q.Query, limit)
		if err != nil {
			fmt.Fprintf(stderr, "toolsearch search: %s:%d: %v\n", path, n, err)
			return exitFailure
		}
		if code := writeLine(out, stderr, *q.Query, hits); code != exitOK {
			return code
		}
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintf(stderr, "toolsearch search: %s: %v\n", path, err)
		return exitFailure
	}
	return exitOK
}

func writeLine(out io.Writer, stderr io.Writer, query string, hits []catalog.Hit) int {
	line := searchLine{Query: query, Hits: make([]searchHit, len(hits))}
	for i, h := range hits {
		line.Hits[i] = searchHit{ID: h.ID, Name: h.Name, Score: h.Score}
	}
	b, err := json.Marshal(line)
	if err != nil {
		fmt.Fprintf(stderr, "toolsearch search: %v\n", err)
		return exitFailure
	}
	b = append(b, '\n')
	if _, err := out.Write(b); err != nil {
		fmt.Fprintf(stderr, "toolsearch search: %v\n", err)
		return exitFailure
	}
	return exitOK
}

func searchUsageError(stderr io.Writer, msg string) int {
	fmt.Fprintf(stderr, "toolsearch search: %s (run `toolsearch search --help`)\n", msg)
	return exitUsage
}

// firstLine cuts a description to its first line and n bytes for the plain listing.
func firstLine(s string, n int) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > n {
		s = textcut.Prefix(s, n-len("...")) + "..."
	}
	return s
}

// searchExplain prints catalog.Explain's answer: as one JSON line with --json, else a block per tool.
func searchExplain(ctx context.Context, cat *catalog.Catalog, query string, limit int, tools []string, asJSON bool,
	out io.Writer, stderr io.Writer) int {
	xs, err := cat.Explain(ctx, query, limit, tools...)
	if err != nil {
		fmt.Fprintf(stderr, "toolsearch search: %v\n", err)
		return exitFailure
	}
	if asJSON {
		b, err := json.Marshal(struct {
			Query        string                `json:"query"`
			Explanations []catalog.Explanation `json:"explanations"`
		}{query, xs})
		if err != nil {
			fmt.Fprintf(stderr, "toolsearch search: %v\n", err)
			return exitFailure
		}
		out.Write(append(b, '\n'))
		return exitOK
	}
	if len(xs) == 0 {
		fmt.Fprintln(out, "no matching tools")
		return exitOK
	}
	if xs[0].Long {
		fmt.Fprintln(out, "ranked as a long request (more than six content words)")
	}
	for _, x := range xs {
		place := "no match"
		if x.Rank > 0 {
			place = fmt.Sprintf("rank %d", x.Rank)
		}
		fmt.Fprintf(out, "%s  score %.4f  (%s)\n", x.ID, x.Score, place)
		if x.Exact {
			fmt.Fprintf(out, "  the query names this tool: it ranks first (+%d)\n", 1000)
		}
		if len(x.Features) > 0 {
			order := " (re-scored)"
			if !x.Reranked {
				order = " (below the re-scored tools: first-stage order)"
			}
			fmt.Fprintf(out, "  learned score %.4f = the sum of feature × weight%s:\n", x.Total, order)
			fs := append([]catalog.FeatureContribution(nil), x.Features...)
			sort.SliceStable(fs, func(i, j int) bool { return math.Abs(fs[i].Contribution) > math.Abs(fs[j].Contribution) })
			for _, f := range fs {
				fmt.Fprintf(out, "    %-44s %8.4f × %8.4f = %8.4f\n", f.Name, f.Value, f.Weight, f.Contribution)
			}
		}
		fmt.Fprintf(out, "  first stage %.4f = words %.4f × coverage %.3f (%.0f%% of the query's weighted words) × action %.3f\n",
			x.FirstStage, x.Sum, x.CoverageFactor, 100*x.Coverage, x.ActionFactor)
		if tie := x.Tie; tie != nil {
			with := strings.Join(tie.With[:min(3, len(tie.With))], ", ")
			if tie.Tools-1 > 3 {
				with += fmt.Sprintf(" and %d more", tie.Tools-1-3)
			}
			fmt.Fprintf(out, "  tied on the first stage with %s; placed by %s (unread words of the request in its text: %.4f by idf; its stop words beside the same word in its name: %d)\n",
				with, tie.By, tie.TextWords, tie.NameWords)
		}
		for _, w := range x.Words {
			kind := ""
			if w.Hint {
				kind = " (hint)"
			}
			if w.Term == "" {
				fmt.Fprintf(out, "  %-18s not in this tool%s\n", w.Word, kind)
				continue
			}
			match := w.How
			if w.How != "word" {
				match += " " + w.Term
			}
			line := fmt.Sprintf("  %-18s %-24s in %-28s %8.4f", w.Word, match, strings.Join(w.Fields, ", "), w.Score)
			if w.Bonus != 0 {
				line += fmt.Sprintf(" + %.4f written as in the tool", w.Bonus)
			}
			fmt.Fprintf(out, "%s%s  (coverage weight %.2f)\n", line, kind, w.Weight)
		}
	}
	return exitOK
}
