package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/internal/devset"
)

// writeToolBench writes the six files of StableToolBench's format into a new directory: the first holds body, the
// others no request.
func writeToolBench(t *testing.T, body string) string {
	dir := t.TempDir()
	for i, f := range toolBenchFiles {
		data := "[]"
		if i == 0 {
			data = body
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, f+".json"), []byte(data), 0o644))
	}
	return dir
}

// A request's offered APIs become tools named as ToolLens names them, an API offered twice is one tool, two
// names that make the same safe name stay apart, and every relevant API is a need of its own.
func TestLoadToolBench(t *testing.T) {
	dir := writeToolBench(t, `[
	 {"query": "I'm planning a trip to Paris: find flights and the weather there.",
	  "api_list": [
	   {"tool_name": "Sky Scanner", "api_name": "Search Flights", "api_description": "Find flights.",
	    "required_parameters": [{"name": "from", "type": "STRING", "description": "origin airport"}],
	    "optional_parameters": [{"name": "adults", "type": "NUMBER", "description": ""}]},
	   {"tool_name": "Weather!", "api_name": "Forecast", "api_description": "Daily forecast.",
	    "required_parameters": [], "optional_parameters": []},
	   {"tool_name": "Weather?", "api_name": "Forecast", "api_description": "Another forecast.",
	    "required_parameters": [], "optional_parameters": []}],
	  "relevant APIs": [["Sky Scanner", "Search Flights"], ["Weather?", "Forecast"]]},
	 {"query": "What will the weather be in Rome tomorrow, and in Milan the day after?",
	  "api_list": [{"tool_name": "Weather!", "api_name": "Forecast", "api_description": "Changed.",
	    "required_parameters": [], "optional_parameters": []}],
	  "relevant APIs": [["Weather!", "Forecast"]]}
	]`)
	s, err := loadToolBench(dir)
	require.NoError(t, err)
	tools, err := catalog.ParseFile(s.Catalog)
	require.NoError(t, err)
	var names []string
	ids := make([]string, len(tools))
	for i := range tools {
		names = append(names, tools[i].Name)
		ids[i] = tools[i].ID()
	}
	assert.Equal(t, []string{"search_flights_for_sky_scanner", "forecast_for_weather", "forecast_for_weather_2"}, names)
	assert.Equal(t, "Weather!: Daily forecast.", tools[1].Description, "the first definition offered wins")
	assert.JSONEq(t, `{"type":"object","properties":{"from":{"type":"string","description":"origin airport"},"adults":{"type":"number"}},"required":["from"]}`,
		string(tools[0].Parameters))
	require.NoError(t, s.Resolve(ids))
	require.Len(t, s.Queries, 2)
	assert.Equal(t, []devset.Need{{Keys: []string{"search_flights_for_sky_scanner"}, Tools: []int{0}}, {Keys: []string{"forecast_for_weather_2"}, Tools: []int{2}}},
		s.Queries[0].Needs)
	assert.Equal(t, []int{1}, s.Queries[1].Needs[0].Tools)
}

func TestLoadToolBenchRefusesBadData(t *testing.T) {
	_, err := loadToolBench(t.TempDir())
	require.ErrorIs(t, err, os.ErrNotExist, "a directory without the files")
	_, err = loadToolBench(writeToolBench(t, `[{"query": "q", "api_list": [], "relevant APIs": [["A", "b"]]}]`))
	require.ErrorContains(t, err, "not offered")
	_, err = loadToolBench(writeToolBench(t, `[{"query": " ", "api_list": [], "relevant APIs": []}]`))
	require.Error(t, err)
	_, err = loadToolBench(writeToolBench(t, `{"not": "an array"}`))
	require.Error(t, err)
}

// The real data, when TOOLSEARCH_TOOLBENCH points at it: 765 requests over 2,479 tools, every one resolving.
func TestLoadToolBenchReal(t *testing.T) {
	dir := os.Getenv("TOOLSEARCH_TOOLBENCH")
	if dir == "" {
		t.Skip("TOOLSEARCH_TOOLBENCH is not set (StableToolBench's solvable_queries/test_instruction)")
	}
	s, err := loadToolBench(dir)
	require.NoError(t, err)
	tools, err := catalog.ParseFile(s.Catalog)
	require.NoError(t, err)
	ids := make([]string, len(tools))
	for i := range tools {
		ids[i] = tools[i].ID()
	}
	require.NoError(t, s.Resolve(ids))
	assert.Len(t, tools, 2479)
	assert.Len(t, s.Queries, 765)
}

func TestMissesRule(t *testing.T) {
	m := func(h1, h5 float64) devset.Metrics { return devset.Metrics{Hit1: h1, Hit5: h5} }
	today, bm25 := m(0.60, 0.80), m(0.50, 0.85)
	assert.Empty(t, missesRule(m(0.60, 0.85), today, bm25), "at the first stage, BM25 + 0.05 and BM25's hit@5")
	assert.Contains(t, missesRule(m(0.59, 0.90), today, bm25), "first stage")
	assert.Contains(t, missesRule(m(0.70, 0.84), today, bm25), "hit@5")
	assert.Contains(t, missesRule(m(0.54, 0.90), m(0.40, 0.5), bm25), "plain BM25's + 0.05")
}

func TestThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 2479: "2,479", 1234567: "1,234,567", -1000: "-1,000"} {
		assert.Equal(t, want, thousands(n))
	}
}
