package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/existence-loop/sdk/clock"
	"github.com/existence-loop/sdk/cmd/internal/storespec"
	"github.com/existence-loop/sdk/existence/requests"
	"github.com/existence-loop/sdk/existence/runner"
	"github.com/existence-loop/sdk/identity"
)

// commandHelp lists the stdin (and terminal view input line) commands.
const commandHelp = `commands: /requests (open requests), /answer N text, /approve N [note], /reject N why, /help; a line without / is a host message, to every agent or to one with @name`

// openRequests opens the queue of requests to the human in the same store
// as the task queue: in the database of a sqlite: or postgres:// store
// (its documents table), else in the state directory next to tasks.json.
// A dry run keeps it in memory.
func openRequests(ctx context.Context, o *runOptions, clock clock.Clock, store identity.Store) (*requests.Queue, error) {
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

// console is what the lines a person types act on (standard input of run,
// the input line of the terminal view): the agents and their requests to
// the human, in this process ([localConsole]) or behind a monitor
// ([remoteConsole], tui -url).
type console interface {
	// ids returns the agents' ids, in their order.
	ids() []string
	// resolve returns the id of the agent named who (its id or its name,
	// in any case), "" when there is none.
	resolve(who string) string
	// name returns agent id's display name, or id.
	name(id string) string
	// sayAsHost sends a host message to the given agents, or to all.
	sayAsHost(ctx context.Context, text string, to ...string) error
	// hasRequests reports whether there is a request queue.
	hasRequests() bool
	// pending returns the open requests, oldest first.
	pending(ctx context.Context) ([]openRequest, error)
	// answer answers request id (a number or "req-N") and delivers the
	// answer. reader is the display name of the agent that reads it at
	// its next cycle, "" when the answer could not reach its inbox
	// because the agent is not reachable from here. An error after the
	// request was answered returns the request with it.
	answer(ctx context.Context, id string, status requests.Status, text string) (r requests.Request, reader string, err error)
}

// openRequest is a request waiting for an answer and the time to age it
// by (now, by the clock of the queue's owner).
type openRequest struct {
	requests.Request
	now time.Time
}

// lines runs typed lines against a console, reporting on w with prefix
// ("trio: ...").
type lines struct {
	c      console
	prefix string
}

// trioLines are the lines of the run command: its runner and request
// queue (nil: none).
func trioLines(rn *runner.Runner, reqs *requests.Queue) lines {
	return lines{c: localConsole{rn: rn, reqs: reqs}, prefix: "trio"}
}

// listen turns each line of r into a host message: to every agent, or to
// one with "@id text" or "@Name text". Lines starting with "/" are request
// commands (see command).
func listen(ctx context.Context, r io.Reader, rn *runner.Runner, reqs *requests.Queue, w io.Writer) {
	trioLines(rn, reqs).listen(ctx, r, w)
}

// handleLine runs one line of the run command's terminal view.
func handleLine(ctx context.Context, line string, rn *runner.Runner, reqs *requests.Queue, w io.Writer) {
	trioLines(rn, reqs).handle(ctx, line, w)
}

// listen runs each line of r until r ends.
func (l lines) listen(ctx context.Context, r io.Reader, w io.Writer) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		l.handle(ctx, sc.Text(), w)
	}
}

// handle runs one line a person typed: a request command, or a host
// message to every agent or to one ("@id text", "@Name text"). Problems
// are written to w.
func (l lines) handle(ctx context.Context, line string, w io.Writer) {
	line = strings.TrimSpace(line)
	if line == "" || l.command(ctx, line, w) {
		return
	}
	var to []string
	if rest, ok := strings.CutPrefix(line, "@"); ok {
		who, text, _ := strings.Cut(rest, " ")
		id := l.c.resolve(who)
		if id == "" {
			fmt.Fprintf(w, "%s: no agent %q (try %s)\n", l.prefix, who, tryIDs(l.c.ids()))
			return
		}
		to, line = []string{id}, strings.TrimSpace(text)
	}
	if err := l.c.sayAsHost(ctx, line, to...); err != nil && ctx.Err() == nil {
		fmt.Fprintln(w, l.prefix+":", err)
	}
}

// tryIDs suggests agents to address: "@scout, @analyst or @builder".
func tryIDs(ids []string) string {
	at := make([]string, 0, 3)
	for _, id := range ids[:min(len(ids), 3)] {
		at = append(at, "@"+id)
	}
	switch {
	case len(at) == 0:
		return "@id or @name of a running agent"
	case len(ids) > 3:
		return strings.Join(at, ", ") + ", …"
	case len(at) == 1:
		return at[0]
	}
	return strings.Join(at[:len(at)-1], ", ") + " or " + at[len(at)-1]
}

// command runs one request command typed by a person (a line starting with
// "/") and writes what happened to w. It reports false for a line that is
// not a command.
func (l lines) command(ctx context.Context, line string, w io.Writer) bool {
	if !strings.HasPrefix(line, "/") {
		return false
	}
	p := l.prefix + ":"
	verb, rest, _ := strings.Cut(line, " ")
	rest = strings.TrimSpace(rest)
	if !l.c.hasRequests() && verb != "/help" {
		fmt.Fprintln(w, p, "no request queue")
		return true
	}
	switch verb {
	case "/requests":
		rs, err := l.c.pending(ctx)
		if err != nil {
			fmt.Fprintln(w, p, err)
			return true
		}
		if len(rs) == 0 {
			fmt.Fprintln(w, p, "no open requests")
		}
		for _, r := range rs {
			fmt.Fprintf(w, "%s #%s from %s: %s\n", p, strings.TrimLeft(strings.TrimPrefix(r.ID, "req-"), "0"), l.c.name(r.Agent), requests.Describe(r.Request, r.now))
		}
	case "/answer", "/approve", "/reject":
		id, text, _ := strings.Cut(rest, " ")
		status := map[string]requests.Status{"/answer": requests.Answered, "/approve": requests.Approved, "/reject": requests.Rejected}[verb]
		if id == "" {
			fmt.Fprintf(w, "%s usage: %s N %s\n", p, verb, map[string]string{"/answer": "text", "/approve": "[note]", "/reject": "why"}[verb])
			return true
		}
		r, reader, err := l.c.answer(ctx, id, status, text)
		switch {
		case err != nil:
			fmt.Fprintln(w, p, err)
		case reader == "":
			fmt.Fprintf(w, "%s %s %s; agent %s is not running here, so it will not hear of it\n", p, r.ID, r.Status, r.Agent)
		default:
			fmt.Fprintf(w, "%s %s %s; %s reads it at its next cycle\n", p, r.ID, r.Status, reader)
		}
	case "/help":
		fmt.Fprintln(w, p, commandHelp)
	default:
		fmt.Fprintf(w, "%s unknown command %s; %s\n", p, verb, commandHelp)
	}
	return true
}

// localConsole is the console of the agents of this process.
type localConsole struct {
	rn   *runner.Runner
	reqs *requests.Queue // nil: none
}

func (c localConsole) ids() []string {
	var out []string
	for _, a := range c.rn.Agents() {
		out = append(out, a.ID())
	}
	return out
}

func (c localConsole) resolve(who string) string { return agentID(c.rn, who) }

// name returns the display name of agent id, or id.
func (c localConsole) name(id string) string {
	if a := c.rn.Agent(id); a != nil {
		return a.Name()
	}
	return id
}

func (c localConsole) sayAsHost(ctx context.Context, text string, to ...string) error {
	return c.rn.SayAsHost(ctx, text, to...)
}

func (c localConsole) hasRequests() bool { return c.reqs != nil }

func (c localConsole) pending(ctx context.Context) ([]openRequest, error) {
	rs, err := c.reqs.List(ctx, requests.Filter{Status: requests.Pending})
	if err != nil {
		return nil, err
	}
	now := c.reqs.Now()
	out := make([]openRequest, 0, len(rs))
	for _, r := range rs {
		out = append(out, openRequest{r, now})
	}
	return out, nil
}

func (c localConsole) answer(ctx context.Context, id string, status requests.Status, text string) (requests.Request, string, error) {
	r, err := c.reqs.Answer(ctx, id, status, text)
	if err != nil {
		return r, "", err
	}
	a := c.rn.Agent(r.Agent)
	if a == nil {
		return r, "", nil
	}
	if err := requests.Deliver(ctx, a, r); err != nil {
		return r, "", errors.Join(errors.New(r.ID+" answered, but the answer could not reach the inbox"), err)
	}
	return r, a.Name(), nil
}

// agentID finds an agent by id or by name, case-insensitively.
func agentID(r *runner.Runner, who string) string {
	for _, a := range r.Agents() {
		if strings.EqualFold(a.ID(), who) || strings.EqualFold(a.Name(), who) {
			return a.ID()
		}
	}
	return ""
}
