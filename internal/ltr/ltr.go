// Package ltr connects the trainer of the catalog's learned ranking (internal/learn) to the catalog, without
// adding training entry points to the catalog's public API: package catalog fills in the hooks below when it is
// initialised, and the trainer, which imports both, calls them. Nothing else uses it.
package ltr

// Candidate is one tool the first stage found for a request, with the learned ranking's features.
type Candidate struct {
	Doc   int       // the tool's position in the catalog file
	Exact bool      // the request names the tool: it ranks first whatever its score
	First float32   // the first stage's score
	X     []float32 // the features, in the order of FeatureNames
}

// Ranker is one catalog as the trainer sees it.
type Ranker interface {
	// Candidates returns the first stage's best Depth tools for query with their features, best first: the
	// ranking the catalog had before its learned one; long reports a long request, the only kind the learned
	// ranking re-scores (a terse query keeps the first stage's order).
	Candidates(query string) (cands []Candidate, long bool)
	// Order sorts cands as the catalog's learned ranking does with the weights w (one per feature).
	Order(cands []Candidate, w []float32)
}

// The hooks, set by package catalog.
var (
	// Build parses a catalog file (as catalog.ParseFile reads it) and indexes it.
	Build func(catalogFile []byte) (Ranker, error)
	// FeatureNames names the features, in order.
	FeatureNames []string
	// Depth is how many of the first stage's tools the learned ranking re-scores.
	Depth int
)
