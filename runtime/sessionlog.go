package runtime

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// RecordType names a session log record.
type RecordType string

// The records a run writes, in the order they happen.
const (
	RecordRunStart   RecordType = "run_start"  // Run: mode, catalog, what the model sees up front
	RecordRequest    RecordType = "request"    // Request: sizes of one provider request (RecordRequest)
	RecordSearch     RecordType = "search"     // Search: one search (tool_search or openclaw.tools.search)
	RecordDescribe   RecordType = "describe"   // Describe: one describe
	RecordCall       RecordType = "call"       // Call: one final tool call, with its id and source
	RecordCode       RecordType = "code"       // Code: one tool_search_code execution
	RecordRepair     RecordType = "repair"     // Repair: one mistake in the model's request, repaired
	RecordTranscript RecordType = "transcript" // Transcript: a call or result; hidden pairs follow their wrapper's result
	RecordRunEnd     RecordType = "run_end"    // Telemetry: the run's totals
)

// Record is one line of a session log. Exactly one of the payload fields is set, matching Type; records added
// with Run.Log carry the embedder's own Type and Data.
type Record struct {
	Type      RecordType `json:"type"`
	Time      time.Time  `json:"time"`
	SessionID string     `json:"sessionId,omitempty"`
	RunID     string     `json:"runId,omitempty"`
	AgentID   string     `json:"agentId,omitempty"`
	// TraceID and SpanID are those of the span the record belongs to (hex, as OpenTelemetry shows them), when
	// the run is traced: a record leads to its span and a span to its records.
	TraceID    string           `json:"traceId,omitempty"`
	SpanID     string           `json:"spanId,omitempty"`
	Run        *RunInfo         `json:"run,omitempty"`
	Request    *RequestStats    `json:"request,omitempty"`
	Search     *SearchInfo      `json:"search,omitempty"`
	Describe   *DescribeInfo    `json:"describe,omitempty"`
	Call       *CallRecord      `json:"call,omitempty"`
	Code       *CodeInfo        `json:"code,omitempty"`
	Repair     *Repair          `json:"repair,omitempty"`
	Transcript *TranscriptEntry `json:"transcript,omitempty"`
	Telemetry  *Telemetry       `json:"telemetry,omitempty"`
	Data       json.RawMessage  `json:"data,omitempty"`
}

// RunInfo is the run_start record: what the model was shown before its first call.
type RunInfo struct {
	Mode          Mode         `json:"mode"`
	RequestedMode Mode         `json:"requestedMode"`
	NotApplied    string       `json:"notApplied,omitempty"`
	CatalogSize   int          `json:"catalogSize"`
	CatalogReused bool         `json:"catalogReused"`
	Sources       SourceCounts `json:"sources"`
	VisibleTools  []string     `json:"visibleTools"`
	// SchemasUpFront is how many tool schemas the model saw before calling anything (len(VisibleTools)).
	SchemasUpFront int      `json:"schemasUpFront"`
	Hydrated       []string `json:"hydrated,omitempty"`
	DirectoryBytes int      `json:"directoryBytes,omitempty"`
}

// SearchInfo is one search.
type SearchInfo struct {
	CallID  string   `json:"callId"` // the tool_search call, or the tool_search_code call it ran in
	Via     Via      `json:"via"`
	Queries []string `json:"queries"`
	Limit   int      `json:"limit,omitempty"`
	Hits    []string `json:"hits"` // ids, best first
	// Missing names the sources (MCP servers) that were not ready, so the hits could not include their tools.
	Missing []string `json:"missing,omitempty"`
	Error   string   `json:"error,omitempty"`
}

// DescribeInfo is one describe.
type DescribeInfo struct {
	CallID string `json:"callId"`
	Via    Via    `json:"via"`
	ID     string `json:"id"`               // as the model asked
	ToolID string `json:"toolId,omitempty"` // as resolved
	Error  string `json:"error,omitempty"`
}

// CodeInfo is one tool_search_code execution.
type CodeInfo struct {
	CallID      string        `json:"callId"`
	OK          bool          `json:"ok"`
	ErrorKind   string        `json:"errorKind,omitempty"`
	CodeBytes   int           `json:"codeBytes"`
	Bridged     int           `json:"bridged"` // openclaw.tools calls the script started
	Fuel        uint64        `json:"fuel"`
	Wall        time.Duration `json:"wallNs"`
	MemoryBytes uint64        `json:"memoryBytes"`
}

// SessionLogger stores session log records. WriteRecords gets each run's records in order, in batches (at the
// latest when the run closes). key is the session id, or "run-<runId>" for a run without a session.
// Implementations must be safe for concurrent use.
type SessionLogger interface {
	WriteRecords(key string, records []Record) error
}

// Log adds a record of the embedder's own (a user or assistant message, say) to the run's session log, in order
// with the runtime's records. data is marshalled into Record.Data.
func (r *Run) Log(typ RecordType, data any) error {
	raw, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("runtime: session log record: %w", err)
	}
	r.record(Record{Type: typ, Data: raw})
	return nil
}

// recordBatch is how many records a run buffers before writing them; Close writes the rest.
const recordBatch = 256

// record stamps a record and queues it for the session log. Writes happen under the run's lock so that batches
// reach the logger in order.
func (r *Run) record(rec Record) {
	if r.rt.sessionLog == nil {
		return
	}
	rec.Time = time.Now().UTC()
	rec.SessionID, rec.RunID, rec.AgentID = r.req.SessionID, r.req.RunID, r.req.AgentID
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		// run_end is the last record of a run. Only work that outlived its run gets here (a tool that ignored
		// its cancelled context); the log says so instead of the session log contradicting itself.
		r.rt.log.Warn("tool search: a record arrived after its run ended and is not in the session log",
			"session", r.req.SessionID, "run", r.req.RunID, "type", rec.Type)
		return
	}
	r.records = append(r.records, rec)
	if len(r.records) >= recordBatch {
		batch := r.records
		r.records = nil
		if err := r.writeLocked(batch); err != nil {
			r.flushErrs = append(r.flushErrs, err)
		}
	}
}

func (r *Run) writeLocked(batch []Record) error {
	if r.rt.sessionLog == nil || len(batch) == 0 {
		return nil
	}
	key := r.req.SessionID
	if key == "" {
		key = "run-" + r.req.RunID
	}
	if err := r.rt.sessionLog.WriteRecords(key, batch); err != nil {
		r.rt.log.Error("tool search: session log write failed", "session", key, "error", err)
		return fmt.Errorf("runtime: session log: %w", err)
	}
	return nil
}

// SessionLogDir is a SessionLogger writing one JSON Lines file per session in a directory. It is safe for
// concurrent use by several runtimes of a process; files are opened for each batch, so none stays open.
type SessionLogDir struct {
	dir string
	mu  sync.Mutex
}

// NewSessionLogDir creates dir if needed (private to the user: logs hold tool arguments).
func NewSessionLogDir(dir string) (*SessionLogDir, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("runtime: session log: %w", err)
	}
	return &SessionLogDir{dir: dir}, nil
}

// Path is the file of a session key: the key with characters outside [A-Za-z0-9_-] replaced, plus a hash when
// anything was replaced, so two keys never share a file and no key can leave the directory.
func (d *SessionLogDir) Path(key string) string {
	safe := strings.Map(func(c rune) rune {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_':
			return c
		}
		return '_'
	}, key)
	if safe != key || safe == "" || len(safe) > 100 {
		sum := sha256.Sum256([]byte(key))
		safe = safe[:min(len(safe), 100)] + "-" + hex.EncodeToString(sum[:6])
	}
	return filepath.Join(d.dir, safe+".jsonl")
}

// WriteRecords appends records to the session's file, one JSON object per line.
func (d *SessionLogDir) WriteRecords(key string, records []Record) error {
	var b strings.Builder
	for _, rec := range records {
		line, err := json.Marshal(rec)
		if err != nil {
			return err
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	f, err := os.OpenFile(d.Path(key), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(b.String()); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// ReadSessionLog reads a JSON Lines session log.
func ReadSessionLog(path string) ([]Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Record
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	for n := 1; sc.Scan(); n++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var rec Record
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			return out, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		out = append(out, rec)
	}
	return out, sc.Err()
}

// SessionSummary answers the questions a session log exists for: how many schemas the model saw up front, how
// many searches and describes it ran, which tools it finally called, and from which source each result came.
type SessionSummary struct {
	Runs int `json:"runs"`
	// SchemasUpFront is, per run, how many tool schemas the model saw before its first call.
	SchemasUpFront []int `json:"schemasUpFront"`
	Searches       int   `json:"searches"`
	Describes      int   `json:"describes"`
	// Calls are the final tool calls, with their ids and sources (openclaw, mcp or client).
	Calls []CallRecord `json:"calls"`
	// Repairs counts the mistakes in the model's requests that were repaired, by kind.
	Repairs map[RepairKind]int `json:"repairs"`
}

// Summarize reads the answers out of a session's records.
func Summarize(records []Record) SessionSummary {
	s := SessionSummary{SchemasUpFront: []int{}, Calls: []CallRecord{}, Repairs: map[RepairKind]int{}}
	for _, rec := range records {
		switch {
		case rec.Type == RecordRunStart && rec.Run != nil:
			s.Runs++
			s.SchemasUpFront = append(s.SchemasUpFront, rec.Run.SchemasUpFront)
		case rec.Type == RecordSearch && rec.Search != nil:
			s.Searches += max(1, len(rec.Search.Queries))
		case rec.Type == RecordDescribe:
			s.Describes++
		case rec.Type == RecordCall && rec.Call != nil:
			s.Calls = append(s.Calls, *rec.Call)
		case rec.Type == RecordRepair && rec.Repair != nil:
			s.Repairs[rec.Repair.Kind]++
		}
	}
	return s
}
