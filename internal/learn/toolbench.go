package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/toolsearch/toolsearch/internal/devset"
)

// toolBenchFiles are the files of StableToolBench's solvable_queries/test_instruction, read in this order.
var toolBenchFiles = []string{"G1_instruction", "G1_category", "G1_tool", "G2_instruction", "G2_category", "G3_instruction"}

// loadToolBench reads the solvable ToolBench requests as StableToolBench (THUNLP-MT/StableToolBench, Apache-2.0;
// its queries and RapidAPI tools are ToolBench's, OpenBMB/ToolBench, Apache-2.0) keeps them in
// solvable_queries/test_instruction: each file is a JSON array of requests, each with the APIs offered to it
// (api_list) and the ones it needs (relevant APIs). The catalog is every API offered to any request, named as the
// ToolLens training set names them (<api_name>_for_<tool_name>, made safe and lower-cased), described as
// "<tool_name>: <api_description>"; every relevant API is a need of its own. The data is read where it is, never
// copied into the repository.
func loadToolBench(dir string) (devset.Set, error) {
	type api struct {
		Tool        string       `json:"tool_name"`
		API         string       `json:"api_name"`
		Description string       `json:"api_description"`
		Required    []rapidParam `json:"required_parameters"`
		Optional    []rapidParam `json:"optional_parameters"`
	}
	type request struct {
		Query    string      `json:"query"`
		APIs     []api       `json:"api_list"`
		Relevant [][2]string `json:"relevant APIs"`
	}
	type entry struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	var (
		entries []entry
		names   = map[[2]string]string{} // (tool, api) → entry name
		taken   = map[string]bool{}
		queries []devset.Query
	)
	for _, f := range toolBenchFiles {
		data, err := os.ReadFile(filepath.Join(dir, f+".json"))
		if err != nil {
			return devset.Set{}, fmt.Errorf("toolbench: %w", err)
		}
		var reqs []request
		if err := json.Unmarshal(data, &reqs); err != nil {
			return devset.Set{}, fmt.Errorf("toolbench: %s: %w", f, err)
		}
		for ri, r := range reqs {
			for _, a := range r.APIs {
				key := [2]string{a.Tool, a.API}
				if _, ok := names[key]; ok {
					continue // the first definition offered wins
				}
				name := safeName(a.API + "_for_" + a.Tool)
				for i := 2; taken[name]; i++ {
					name = fmt.Sprintf("%s_%d", safeName(a.API+"_for_"+a.Tool), i)
				}
				taken[name] = true
				names[key] = name
				schema, err := paramSchema(a.Required, a.Optional)
				if err != nil {
					return devset.Set{}, fmt.Errorf("toolbench: %s: %w", f, err)
				}
				entries = append(entries, entry{Name: name, Description: strings.TrimSpace(a.Tool + ": " + a.Description), InputSchema: schema})
			}
			q := devset.Query{Text: r.Query, Kind: f}
			for _, rel := range r.Relevant {
				name, ok := names[rel]
				if !ok {
					return devset.Set{}, fmt.Errorf("toolbench: %s: request %d needs %q of %q, which it was not offered", f, ri, rel[1], rel[0])
				}
				q.Needs = append(q.Needs, devset.Need{Keys: []string{name}})
			}
			if strings.TrimSpace(q.Text) == "" || len(q.Needs) == 0 {
				return devset.Set{}, fmt.Errorf("toolbench: %s: request %d has no text or no relevant API", f, ri)
			}
			queries = append(queries, q)
		}
	}
	file, err := json.Marshal(entries)
	if err != nil {
		return devset.Set{}, err
	}
	return devset.New("toolbench", fmt.Sprintf("%s RapidAPI tools, %d long requests with 1-6 needs (ToolBench, StableToolBench's solvable set)", thousands(len(entries)), len(queries)), file, queries)
}

// safeName lower-cases s and keeps letters, digits, '_' and '-', every other run of characters one '_', at most
// 100 bytes.
func safeName(s string) string {
	var b strings.Builder
	under := false
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			b.WriteRune(r)
			under = r == '_'
			continue
		}
		if !under && b.Len() > 0 {
			b.WriteByte('_')
			under = true
		}
	}
	out := strings.Trim(b.String(), "_")
	if len(out) > 100 {
		out = out[:100]
	}
	if out == "" {
		out = "api"
	}
	return out
}

// rapidParam is a parameter of a RapidAPI endpoint as ToolBench describes it.
type rapidParam struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Description string `json:"description"`
}

// paramSchema is a JSON Schema object of the required and optional parameters, RapidAPI's types mapped to JSON
// Schema's (anything else is a string); a name given twice keeps its first definition.
func paramSchema(required, optional []rapidParam) (json.RawMessage, error) {
	props := map[string]map[string]string{}
	var req []string
	add := func(ps []rapidParam, isReq bool) {
		for _, p := range ps {
			if p.Name == "" {
				continue
			}
			t := "string"
			switch strings.ToUpper(p.Type) {
			case "NUMBER", "INTEGER":
				t = "number"
			case "BOOLEAN":
				t = "boolean"
			}
			prop := map[string]string{"type": t}
			if d := strings.TrimSpace(p.Description); d != "" {
				prop["description"] = d
			}
			if _, dup := props[p.Name]; dup {
				continue
			}
			props[p.Name] = prop
			if isReq {
				req = append(req, p.Name)
			}
		}
	}
	add(required, true)
	add(optional, false)
	schema := map[string]any{"type": "object", "properties": props}
	if len(req) > 0 {
		schema["required"] = req
	}
	return json.Marshal(schema)
}

// thousands writes n with a comma between each three digits, as the other sets' descriptions do.
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
