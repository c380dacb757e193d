// Package config is the home of toolsearch's config file. Import (import.go) moves the MCP servers of another
// client's config file (Claude Desktop, Claude Code, Cursor, VS Code, Windsurf, Gemini CLI) into a toolsearch
// config, and makes `toolsearch mcp serve` that client's only MCP server.
package config
