package runtime

import (
	"encoding/json"

	"github.com/toolsearch/toolsearch/catalog"
)

// TranscriptEntry is one tool call ("assistant") or tool result ("tool") of a session transcript.
type TranscriptEntry struct {
	Role         string          `json:"role"`
	CallID       string          `json:"callId"`
	ParentCallID string          `json:"parentCallId,omitempty"`
	ToolName     string          `json:"toolName"`
	ToolID       string          `json:"toolId,omitempty"`
	Source       catalog.Source  `json:"source,omitempty"`
	Arguments    json.RawMessage `json:"arguments,omitempty"`
	Content      string          `json:"content,omitempty"`
	Details      json.RawMessage `json:"details,omitempty"`
	IsError      bool            `json:"isError,omitempty"`
	Blocked      bool            `json:"blocked,omitempty"`
}

// Roles of transcript entries.
const (
	RoleAssistant = "assistant" // a tool call
	RoleTool      = "tool"      // its result
)

// Project is the transcript projection of one executed call: the call and its result, then each
// hidden call made through it as its own call/result pair, in the order they were started. Execute writes these
// entries to the session log; a gateway may also use them for its own transcript or UI. The model itself only
// ever sees the wrapper's result.
func Project(call ToolCall, res *CallResult) []TranscriptEntry {
	args, _ := normalizeArgs(call.Arguments)
	if args == nil {
		args = append(json.RawMessage(nil), call.Arguments...)
		if !json.Valid(args) {
			args, _ = json.Marshal(string(call.Arguments))
		}
	}
	out := []TranscriptEntry{
		{Role: RoleAssistant, CallID: call.ID, ToolName: call.Name, Arguments: args},
		{Role: RoleTool, CallID: call.ID, ToolName: call.Name, Content: res.Content, IsError: res.IsError, Blocked: res.Blocked},
	}
	for _, h := range res.Hidden {
		out = append(out,
			TranscriptEntry{Role: RoleAssistant, CallID: h.ID, ParentCallID: h.ParentID, ToolName: h.Name,
				ToolID: h.ToolID, Source: h.Source, Arguments: h.Arguments},
			TranscriptEntry{Role: RoleTool, CallID: h.ID, ParentCallID: h.ParentID, ToolName: h.Name,
				ToolID: h.ToolID, Source: h.Source, Content: h.Result.Content, Details: h.Result.Details,
				IsError: h.Result.IsError, Blocked: h.Result.Blocked},
		)
	}
	return out
}
