package devset

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The metric definitions on hand-checked rankings: two needs, one met first and one met fourth; one need met
// sixth (inside MRR@10, outside hit@5); one need never met.
func TestScore(t *testing.T) {
	qs := []Query{
		{Text: "a", Needs: []Need{{Tools: []int{1}}, {Tools: []int{9, 4}}}},
		{Text: "b", Needs: []Need{{Tools: []int{7}}}},
		{Text: "c", Needs: []Need{{Tools: []int{8}}}},
	}
	rank := map[string][]int{
		"a": {1, 2, 3, 4, 5},
		"b": {0, 1, 2, 3, 5, 7},
		"c": {0, 1},
	}
	m, misses := Score(qs, func(q string) []int { return rank[q] })
	assert.Equal(t, 3, m.N)
	assert.InDelta(t, 1.0/3, m.Hit1, 1e-9, "only a's first result meets a need")
	assert.InDelta(t, (1.0+0+0)/3, m.Hit5, 1e-9, "a has both needs in the top five")
	assert.InDelta(t, 1.0/3, m.All5, 1e-9)
	assert.InDelta(t, (1+1.0/6)/3, m.MRR, 1e-9, "b's need is sixth")
	require.Len(t, misses, 2)
	assert.Equal(t, 6, misses[0].FirstRank)
	assert.Equal(t, 0, misses[1].FirstRank)

	half, _ := Score(qs[:1], func(string) []int { return []int{1, 2, 3, 5, 6, 4} })
	assert.InDelta(t, 0.5, half.Hit5, 1e-9, "one of two needs in the top five")
	assert.Zero(t, half.All5)
}

// Every set under catalog/testdata loads, and a gold label that names no tool is an error, not a silent miss.
func TestLoadAndResolve(t *testing.T) {
	sets, err := Load("../../catalog/testdata", true)
	require.NoError(t, err)
	names := map[string]bool{}
	for _, s := range sets {
		names[s.Name] = true
		require.NotEmpty(t, s.Queries, s.Name)
	}
	for _, want := range []string{"dev", "dev-fresh", "metatool", "multineed-dev", "multineed-holdout", "bfcl-live"} {
		assert.True(t, names[want], want)
	}
	s := Set{Name: "x", keys: []string{"a", "b"}, Queries: []Query{{Text: "q", Needs: []Need{{Keys: []string{"c"}}}}}}
	require.ErrorContains(t, s.Resolve([]string{"id:a", "id:b"}), `no tool "c"`)
	s.Queries[0].Needs[0].Keys = []string{"b"}
	require.NoError(t, s.Resolve([]string{"id:a", "id:b"}))
	assert.Equal(t, []int{1}, s.Queries[0].Needs[0].Tools)
}

// A set built in memory resolves its queries by the entries' names, and a catalog that is not a JSON array of
// entries is an error.
func TestNew(t *testing.T) {
	s, err := New("mem", "two tools", []byte(`[{"name":"a"},{"name":"b"}]`), []Query{{Text: "q", Needs: []Need{{Keys: []string{"b"}}}}})
	require.NoError(t, err)
	require.NoError(t, s.Resolve([]string{"client:a", "client:b"}))
	assert.Equal(t, []int{1}, s.Queries[0].Needs[0].Tools)
	_, err = New("mem", "", []byte(`{"tools":[]}`), nil)
	require.Error(t, err)
	s, err = New("mem", "", []byte(`[{"name":"a"}]`), []Query{{Text: "q", Needs: []Need{{Keys: []string{"zzz"}}}}})
	require.NoError(t, err)
	require.Error(t, s.Resolve([]string{"client:a"}), "a gold name no tool has")
}
