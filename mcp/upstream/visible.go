package upstream

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// VisibleTools is the value of a server's "visible" key: true keeps every tool of the server in the model's
// tool list (it reads as ["*"]), false or an empty list none, and a list the tools it names ("*" globs allowed),
// as the server lists them.
type VisibleTools []string

// UnmarshalJSON accepts true, false or an array of tool names.
func (v *VisibleTools) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	switch string(data) {
	case "true":
		*v = VisibleTools{"*"}
		return nil
	case "false":
		*v = nil
		return nil
	}
	var names []string
	if err := json.Unmarshal(data, &names); err != nil || names == nil {
		return fmt.Errorf("%w: visible must be true or an array of tool names", ErrConfig)
	}
	*v = names
	return nil
}

// ConfigExpected says what a config file may write for the key, with an example, for messages and the README.
func (VisibleTools) ConfigExpected() (expected, example string) {
	return "true or an array of tool names", `["read_graph"]`
}
