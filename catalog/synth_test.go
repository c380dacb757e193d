package catalog

import "github.com/toolsearch/toolsearch/internal/synthetic"

// synthTools adapts the shared generator (internal/synthetic, also used by bench/) to catalog tools: trusted ones
// stand for plugin tools, the rest for MCP tools.
func synthTools(n int) []Tool {
	gen := synthetic.Tools(n)
	tools := make([]Tool, len(gen))
	for i, g := range gen {
		src := SourceMCP
		if g.Trusted {
			src = SourceOpenClaw
		}
		tools[i] = Tool{Source: src, SourceName: g.SourceName, Name: g.Name, Description: g.Description, Parameters: g.Parameters}
	}
	return tools
}

func synthQueries(tools []Tool) []string {
	return synthetic.Queries(tools[len(tools)/2].Name)
}
