package hostfns

import (
	"context"
	"errors"

	"github.com/toolsearch/toolsearch/wasm"
)

// ErrorInfo is the JSON form of a failed run, as the model and the CLI see it.
type ErrorInfo struct {
	// Kind is one of timeout, fuel, memory, stack, output, result, source, calls (limits), syntax, exception
	// (script errors), exit (the script ended the sandbox), crash (the interpreter itself failed on what the
	// script did: a guest trap), canceled, unavailable (no sandbox on this host) or internal (a failure of the
	// host, never something a script can cause).
	Kind    string `json:"kind"`
	Message string `json:"message"`
	Line    int    `json:"line,omitempty"`
	Stack   string `json:"stack,omitempty"`
}

// Describe turns an error from Run into its ErrorInfo.
func Describe(err error) ErrorInfo {
	var limit *wasm.LimitError
	var script *wasm.ScriptError
	switch {
	case errors.As(err, &limit):
		return ErrorInfo{Kind: string(limit.Kind), Message: limit.Error()}
	case errors.As(err, &script):
		kind := "exception"
		if script.IsSyntax() {
			kind = "syntax"
		}
		return ErrorInfo{Kind: kind, Message: script.Error(), Line: script.Line, Stack: script.Stack}
	case errors.Is(err, wasm.ErrExit):
		return ErrorInfo{Kind: "exit", Message: err.Error()}
	case errors.Is(err, wasm.ErrTrap):
		// The wasm stack trace in err means nothing to the model; the instance is gone, the host is fine.
		return ErrorInfo{Kind: "crash", Message: "the script crashed the JavaScript interpreter (a guest trap); the sandbox was discarded"}
	case errors.Is(err, context.Canceled):
		return ErrorInfo{Kind: "canceled", Message: "the run was cancelled"}
	case errors.Is(err, wasm.ErrStartup):
		return ErrorInfo{Kind: "unavailable", Message: err.Error()}
	}
	return ErrorInfo{Kind: "internal", Message: err.Error()}
}
