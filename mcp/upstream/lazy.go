package upstream

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// A lazy server (ServerConfig.Lazy) is not started with the others: its tools come from the schema cache, a file
// per server config holding the server's last listing as it was kept (raw, bounded like any listing), until its
// first call starts it. Every listing that changes its tools rewrites the file, so the next process starts with
// what the server offers now.
//
//   - No cache directory, or no entry yet: the server starts at once like any other, and progress says why.
//   - An entry that cannot be read or fails the listing rules (a damaged or tampered file): ignored and said so;
//     the server starts at once, and its listing replaces the entry.

// schemaCacheVersion is bumped when the file format or the meaning of a kept listing changes: entries of another
// version are ignored like damaged ones.
const schemaCacheVersion = 1

// schemaCacheFile is the content of one entry.
type schemaCacheFile struct {
	Version int          `json:"version"`
	Server  string       `json:"server"` // the name it was saved under, for a person reading the file
	SavedAt time.Time    `json:"savedAt"`
	Tools   []remoteTool `json:"tools"`
}

// defaultSchemaCacheDir is where entries live unless Options.SchemaCacheDir says otherwise; "" when the user has
// no cache directory.
func defaultSchemaCacheDir() string {
	base, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(base, "toolsearch", "mcp-schemas")
}

// schemaCacheKey identifies a server's configuration as written: the command, its arguments, its working
// directory, its environment and the URL with its headers, values included, since a value can change what a
// server offers (MODE=readonly, a toolsets header). Values are taken as configured, so a "${NAME}" reference
// keys by the name and a rotated token it reads keeps the entry. Only a SHA-256 of it all names the file; the
// values are never written.
func schemaCacheKey(cfg ServerConfig) string {
	key, _ := json.Marshal(struct {
		Version int               `json:"v"`
		Command string            `json:"command,omitempty"`
		Args    []string          `json:"args,omitempty"`
		Cwd     string            `json:"cwd,omitempty"`
		Env     map[string]string `json:"env,omitempty"` // encoding/json sorts map keys
		URL     string            `json:"url,omitempty"`
		Headers map[string]string `json:"headers,omitempty"`
	}{schemaCacheVersion, cfg.Command, cfg.Args, cfg.Cwd, cfg.Env, cfg.URL, cfg.Headers})
	sum := sha256.Sum256(key)
	return hex.EncodeToString(sum[:16])
}

func (u *server) cachePath() string {
	if u.src.opts.cacheDir == "" {
		return ""
	}
	return filepath.Join(u.src.opts.cacheDir, schemaCacheKey(u.config())+".json")
}

// errNoCacheEntry is a lazy server's first start anywhere.
var errNoCacheEntry = errors.New("its tools are not cached yet")

// openRegular opens a cache file for reading, refusing anything but a regular file: opening a FIFO someone left
// at the path would wait for a writer, and hold the start-up of every server with it. The open does not block
// (O_NONBLOCK), and the file's type is checked on what was opened.
func openRegular(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err == nil && !info.Mode().IsRegular() {
		err = fmt.Errorf("%s is not a regular file", path)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// loadCache reads the server's entry and checks it by the rules of a listing. It fails with errNoCacheEntry
// when there is none.
func (u *server) loadCache() (*listing, error) {
	path := u.cachePath()
	if path == "" {
		return nil, errors.New("there is no cache directory")
	}
	f, err := openRegular(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errNoCacheEntry
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// Everything a listing keeps, and room for the JSON around it.
	data, err := io.ReadAll(io.LimitReader(f, 2*MaxListingBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > 2*MaxListingBytes {
		return nil, fmt.Errorf("%s is larger than any listing", path)
	}
	var entry schemaCacheFile
	if err := json.Unmarshal(data, &entry); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if entry.Version != schemaCacheVersion {
		return nil, fmt.Errorf("%s: version %d, not %d", path, entry.Version, schemaCacheVersion)
	}
	l := newListing(u)
	for _, rt := range entry.Tools {
		if _, err := l.keep(rt); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err) // a listing never saves what it would drop
		}
	}
	return l, nil
}

// saveCache writes the server's entry: to a temporary file renamed into place, so that a reader (another
// toolsearch starting) never sees half of it. A failure is reported and otherwise changes nothing.
func (u *server) saveCache(kept []remoteTool) {
	path := u.cachePath()
	if path == "" {
		return
	}
	err := func() error {
		data, err := json.Marshal(schemaCacheFile{Version: schemaCacheVersion, Server: u.name, SavedAt: time.Now().UTC(), Tools: kept})
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return err
		}
		tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
		if err != nil {
			return err
		}
		defer os.Remove(tmp.Name()) // after a successful rename there is nothing left to remove
		if _, err := tmp.Write(data); err != nil {
			tmp.Close()
			return err
		}
		if err := tmp.Close(); err != nil {
			return err
		}
		return os.Rename(tmp.Name(), path)
	}()
	if err != nil {
		u.src.progressf("mcp: %s: cannot cache its tools: %v", u.name, err)
	}
}

// startLazily decides at New how a lazy server begins: idle, with its cached tools, or (no usable entry) at once.
// It reports whether the server is idle.
func (u *server) startLazily() bool {
	l, err := u.loadCache()
	if err != nil {
		if errors.Is(err, errNoCacheEntry) {
			u.src.progressf("mcp: %s: lazy, but %v; starting it now", u.name, err)
		} else {
			u.src.progressf("mcp: %s: lazy, but ignoring its cached tools (%v); starting it now", u.name, err)
		}
		return false
	}
	u.adopt(u.mapTools(l.kept), l.offered)
	u.mu.Lock()
	u.state, u.since = StateIdle, time.Now()
	u.mu.Unlock()
	u.src.progressf("mcp: %s: lazy: %d tool(s) from the cache; it starts on first use", u.name, len(l.kept))
	return true
}

// awaitIdle holds an idle server's supervisor until the first use (or Close). It reports whether to go on.
func (u *server) awaitIdle() bool {
	select {
	case <-u.wake:
	case <-u.src.ctx.Done():
		return false
	}
	u.mu.Lock()
	u.state, u.since = StateStarting, time.Now()
	u.mu.Unlock()
	u.src.progressf("mcp: %s: starting on first use", u.name)
	u.src.notify()
	return true
}

// wakeUp starts an idle lazy server; it does nothing to one that is not idle.
func (u *server) wakeUp() {
	u.wakeOnce.Do(func() { close(u.wake) })
}

// awaitStart is the first use of a lazy server: it starts the server if it is idle and waits for the outcome of
// its first attempt (bounded by its start timeout), so that the call goes to the server rather than failing as
// not connected. Other servers return at once.
func (u *server) awaitStart(ctx context.Context) error {
	if !u.config().Lazy {
		return nil
	}
	u.wakeUp()
	select {
	case <-u.first:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
