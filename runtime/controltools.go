package runtime

import (
	"encoding/json"
	"slices"
)

// This file is the one place that defines what the model reads about the control tools: their names,
// descriptions and JSON Schemas, in OpenAI function format. Every byte here is sent on every turn, so the texts
// say what the model needs to act and nothing more.

// The names of the control tools. No cataloged tool can shadow them in the model's namespace.
const (
	ToolSearchCodeName = "tool_search_code"
	ToolSearchName     = "tool_search"
	ToolDescribeName   = "tool_describe"
	ToolCallName       = "tool_call"
)

// ToolDefinition is one tool as the model sees it, in the OpenAI Chat Completions function format.
type ToolDefinition struct {
	Type     string             `json:"type"` // always "function"
	Function FunctionDefinition `json:"function"`
}

// FunctionDefinition is the function part of a ToolDefinition. Parameters is a JSON Schema object.
type FunctionDefinition struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

const (
	searchCodeDescription = "Run JS/TS over the tool catalog in an isolated sandbox. `code` is an async function " +
		"body (`return` or the last expression gives the result) or one function (called). APIs (Promises): " +
		"`openclaw.tools.search(query, {limit})` → hits `[{id, name, description, input, output?}]` " +
		"(`search({queries: [...]})` runs several); " +
		"`openclaw.tools.describe(id)` → full schemas; " +
		"`openclaw.tools.call(id, args)` → `{tool, result}`, JSON in `result.details`, `result.isError` if it " +
		"failed. Promise.all runs calls in parallel. console.log goes to `logs`."
	// The parameter has no description of its own: the tool's says what `code` is, and the request carries
	// every byte of both on every turn.
	searchCodeParameters = `{"type":"object","properties":{"code":{"type":"string"}},` +
		`"required":["code"],"additionalProperties":false}`

	// codeToolBytes is what the code tool's description and parameters took before they said which script
	// forms work and how a failed tool resolves: saying more must not cost more on every request.
	codeToolBytes = 550 + 187

	searchDescription = "Search the tool catalog. Returns hits `[{id, name, description, input, output?}]`; " +
		"pass a hit's id to tool_call (use tool_describe first when its input is not clear)."
	searchParameters = `{"type":"object","properties":{` +
		`"query":{"type":"string","description":"What the tool should do, or its name."},` +
		`"queries":{"type":"array","items":{"type":"string"},"description":"Several searches at once, instead of query."},` +
		`"limit":{"type":"integer","minimum":1,"description":"Maximum number of hits."}},` +
		`"additionalProperties":false}`

	describeDescription = "Load the full input and output schemas of one tool, by search hit id or exact name."
	describeParameters  = `{"type":"object","properties":{` +
		`"id":{"type":"string","description":"A search hit id, or a tool name."}},` +
		`"required":["id"],"additionalProperties":false}`

	callDescription = "Call one catalog tool by search hit id or exact name. Returns `{tool, result}`; JSON " +
		"values are in `result.details`."
	callParameters = `{"type":"object","properties":{` +
		`"id":{"type":"string","description":"A search hit id, or a tool name."},` +
		`"args":{"type":"object","description":"The tool's arguments."}},` +
		`"required":["id"],"additionalProperties":false}`
)

// controlTools returns the definitions of the control tools a mode shows, in a fixed order.
func controlTools(mode Mode) []ToolDefinition {
	def := func(name, desc, params string) ToolDefinition {
		return ToolDefinition{Type: "function", Function: FunctionDefinition{
			Name: name, Description: desc, Parameters: json.RawMessage(params),
		}}
	}
	switch mode {
	case ModeCode:
		return []ToolDefinition{def(ToolSearchCodeName, searchCodeDescription, searchCodeParameters)}
	case ModeTools, ModeDirectory:
		return []ToolDefinition{
			def(ToolSearchName, searchDescription, searchParameters),
			def(ToolDescribeName, describeDescription, describeParameters),
			def(ToolCallName, callDescription, callParameters),
		}
	}
	return nil
}

// controlToolNames are the control tools of a mode; the run is only compacted when the policy allows all of them.
func controlToolNames(mode Mode) []string {
	var names []string
	for _, d := range controlTools(mode) {
		names = append(names, d.Function.Name)
	}
	return names
}

// allControlToolNames are the control tools of every mode: no cataloged tool may have one of these names.
func allControlToolNames() []string {
	return []string{ToolSearchCodeName, ToolSearchName, ToolDescribeName, ToolCallName}
}

// isControlToolName reports whether name belongs to any mode's control tools.
func isControlToolName(name string) bool {
	return slices.Contains(allControlToolNames(), name)
}
