package catalog_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/toolsearch/toolsearch/catalog"
)

func exampleTools() []catalog.Tool {
	return []catalog.Tool{
		{Source: catalog.SourceOpenClaw, SourceName: "core", Name: "web_search",
			Description: "Search the web and return titles, URLs and snippets.", Groups: []string{"web"}},
		{Source: catalog.SourceOpenClaw, SourceName: "core", Name: "exec", Description: "Run a shell command."},
		{Source: catalog.SourceMCP, SourceName: "github", Name: "create_issue",
			Description: "Create a new issue in a GitHub repository.",
			Parameters:  json.RawMessage(`{"type":"object","properties":{"title":{"type":"string"}}}`)},
		{Source: catalog.SourceMCP, SourceName: "playwright", Name: "browser_take_screenshot",
			Description: "Take a screenshot of the current page."},
	}
}

func ExampleNew() {
	cat, err := catalog.New(exampleTools(), &catalog.Options{
		Policy: &catalog.Policy{Session: catalog.Rule{Deny: []string{"exec"}}},
	})
	if err != nil {
		panic(err)
	}
	for _, t := range cat.Tools() {
		fmt.Println(t.ID())
	}
	_, err = cat.Lookup("exec")
	var unknown *catalog.UnknownToolError
	fmt.Println(errors.As(err, &unknown))
	// Output:
	// mcp:github:create_issue
	// mcp:playwright:browser_take_screenshot
	// openclaw:core:web_search
	// true
}

func ExampleCatalog_Search() {
	cat, err := catalog.New(exampleTools(), nil)
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	for _, q := range []string{"sceenshot of the page", "open a github issue", "nothing matches this"} {
		hits, err := cat.Search(ctx, q, 3)
		if err != nil {
			panic(err)
		}
		fmt.Printf("%q:", q)
		for _, h := range hits {
			fmt.Printf(" %s (input %s)", h.ID, h.Input)
		}
		fmt.Println()
	}
	// Output:
	// "sceenshot of the page": mcp:playwright:browser_take_screenshot (input unknown)
	// "open a github issue": mcp:github:create_issue (input unknown)
	// "nothing matches this":
}

func ExampleCatalog_Lookup() {
	cat, err := catalog.New(exampleTools(), nil)
	if err != nil {
		panic(err)
	}
	_, err = cat.Lookup("web_serch")
	var unknown *catalog.UnknownToolError
	if errors.As(err, &unknown) {
		// Suggest is a separate, bounded step: the caller says which tools may be named (its current policy).
		unknown.Suggestions = cat.Suggest(context.Background(), unknown.Query, nil)
	}
	fmt.Println(err)
	// Output:
	// Unknown tool id: web_serch. Did you mean: openclaw:core:web_search? Search the catalog and use an exact id from the results.
}

func ExampleCache_Get() {
	cache := catalog.NewCache(nil)
	first, reused, _ := cache.Get("session-1", exampleTools(), nil)
	fmt.Println(reused)
	again, reused, _ := cache.Get("session-1", exampleTools(), nil)
	fmt.Println(reused, first == again)
	_, _, err := cache.Get("", exampleTools(), nil)
	fmt.Println(err)
	// Output:
	// false
	// true true
	// catalog: a run or session scope is required
}
