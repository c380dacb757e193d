package catalog

import (
	"errors"
	"strings"

	"github.com/toolsearch/toolsearch/internal/textcut"
)

// Sentinel errors. Their text may reach the model, so it says how to recover.
var (
	// ErrInvalidLimit is returned for a negative search limit (zero means the default).
	ErrInvalidLimit = errors.New("limit must be a positive integer.")
	// ErrNoScope is returned by Cache.Get for an empty scope: a catalog without a run or session is refused
	// rather than shared.
	ErrNoScope = errors.New("catalog: a run or session scope is required")
	// ErrTooManyQueries is returned by SearchBatch for more than MaxBatchQueries queries.
	ErrTooManyQueries = errors.New("too many queries: at most 16 per batch.")
	// ErrDuplicateTool is wrapped by New when two tools share an id.
	ErrDuplicateTool = errors.New("catalog: duplicate tool id")
	// ErrInvalidTool is wrapped by ParseFile for an entry it cannot read, and by every *ToolError: why New left
	// a tool out of the catalog (see Catalog.Rejected).
	ErrInvalidTool = errors.New("catalog: invalid tool")
	// ErrInvalidPolicy is wrapped by Policy.Validate.
	ErrInvalidPolicy = errors.New("catalog: invalid policy")
)

// MaxBatchQueries is how many queries one SearchBatch accepts.
const MaxBatchQueries = 16

// recoverHint ends every unknown-tool message: it tells the model what to do next.
const recoverHint = "Search the catalog and use an exact id from the results."

// maxQuotedQuery is how much of an unknown id an error message repeats.
const maxQuotedQuery = 200

// UnknownToolError is returned by Lookup, Describe (and the runtime's call) when no cataloged tool has the id or
// name. A tool the policy denies is unknown too: the model must not learn that it exists.
type UnknownToolError struct {
	Query       string
	Suggestions []string // at most three ids, closest first; Lookup leaves it empty, Catalog.Suggest fills it
}

func (e *UnknownToolError) Error() string {
	var b strings.Builder
	b.WriteString("Unknown tool id: ")
	// The query is what the model (or a script) sent, and can be megabytes: the message quotes enough of it.
	b.WriteString(textcut.Prefix(e.Query, maxQuotedQuery))
	if len(e.Query) > maxQuotedQuery {
		b.WriteString(CutMarker)
	}
	b.WriteString(". ")
	if len(e.Suggestions) > 0 {
		b.WriteString("Did you mean: ")
		b.WriteString(strings.Join(e.Suggestions, ", "))
		b.WriteString("? ")
	}
	b.WriteString(recoverHint)
	return b.String()
}

// AmbiguousToolError is returned when a bare name matches several cataloged tools.
type AmbiguousToolError struct {
	Name string
	IDs  []string // sorted
}

func (e *AmbiguousToolError) Error() string {
	return "Ambiguous tool name: " + e.Name + "; use an exact tool id."
}
