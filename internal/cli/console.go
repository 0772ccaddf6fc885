package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/requests"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/internal/storespec"
)

// commandHelp lists the stdin (and -tui input line) commands.
const commandHelp = `commands: /requests (open requests), /answer N text, /approve N [note], /reject N why, /help; a line without / is a host message, to every agent or to one with @name`

// openRequests opens the queue of requests to the human in the same store
// as the task queue (issue 12): in the database of a sqlite: or postgres://
// store (its documents table), else in the state directory next to
// tasks.json. A dry run keeps it in memory.
func openRequests(ctx context.Context, o *options, clock existence.Clock, store identity.Store) (*requests.Queue, error) {
	if o.dryRun {
		return requests.NewMemory(requests.Options{Now: clock.Now}), nil
	}
	opts := requests.Options{Now: clock.Now}
	if q, ok, err := storespec.OpenRequests(ctx, store, opts); ok {
		return q, err
	}
	dir := o.state
	if kind, _ := storespec.Kind(o.store); kind == "dir" {
		dir = o.store
	}
	return requests.Open(dir, opts)
}

// command runs one request command typed by a person (a line starting with
// "/") and writes what happened to w. It reports false for a line that is
// not a command.
func command(ctx context.Context, line string, runner *existence.Runner, reqs *requests.Queue, w io.Writer) bool {
	if !strings.HasPrefix(line, "/") {
		return false
	}
	verb, rest, _ := strings.Cut(line, " ")
	rest = strings.TrimSpace(rest)
	if reqs == nil && verb != "/help" {
		fmt.Fprintln(w, "trio: no request queue")
		return true
	}
	switch verb {
	case "/requests":
		rs, err := reqs.List(ctx, requests.Filter{Status: requests.Pending})
		if err != nil {
			fmt.Fprintln(w, "trio:", err)
			return true
		}
		if len(rs) == 0 {
			fmt.Fprintln(w, "trio: no open requests")
		}
		for _, r := range rs {
			fmt.Fprintf(w, "trio: #%s from %s: %s\n", strings.TrimLeft(strings.TrimPrefix(r.ID, "req-"), "0"), displayName(runner, r.Agent), requests.Describe(r, reqs.Now()))
		}
	case "/answer", "/approve", "/reject":
		id, text, _ := strings.Cut(rest, " ")
		status := map[string]requests.Status{"/answer": requests.Answered, "/approve": requests.Approved, "/reject": requests.Rejected}[verb]
		if id == "" {
			fmt.Fprintf(w, "trio: usage: %s N %s\n", verb, map[string]string{"/answer": "text", "/approve": "[note]", "/reject": "why"}[verb])
			return true
		}
		r, err := reqs.Answer(ctx, id, status, text)
		if err != nil {
			fmt.Fprintln(w, "trio:", err)
			return true
		}
		a := runner.Agent(r.Agent)
		if a == nil {
			fmt.Fprintf(w, "trio: %s %s; agent %s is not running here, so it will not hear of it\n", r.ID, r.Status, r.Agent)
			return true
		}
		if err := requests.Deliver(ctx, a, r); err != nil {
			fmt.Fprintln(w, "trio:", errors.Join(errors.New(r.ID+" answered, but the answer could not reach the inbox"), err))
			return true
		}
		fmt.Fprintf(w, "trio: %s %s; %s reads it at its next cycle\n", r.ID, r.Status, a.Name())
	case "/help":
		fmt.Fprintln(w, "trio:", commandHelp)
	default:
		fmt.Fprintf(w, "trio: unknown command %s; %s\n", verb, commandHelp)
	}
	return true
}

// displayName returns the display name of agent id, or id.
func displayName(r *existence.Runner, id string) string {
	if a := r.Agent(id); a != nil {
		return a.Name()
	}
	return id
}
