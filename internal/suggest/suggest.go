// Package suggest finds the closest of a few known names to a misspelt one, for "did you mean" messages.
package suggest

import (
	"math"
	"strings"
)

// Closest returns the candidate nearest to s by edit distance (ignoring case), and that distance; ties go to the
// earlier candidate. It returns "" and -1 when there are no candidates.
func Closest(s string, candidates []string) (best string, distance int) {
	if len(candidates) == 0 {
		return "", -1
	}
	distance = math.MaxInt
	for _, c := range candidates {
		if d := Distance(strings.ToLower(s), strings.ToLower(c)); d < distance {
			best, distance = c, d
		}
	}
	return best, distance
}

// Distance is the Levenshtein distance between a and b, counted in bytes, with one row of memory.
func Distance(a, b string) int {
	row := make([]int, len(b)+1)
	for j := range row {
		row[j] = j
	}
	for i := 1; i <= len(a); i++ {
		prev := row[0]
		row[0] = i
		for j := 1; j <= len(b); j++ {
			cur := row[j]
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			row[j] = min(row[j]+1, row[j-1]+1, prev+cost)
			prev = cur
		}
	}
	return row[len(b)]
}
