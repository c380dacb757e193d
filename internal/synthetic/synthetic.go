// Package synthetic generates large, deterministic, realistic-looking tool catalogs for benchmarks and their
// correctness twins (catalog's and bench's). It does not import the catalog, so the catalog's own tests can use it.
package synthetic

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
)

// Tool is one generated tool. Trusted tools stand for plugin tools (openclaw source), the rest for MCP tools.
type Tool struct {
	Name        string
	Description string
	SourceName  string
	Trusted     bool
	Parameters  json.RawMessage
}

// Tools generates n tools that look like a large real catalog: a few thousand services, each with verb_object
// tools, descriptions assembled from domain phrases, and two to five documented parameters. The same n always
// gives the same tools, so a benchmark and its twin see identical data.
func Tools(n int) []Tool {
	r := rand.New(rand.NewPCG(uint64(n), 42))
	syll := []string{"ac", "me", "zo", "ra", "ki", "lo", "nu", "ve", "ta", "sy", "po", "qu", "ex", "bi", "dr", "fi"}
	verbs := []string{"create", "list", "get", "update", "delete", "search", "send", "upload", "download", "sync",
		"archive", "export", "import", "approve", "schedule", "cancel", "start", "stop", "restart", "query"}
	objects := []string{"invoice", "customer", "issue", "message", "channel", "file", "folder", "event", "calendar",
		"ticket", "order", "product", "report", "dashboard", "metric", "alert", "incident", "deployment", "build",
		"container", "pod", "bucket", "object", "table", "record", "row", "document", "page", "comment", "user",
		"team", "project", "task", "note", "contact", "deal", "payment", "refund", "subscription", "webhook",
		"secret", "token", "image", "video", "playlist", "shipment", "inventory", "campaign", "segment", "lead"}
	phrases := []string{"in the workspace", "for the current account", "with optional filters", "by its id",
		"across all projects", "and return the result", "using the service API", "for a date range",
		"with pagination", "and notify the owner", "in bulk", "as JSON", "with retries", "for auditing"}
	params := []string{"id:Identifier of the object", "query:Free text to match", "limit:Maximum number of results",
		"cursor:Pagination cursor", "since:Only items changed after this time", "owner:Owner of the object",
		"status:Status to filter by", "name:Display name", "body:Content in markdown", "tags:Tags to apply",
		"region:Cloud region", "dryRun:Validate without changing anything"}
	services := make([]string, max(n/25, 1))
	for i := range services {
		services[i] = syll[r.IntN(len(syll))] + syll[r.IntN(len(syll))] + syll[r.IntN(len(syll))] + fmt.Sprint(i)
	}
	tools := make([]Tool, n)
	for i := range tools {
		svc := services[i%len(services)]
		verb, obj := verbs[r.IntN(len(verbs))], objects[r.IntN(len(objects))]
		name := fmt.Sprintf("%s_%s_%s_%d", svc, verb, obj, i)
		desc := fmt.Sprintf("%s a %s %s %s. %s %s.", strings.ToUpper(verb[:1])+verb[1:], obj,
			phrases[r.IntN(len(phrases))], phrases[r.IntN(len(phrases))],
			"Works with "+svc, objects[r.IntN(len(objects))]+"s "+phrases[r.IntN(len(phrases))])
		props := map[string]any{}
		for k := 0; k < 2+r.IntN(4); k++ {
			p := strings.SplitN(params[r.IntN(len(params))], ":", 2)
			props[p[0]] = map[string]string{"type": "string", "description": p[1]}
		}
		schema, _ := json.Marshal(map[string]any{"type": "object", "properties": props})
		t := Tool{Name: name, Description: desc, SourceName: svc, Parameters: schema}
		if i%5 == 0 {
			t.Trusted, t.SourceName = true, "plugin-"+svc
		}
		tools[i] = t
	}
	return tools
}

// Queries are the benchmarks' queries: agent phrasing, typos, a partial word, and exactName (a tool name of the
// catalog, which must rank first).
func Queries(exactName string) []string {
	return []string{
		"create an invoice for the customer",
		"list open incidents in the workspace",
		"upload a file to the bucket",
		"send a message to the team channel",
		"cancel the subscription and refund the payment",
		"search documents by tag",
		"restart the failing deployment",
		"shedule an event in the calendar",
		"expor the dashboard as json",
		"delete old rows from the table",
		"which pods are running",
		exactName,
	}
}

// LongQueries are requests written as people write them, longer than six content words: the kind the catalog's
// learned ranking re-scores, which the terse Queries never reach.
func LongQueries() []string {
	return []string{
		"our finance team asked me to create an invoice for the customer who paid late last month and email it today",
		"could you list every open incident in the workspace that was raised by the on-call engineer this week",
		"I need to upload the quarterly report file to the shared bucket before the board meeting tomorrow morning",
		"please send a short message to the team channel saying the release is delayed until friday afternoon",
		"the customer wants to cancel the subscription and get a refund of the last payment they made in march",
		"help me search the archived documents by tag so I can find the contract we signed with the vendor",
		"the deployment of the billing service keeps failing since this morning, restart it and check the logs",
		"shedule an event in the shared calendar for the product review with the design team next tuesday",
	}
}
