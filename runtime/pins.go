package runtime

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/toolsearch/toolsearch/catalog"
	"github.com/toolsearch/toolsearch/internal/filelock"
)

// Pinning guards against a tool server that changes a tool after the user approved it (a "rug pull"): the
// definition a user approved or first called is fingerprinted and kept in a file the user chooses, and a call
// to a tool whose definition has changed since is blocked, naming what changed, until the new definition is
// approved (an Approver's Decision.AcceptChange) or the pin is forgotten.

// ErrPinFile is wrapped by errors reading or writing a pin file.
var ErrPinFile = errors.New("pin file")

// ErrPinFileLocked is wrapped (with ErrPinFile) when a pin could not be recorded because another process held
// the pin file's lock for longer than a few seconds, or for as long as the call could wait. The call it was for
// is blocked: an unrecorded pin would let the next definition pass unchecked.
var ErrPinFileLocked = errors.New("pin file locked by another process")

// pinFileVersion is the format of the file; a newer one is refused rather than rewritten without what it adds.
const pinFileVersion = 1

// Pin is the fingerprint of one tool's definition: a SHA-256 of each part, so a change can be named.
type Pin struct {
	// ToolID is the pinned tool's id; it is the key of the pin in the file, so it is not written again.
	ToolID string `json:"-"`
	// Name, Label, Description, InputSchema, OutputSchema and Annotations are the hex SHA-256 digests of those
	// parts of the definition (schemas in a canonical form: keys sorted, insignificant space dropped).
	Name         string `json:"name"`
	Label        string `json:"label"`
	Description  string `json:"description"`
	InputSchema  string `json:"inputSchema"`
	OutputSchema string `json:"outputSchema"`
	Annotations  string `json:"annotations"`
	// PinnedAt is when the definition was pinned, in UTC to the second.
	PinnedAt time.Time `json:"pinnedAt"`
}

// DefinitionChange says how a tool's definition differs from its pin. The Approver sees it in
// Invocation.DefinitionChange.
type DefinitionChange struct {
	// ToolID is the tool whose definition changed.
	ToolID string
	// Changed lists the parts that changed: "name", "label", "description", "input schema", "output schema",
	// "annotations".
	Changed []string
	// PinnedAt is when the definition it differs from was pinned.
	PinnedAt time.Time
}

func (c *DefinitionChange) String() string {
	return fmt.Sprintf("the definition of %s changed since it was pinned (%s)", c.ToolID, strings.Join(c.Changed, ", "))
}

// pinOf fingerprints t's definition. Schemas are hashed in a canonical form (keys sorted, insignificant space
// dropped), so a server that re-serializes the same schema differently has not changed it.
func pinOf(t *catalog.Tool) Pin {
	ann, _ := json.Marshal(t.Annotations)
	return Pin{
		ToolID:       t.ID(),
		Name:         digest([]byte(t.Name)),
		Label:        digest([]byte(t.Label)),
		Description:  digest([]byte(t.Description)),
		InputSchema:  digest(canonicalJSON(t.Parameters)),
		OutputSchema: digest(canonicalJSON(t.OutputSchema)),
		Annotations:  digest(ann),
	}
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// canonicalJSON re-encodes JSON with sorted keys and exact numbers; what is not JSON is hashed as it is.
func canonicalJSON(raw json.RawMessage) []byte {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return raw
	}
	out, err := json.Marshal(v)
	if err != nil {
		return raw
	}
	return out
}

// changes lists the parts of want (the current definition) that differ from p.
func (p Pin) changes(want Pin) []string {
	var out []string
	for _, f := range [...]struct{ name, a, b string }{
		{"name", p.Name, want.Name}, {"label", p.Label, want.Label}, {"description", p.Description, want.Description},
		{"input schema", p.InputSchema, want.InputSchema}, {"output schema", p.OutputSchema, want.OutputSchema},
		{"annotations", p.Annotations, want.Annotations},
	} {
		if f.a != f.b {
			out = append(out, f.name)
		}
	}
	return out
}

// PinFile is a set of pins kept in a JSON file. It reloads the file when another process (or `toolsearch
// pins`) changed it, and every write re-reads and merges under a lock (a lock file beside it) before replacing
// the file atomically, so several toolsearch processes can share one file. A PinFile is safe for concurrent use.
type PinFile struct {
	path string

	mu      sync.Mutex
	pins    map[string]Pin
	modTime time.Time
	size    int64
}

// pinFileJSON is the file's format.
type pinFileJSON struct {
	Version int            `json:"version"`
	Pins    map[string]Pin `json:"pins"`
}

// OpenPinFile opens the pin file at path ("~/" is the home directory). A missing file is an empty set, created
// (with its directory, private to the user) on the first pin; a file that is not a pin file is an error.
func OpenPinFile(path string) (*PinFile, error) {
	if rest, ok := strings.CutPrefix(path, "~/"); ok {
		home, err := os.UserHomeDir()
		if err != nil {
			return nil, fmt.Errorf("%w %s: %w", ErrPinFile, path, err)
		}
		path = filepath.Join(home, rest)
	}
	if strings.TrimSpace(path) == "" {
		return nil, fmt.Errorf("%w: no path", ErrPinFile)
	}
	p := &PinFile{path: path, pins: map[string]Pin{}}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.reloadLocked(true); err != nil {
		return nil, err
	}
	return p, nil
}

// Path is the file's path.
func (p *PinFile) Path() string { return p.path }

// Pins returns every pin, sorted by tool id.
func (p *PinFile) Pins() ([]Pin, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.reloadLocked(false); err != nil {
		return nil, err
	}
	out := make([]Pin, 0, len(p.pins))
	for id, pin := range p.pins {
		pin.ToolID = id
		out = append(out, pin)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ToolID < out[j].ToolID })
	return out, nil
}

// Forget removes the pin of a tool id: its next approved or first call pins its definition anew. Forgetting an
// id that has no pin is not an error. Waiting for the file's lock is bounded by ctx and a few seconds.
func (p *PinFile) Forget(ctx context.Context, toolID string) error {
	return p.update(ctx, func(pins map[string]Pin) { delete(pins, toolID) })
}

// check compares t with its pin. It returns nil when t is not pinned (pinned reports which) or unchanged.
func (p *PinFile) check(t *catalog.Tool) (change *DefinitionChange, pinned bool, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.reloadLocked(false); err != nil {
		return nil, false, err
	}
	old, ok := p.pins[t.ID()]
	if !ok {
		return nil, false, nil
	}
	if changed := old.changes(pinOf(t)); len(changed) > 0 {
		return &DefinitionChange{ToolID: t.ID(), Changed: changed, PinnedAt: old.PinnedAt}, true, nil
	}
	return nil, true, nil
}

// lockTimeout bounds the wait for the pin file's lock: long enough for another process to finish a
// read-merge-write (milliseconds), short enough that a lock held by a stuck process fails the call, not the
// session. The caller's context can end the wait sooner. A variable so tests can trip it quickly.
var lockTimeout = 3 * time.Second

// pin records t's current definition, waiting for the file's lock no longer than ctx allows.
func (p *PinFile) pin(ctx context.Context, t *catalog.Tool) error {
	pin := pinOf(t)
	pin.PinnedAt = time.Now().UTC().Truncate(time.Second)
	return p.update(ctx, func(pins map[string]Pin) { pins[pin.ToolID] = pin })
}

// update re-reads the file, applies change and writes the result atomically (a temporary file renamed over the
// old one), so a crash never leaves half a file and another process's pins are kept. The cross-process lock is
// taken before the mutex, and waiting for it is bounded by ctx and lockTimeout: a lock held elsewhere never
// stalls the calls that only check pins, and a lock that cannot be had fails with ErrPinFileLocked.
func (p *PinFile) update(ctx context.Context, change func(map[string]Pin)) error {
	target, err := filelock.ResolveLink(p.path)
	if err != nil {
		return fmt.Errorf("%w %s: %w", ErrPinFile, p.path, err)
	}
	dir := filepath.Dir(target)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("%w %s: %w", ErrPinFile, p.path, err)
	}
	unlock, err := filelock.Lock(ctx, filepath.Join(dir, "."+filepath.Base(target)+".lock"), lockTimeout)
	if errors.Is(err, filelock.ErrBusy) {
		if ctx.Err() != nil {
			return fmt.Errorf("%w %s: %w (%w)", ErrPinFile, p.path, ErrPinFileLocked, ctx.Err())
		}
		return fmt.Errorf("%w %s: %w", ErrPinFile, p.path, ErrPinFileLocked)
	}
	if err != nil {
		return fmt.Errorf("%w %s: lock: %w", ErrPinFile, p.path, err)
	}
	defer unlock()
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.reloadLocked(true); err != nil {
		return err
	}
	next := maps.Clone(p.pins)
	change(next)
	data, err := json.MarshalIndent(pinFileJSON{Version: pinFileVersion, Pins: next}, "", "  ")
	if err != nil {
		return fmt.Errorf("%w %s: %w", ErrPinFile, p.path, err)
	}
	if err := filelock.WriteAtomic(p.path, append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("%w %s: %w", ErrPinFile, p.path, err)
	}
	p.pins = next
	return p.statLocked()
}

// reloadLocked reads the file if it changed since it was last read (or always, with force).
func (p *PinFile) reloadLocked(force bool) error {
	info, err := os.Stat(p.path)
	if errors.Is(err, fs.ErrNotExist) {
		p.pins, p.modTime, p.size = map[string]Pin{}, time.Time{}, 0
		return nil
	}
	if err != nil {
		return fmt.Errorf("%w %s: %w", ErrPinFile, p.path, err)
	}
	if !force && info.ModTime().Equal(p.modTime) && info.Size() == p.size {
		return nil
	}
	data, err := os.ReadFile(p.path)
	if err != nil {
		return fmt.Errorf("%w %s: %w", ErrPinFile, p.path, err)
	}
	var f pinFileJSON
	if err := json.Unmarshal(data, &f); err != nil {
		return fmt.Errorf("%w %s: not a pin file: %w", ErrPinFile, p.path, err)
	}
	if f.Version != pinFileVersion {
		return fmt.Errorf("%w %s: version %d, this toolsearch reads version %d", ErrPinFile, p.path, f.Version, pinFileVersion)
	}
	if f.Pins == nil {
		f.Pins = map[string]Pin{}
	}
	p.pins, p.modTime, p.size = f.Pins, info.ModTime(), info.Size()
	return nil
}

func (p *PinFile) statLocked() error {
	info, err := os.Stat(p.path)
	if err != nil {
		return fmt.Errorf("%w %s: %w", ErrPinFile, p.path, err)
	}
	p.modTime, p.size = info.ModTime(), info.Size()
	return nil
}
