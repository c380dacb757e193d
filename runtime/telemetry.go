package runtime

import (
	"context"
	"time"

	"github.com/toolsearch/toolsearch/catalog"
)

// maxCallRecords bounds the per-run list of calls kept for telemetry; the counters stay exact beyond it.
const maxCallRecords = 1000

// SourceCounts is how many cataloged tools each source contributes.
type SourceCounts struct {
	OpenClaw int `json:"openclaw"`
	MCP      int `json:"mcp"`
	Client   int `json:"client"`
}

// CodeTelemetry is the telemetry object of a tool_search_code result: the run's catalog and the
// searches, describes and calls it has made so far.
type CodeTelemetry struct {
	CatalogSize   int          `json:"catalogSize"`
	Sources       SourceCounts `json:"sources"`
	SearchCount   int64        `json:"searchCount"`
	DescribeCount int64        `json:"describeCount"`
	CallCount     int64        `json:"callCount"`
}

// CallRecord is one final tool call: a real tool that went through the pipeline, whichever way the model reached
// it.
type CallRecord struct {
	CallID        string         `json:"callId"`
	ParentCallID  string         `json:"parentCallId,omitempty"`
	ToolID        string         `json:"toolId"`
	Name          string         `json:"name"`
	Source        catalog.Source `json:"source"`
	SourceName    string         `json:"sourceName"`
	Via           Via            `json:"via"`
	IsError       bool           `json:"isError,omitempty"`
	Blocked       bool           `json:"blocked,omitempty"`
	Error         string         `json:"error,omitempty"`
	ArgumentBytes int            `json:"argumentBytes"`
	Duration      time.Duration  `json:"durationNs"`
	// Decision is what the policy and the approver made of the call.
	Decision CallDecision `json:"decision"`
}

// CallDecision is what the policy and the approver decided about one call, for telemetry, session logs and the
// log line of the call. It never holds argument values.
type CallDecision struct {
	// Policy is PolicyAllowed or PolicyDenied ("" when the call failed before the policy was asked, for
	// arguments that could not be read).
	Policy string `json:"policy,omitempty"`
	// Rule names the policy rule that denied the call, asked for approval, or lifted an ask (see
	// catalog.Verdict.String): `denied by agent deny "*_delete*"`, `ask by agent ask "annotation:destructive"`.
	Rule string `json:"rule,omitempty"`
	// ApprovalRequired is set when the call could not run without consent: Rule asks, or DefinitionChanged.
	ApprovalRequired bool `json:"approvalRequired,omitempty"`
	// DefinitionChanged is set when the tool's pinned definition changed.
	DefinitionChanged bool `json:"definitionChanged,omitempty"`
	// Approval is what became of the approval step: one of the Approval constants, or "" when no approver was
	// asked and none was needed.
	Approval string `json:"approval,omitempty"`
	// By is who decided (Decision.By: "terminal", "--yes", "elicitation:<client>"), when the approver said.
	By string `json:"by,omitempty"`
	// Waited is how long the approver took.
	Waited time.Duration `json:"waitedNs,omitempty"`
}

// The values of CallDecision.Policy.
const (
	PolicyAllowed = "allowed"
	PolicyDenied  = "denied"
)

// The values of CallDecision.Approval.
const (
	ApprovalApproved = "approved"
	ApprovalDeclined = "declined"
	// ApprovalChangeRefused: the approver allowed the call but did not accept the tool's changed definition.
	ApprovalChangeRefused = "change not accepted"
	ApprovalTimedOut      = "timed out"
	ApprovalFailed        = "failed"    // the approver returned an error or panicked
	ApprovalAbandoned     = "abandoned" // the turn ended while waiting
	// ApprovalNotAsked: approval was needed and nobody could be asked (no approver, an approver that said so,
	// Decision.NotAsked, or the approvals of one tool_search_code run had used up approvalTimeoutMs).
	ApprovalNotAsked = "not asked"
)

// SandboxUsage sums what the run's tool_search_code executions consumed.
type SandboxUsage struct {
	Runs            int           `json:"runs"`
	Fuel            uint64        `json:"fuel"`
	Wall            time.Duration `json:"wallNs"`
	PeakMemoryBytes uint64        `json:"peakMemoryBytes"`
}

// RequestStats are the serialized sizes of one provider request, as the gateway measured them.
type RequestStats struct {
	Bytes       int `json:"bytes"`       // the whole serialized request
	ToolBytes   int `json:"toolBytes"`   // the tool definitions
	PromptBytes int `json:"promptBytes"` // the system prompt and messages
	ToolCount   int `json:"toolCount"`   // tool definitions declared
}

// Telemetry is a snapshot of a run: what the model was shown, what it searched, described and called, what
// was repaired, and what the sandbox and the provider requests cost.
type Telemetry struct {
	Mode          Mode         `json:"mode"`
	RequestedMode Mode         `json:"requestedMode"`
	NotApplied    string       `json:"notApplied,omitempty"`
	CatalogSize   int          `json:"catalogSize"`
	Sources       SourceCounts `json:"sources"`
	VisibleTools  int          `json:"visibleTools"`
	SearchCount   int64        `json:"searchCount"`
	DescribeCount int64        `json:"describeCount"`
	CallCount     int64        `json:"callCount"`
	Calls         []CallRecord `json:"calls"`
	// RepairCount is how many mistakes in the model's requests were repaired (see Repair); Repairs lists them.
	RepairCount int64          `json:"repairCount"`
	Repairs     []Repair       `json:"repairs"`
	Sandbox     SandboxUsage   `json:"sandbox"`
	Requests    []RequestStats `json:"requests"`
}

// Telemetry returns a snapshot of the run's counters and records.
func (r *Run) Telemetry() Telemetry {
	r.mu.Lock()
	defer r.mu.Unlock()
	return Telemetry{
		Mode:          r.mode,
		RequestedMode: r.requestedMode,
		NotApplied:    r.notApplied,
		CatalogSize:   r.catalogSize(),
		Sources:       r.sources(),
		VisibleTools:  len(r.visible),
		SearchCount:   r.searches.Load(),
		DescribeCount: r.describes.Load(),
		CallCount:     r.calls.Load(),
		Calls:         append([]CallRecord{}, r.callLog...),
		RepairCount:   r.repairCount,
		Repairs:       append([]Repair{}, r.repairs...),
		Sandbox:       r.usage,
		Requests:      append([]RequestStats{}, r.requests...),
	}
}

func (r *Run) codeTelemetry() *CodeTelemetry {
	return &CodeTelemetry{
		CatalogSize:   r.catalogSize(),
		Sources:       r.sources(),
		SearchCount:   r.searches.Load(),
		DescribeCount: r.describes.Load(),
		CallCount:     r.calls.Load(),
	}
}

// RecordRequest records the sizes of one provider request of this run (the gateway measures them), for
// Telemetry and the session log.
func (r *Run) RecordRequest(s RequestStats) {
	r.mu.Lock()
	r.requests = append(r.requests, s)
	r.mu.Unlock()
	r.record(Record{Type: RecordRequest, Request: &s})
}

// countCall adds a final call to the counters, the telemetry list, the log and the session log.
func (r *Run) countCall(ctx context.Context, c CallRecord) {
	r.calls.Add(1)
	if cat := r.cur().cat; cat != nil {
		cat.RecordCall()
	}
	r.mu.Lock()
	if len(r.callLog) < maxCallRecords {
		r.callLog = append(r.callLog, c)
	}
	r.mu.Unlock()
	r.recordIn(ctx, Record{Type: RecordCall, Call: &c})
	r.rt.log.Info("tool search: tool call", "session", r.req.SessionID, "run", r.req.RunID, "call", c.CallID,
		"tool", c.ToolID, "source", c.Source, "via", c.Via, "isError", c.IsError, "blocked", c.Blocked,
		"duration", c.Duration, "policy", c.Decision.Policy, "rule", c.Decision.Rule,
		"approval", c.Decision.Approval, "by", c.Decision.By, "waited", c.Decision.Waited)
}

func (r *Run) addUsage(u SandboxUsage) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.usage.Runs += u.Runs
	r.usage.Fuel += u.Fuel
	r.usage.Wall += u.Wall
	r.usage.PeakMemoryBytes = max(r.usage.PeakMemoryBytes, u.PeakMemoryBytes)
}

// noteRepairs records the mistakes repaired in one request of the model, in the telemetry, the session log and
// the log, so that a deployment can see which mistakes its model makes.
func (r *Run) noteRepairs(ctx context.Context, callID string, via Via, o op, toolID string, reps []repair) {
	for _, rp := range reps {
		rec := Repair{CallID: callID, Via: via, Op: string(o), ToolID: toolID, Kind: rp.kind, Detail: rp.detail}
		r.mu.Lock()
		r.repairCount++
		if len(r.repairs) < maxCallRecords {
			r.repairs = append(r.repairs, rec)
		}
		r.mu.Unlock()
		r.recordIn(ctx, Record{Type: RecordRepair, Repair: &rec})
		r.noteRepair(ctx, &rec)
		r.rt.log.Info("tool search: repaired a request", "session", r.req.SessionID, "run", r.req.RunID,
			"call", callID, "op", o, "tool", toolID, "kind", rp.kind, "detail", rp.detail)
	}
}
