package upstream

import (
	"reflect"
	"slices"
)

// Restart makes the named server (as configured) start over now: the attempt under way, the session it is
// serving, or the wait before its next attempt ends, and a new attempt begins with the backoff starting over.
// It returns at once; Status and the progress writer tell how the attempt goes. A name the Source does not
// serve fails with ErrUnknownServer.
func (s *Source) Restart(name string) error {
	if s.isClosed() {
		return ErrClosed
	}
	for _, u := range s.servers {
		if u.name == name {
			u.requestRestart(nil)
			return nil
		}
	}
	return &ServerError{Server: name, Op: "restart", Err: ErrUnknownServer}
}

// Reload is what Reconfigure did with a new config.
type Reload struct {
	// Restarted are the servers whose entry changed: each starts over with its new entry now.
	Restarted []string
	// NotApplied says, by server, why a change of the config could not be applied without a new Source (a new
	// process of `toolsearch mcp serve`): a server added, removed, enabled or disabled, or its lazy or isolation
	// setting changed.
	NotApplied map[string]string
}

// Reconfigure compares cfg with the config the Source serves and restarts each server whose entry changed
// with its new entry, at once, whatever its state (a server that failed identically again and again included).
// Servers whose entry is unchanged are left alone. Changes that add or remove tool sources are not applied (see
// Reload.NotApplied). An invalid cfg changes nothing and fails as Config.Validate does.
func (s *Source) Reconfigure(cfg *Config) (Reload, error) {
	var r Reload
	if s.isClosed() {
		return r, ErrClosed
	}
	if cfg == nil {
		cfg = &Config{}
	}
	if err := cfg.Validate(); err != nil {
		return r, err
	}
	served := map[string]*server{}
	for _, u := range s.servers {
		served[u.name] = u
	}
	notApplied := func(name, why string) {
		if r.NotApplied == nil {
			r.NotApplied = map[string]string{}
		}
		r.NotApplied[name] = why
	}
	for _, name := range cfg.names() {
		next := cfg.Servers[name]
		u, ok := served[name]
		switch {
		case !ok && next.Disabled:
		case !ok:
			notApplied(name, "added: a server is added when toolsearch starts again")
		case next.Disabled:
			notApplied(name, "disabled: a server is removed when toolsearch starts again")
		default:
			cur := u.pendingConfig()
			if reflect.DeepEqual(cur, next) {
				continue
			}
			if cur.Lazy != next.Lazy || cur.Isolation != next.Isolation || cur.MaxInstances != next.MaxInstances {
				notApplied(name, "its lazy, isolation or maxInstances setting changed: that applies when toolsearch starts again")
				continue
			}
			u.requestRestart(&next)
			r.Restarted = append(r.Restarted, name)
			s.progressf("mcp: %s: its config entry changed; restarting it", name)
		}
	}
	for name := range served {
		if _, ok := cfg.Servers[name]; !ok {
			notApplied(name, "removed: a server is removed when toolsearch starts again")
		}
	}
	slices.Sort(r.Restarted)
	for name, why := range r.NotApplied {
		s.progressf("mcp: %s: not applied: %s", name, why)
	}
	return r, nil
}

// pendingConfig is the entry the server's next attempt uses: one Reconfigure gave it and no attempt has taken
// yet, or its current one.
func (u *server) pendingConfig() ServerConfig {
	u.mu.Lock()
	next := u.next
	u.mu.Unlock()
	if next != nil {
		return *next
	}
	return u.config()
}
