package runtime

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/toolsearch/toolsearch/catalog"
)

// MaxVisibleTools is the most tools Config.Visible may keep in the model's tool list: past it, the list is as long
// as the one Tool Search exists to shorten. The definitions of the visible tools together are also bounded, by
// MaxDirectoryBytes, the budget directory mode spends on its whole directory.
const MaxVisibleTools = 32

// ErrVisibleLimit is matched by *VisibleLimitError.
var ErrVisibleLimit = errors.New("runtime: too many visible tools")

// VisibleLimitError refuses a run whose Config.Visible selects more than MaxVisibleTools tools, or tools whose
// definitions take more than MaxDirectoryBytes: StartRun returns it, with the figures.
type VisibleLimitError struct {
	// Tools is how many tools the selectors matched, Bytes how many bytes their definitions take as the model
	// is sent them.
	Tools, Bytes int
}

func (e *VisibleLimitError) Error() string {
	if e.Tools > MaxVisibleTools {
		return fmt.Sprintf("tools.toolSearch.visible selects %d tools: at most %d may be kept in view; name fewer "+
			"tools (or narrow a glob or server: selector)", e.Tools, MaxVisibleTools)
	}
	return fmt.Sprintf("tools.toolSearch.visible selects %d tools whose definitions take %d bytes: at most %d "+
		"bytes may be kept in view; name fewer tools", e.Tools, e.Bytes, MaxDirectoryBytes)
}

// Is makes errors.Is(err, ErrVisibleLimit) hold.
func (e *VisibleLimitError) Is(target error) bool { return target == ErrVisibleLimit }

// visibleTools are the tools of ts that Config.Visible selects, as the policy's allow list would: the same
// selectors, the same groups. They are shown beside the control tools and stay cataloged.
func (r *Run) visibleTools(ts []catalog.Tool, policy *catalog.Policy) []catalog.Tool {
	sel := r.rt.cfg.Visible
	if len(sel) == 0 {
		return nil
	}
	match := &catalog.Policy{Agent: catalog.Rule{Allow: sel}}
	if policy != nil {
		match.Groups = policy.Groups
	}
	var out []catalog.Tool
	for _, t := range ts {
		if t.CatalogMode != catalog.CatalogModeDirectOnly && match.Allows(&t) {
			out = append(out, t)
		}
	}
	return out
}

// checkVisible refuses a visible set past its bounds. It counts only the tools the policy allows, under the
// names the model sees them by, since that is what the tool list would carry.
func checkVisible(names []string, tools []*catalog.Tool, visible map[*catalog.Tool]bool) error {
	n, size := 0, 0
	for i, t := range tools {
		if !visible[t] {
			continue
		}
		n++
		b, err := json.Marshal(definition(names[i], t))
		if err != nil {
			return fmt.Errorf("runtime: visible tool %s: %w", t.ID(), err)
		}
		size += len(b)
	}
	if n > MaxVisibleTools || size > MaxDirectoryBytes {
		return &VisibleLimitError{Tools: n, Bytes: size}
	}
	return nil
}
