package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/toolsearch/toolsearch/config"
	"github.com/toolsearch/toolsearch/mcp/upstream"
)

const restartUsage = `usage: toolsearch mcp restart [--url URL] [--token TOKEN] NAME

Asks a running "toolsearch mcp serve --http" to start the upstream server NAME over now: the attempt under way,
its session, or the wait before its next attempt ends (a server whose failure repeated waits 10 minutes), and
the backoff starts over. Exits 0 once the front has taken the request; "toolsearch mcp status" says how it goes.
A server whose entry in the config file changes is restarted without asking (mcp serve watches the file, and
re-reads it on SIGHUP).

flags:
  --url URL      the front's address: http://HOST:PORT, or its /mcp endpoint (default http://127.0.0.1:8931)
  --token TOKEN  the front's bearer token (default $TOOLSEARCH_MCP_TOKEN)
`

// restartHandler serves POST /restart?server=NAME: Source.Restart of that server. mcp serve mounts it behind
// the front's own token and origin checks (Protect), as /readyz.
func restartHandler(src *upstream.Source) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", "POST")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		name := r.URL.Query().Get("server")
		w.Header().Set("Content-Type", "application/json")
		err := src.Restart(name)
		switch {
		case errors.Is(err, upstream.ErrUnknownServer):
			w.WriteHeader(http.StatusNotFound)
		case err != nil:
			w.WriteHeader(http.StatusServiceUnavailable)
		default:
			w.WriteHeader(http.StatusAccepted)
			_ = json.NewEncoder(w).Encode(map[string]string{"restarting": name})
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]string{"error": err.Error()})
	})
}

// runRestart is `toolsearch mcp restart NAME`.
func runRestart(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mcp restart", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	addr := fs.String("url", "http://127.0.0.1:"+defaultHTTPPort, "")
	token := fs.String("token", "", "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			io.WriteString(stdout, restartUsage)
			return exitOK
		}
		return mcpUsageError(stderr, err.Error())
	}
	if fs.NArg() != 1 {
		return mcpUsageError(stderr, "mcp restart takes one server name")
	}
	name := fs.Arg(0)
	resp, body, base, failed := askFront(ctx, "mcp restart", http.MethodPost, *addr,
		"/restart?server="+url.QueryEscape(name), *token, 64<<10, stderr)
	if failed != exitOK {
		return failed
	}
	var answer struct {
		Error string `json:"error"`
	}
	_ = json.Unmarshal(body, &answer)
	switch resp.StatusCode {
	case http.StatusAccepted:
		fmt.Fprintf(stdout, "%s: restarting\n", name)
		return exitOK
	case http.StatusUnauthorized:
		fmt.Fprintf(stderr, "toolsearch mcp restart: %s wants its bearer token (--token, or $%s)\n", base, tokenEnv)
	case http.StatusNotFound:
		if answer.Error != "" {
			fmt.Fprintf(stderr, "toolsearch mcp restart: %s\n", answer.Error)
		} else {
			fmt.Fprintf(stderr, "toolsearch mcp restart: %s has no /restart (is it a toolsearch mcp serve --http?)\n", base)
		}
	default:
		fmt.Fprintf(stderr, "toolsearch mcp restart: %s/restart answered %s %s\n", base, resp.Status, strings.TrimSpace(answer.Error))
	}
	return exitFailure
}

// notifyHUP registers for SIGHUP, which mcp serve takes as "re-read the config file" rather than as the end.
func notifyHUP() chan os.Signal {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	return hup
}

// configPollInterval is how often mcp serve looks at its config file for a change.
const configPollInterval = time.Second

// watchConfig re-reads the config file when it changes (its size or modification time, looked at every
// configPollInterval) and on SIGHUP, and hands its servers to Source.Reconfigure, which restarts each server
// whose entry changed: fixing a broken entry brings the server back without restarting the MCP client. Only the
// servers are reloaded; the rest of the file (mode, policy, profiles) applies at the next start, and the
// progress output says so when it changed. A file that does not load is reported and changes nothing. It
// returns when ctx ends.
// hup must already be registered for SIGHUP (signal.Notify), so that none arriving once mcp serve has said it
// serves ends the process; watchConfig stops it.
func watchConfig(ctx context.Context, path string, src *upstream.Source, stderr io.Writer, hup chan os.Signal) {
	defer signal.Stop(hup)
	tick := time.NewTicker(configPollInterval)
	defer tick.Stop()
	last, _ := os.Stat(path)
	for {
		why := ""
		select {
		case <-ctx.Done():
			return
		case <-hup:
			why = "SIGHUP"
		case <-tick.C:
			info, err := os.Stat(path)
			if err != nil || (last != nil && info.Size() == last.Size() && info.ModTime().Equal(last.ModTime())) {
				continue
			}
			last, why = info, "it changed"
		}
		reloadServers(ctx, path, why, src, stderr)
	}
}

// reloadServers reads the servers of the config file at path and applies them (see watchConfig).
func reloadServers(ctx context.Context, path, why string, src *upstream.Source, stderr io.Writer) {
	lc, err := config.Load(ctx, path)
	if err != nil {
		fmt.Fprintf(stderr, "toolsearch mcp serve: re-reading %s (%s): %v; nothing changed\n", path, why, err)
		return
	}
	skipSelfReferences(io.Discard, "", lc.Servers)
	reload, err := src.Reconfigure(lc.Servers)
	if err != nil {
		fmt.Fprintf(stderr, "toolsearch mcp serve: re-reading %s (%s): %v; nothing changed\n", path, why, err)
		return
	}
	restarted := "no server's entry changed"
	if len(reload.Restarted) > 0 {
		restarted = "restarting " + strings.Join(reload.Restarted, ", ")
	}
	var later []string
	for name := range reload.NotApplied {
		later = append(later, name)
	}
	slices.Sort(later)
	note := ""
	if len(later) > 0 {
		note = "; " + strings.Join(later, ", ") + " change(s) apply when mcp serve starts again"
	}
	fmt.Fprintf(stderr, "toolsearch mcp serve: re-read %s (%s): %s%s\n", path, why, restarted, note)
}
