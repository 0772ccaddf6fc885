package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/existence-loop/sdk/cmd/existence/internal/cli/tui"
	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/internal/backoff"
)

// tuiCommand is `existence tui`: the terminal view attached to a monitor.
var tuiCommand = &command{
	name:    "tui",
	summary: "a full-screen terminal view attached to a running monitor (run -http, serve)",
	about: `It shows the agents behind a monitor, as run -tui shows those of its own
process: one pane per agent (name, goal, suffering bar, top stressors),
the thoughts stream and an input line. It polls GET /api/agents every
-refresh and streams GET /api/events; a typed line is a host message to
every agent (POST /api/messages), or to one with "@name text"; /requests,
/answer N text, /approve N [note] and /reject N why use the /api/requests
endpoints. Esc or Ctrl-C quits; the agents go on.

  existence run -http 127.0.0.1:8080 &      or: existence serve -store ...
  {prog} -url http://127.0.0.1:8080 -http-token s3cret`,
	setup: func(fs *flag.FlagSet) action {
		o := &attachOptions{}
		fs.StringVar(&o.url, "url", "http://127.0.0.1:8080", "the monitor's address (run -http, serve -http)")
		tokenFlag(fs, &o.token, "bearer token the monitor requires (default $EXISTENCE_TOKEN)")
		aliasFlag(fs, "token", "http-token")
		fs.DurationVar(&o.refresh, "refresh", time.Second, "how often the agents' statuses are fetched")
		return func(ctx context.Context, e *env, _ []string) error {
			if o.refresh <= 0 {
				return usageErr(errors.New("-refresh must be positive"))
			}
			client, err := newMonitorClient(o.url, o.token.String())
			if err != nil {
				return usageErr(fmt.Errorf("-url %w", err))
			}
			att := newAttachment(client, o.refresh)
			stop, err := att.start(ctx)
			if err != nil {
				return err
			}
			defer stop()
			in := e.stdin
			if in == nil {
				in = os.Stdin
			}
			return tui.Run(ctx, att.config("existence-loop · "+client.base.String()), in, e.stdout, att.events)
		}
	},
}

// attachOptions are the tui command's flags.
type attachOptions struct {
	url     string
	token   envToken
	refresh time.Duration
}

// attachment feeds the terminal view from a monitor: the statuses of the
// last poll, the events of the stream, and notices when either fails.
type attachment struct {
	client  *monitorClient
	console *remoteConsole
	refresh time.Duration
	events  chan event.Event
	notices chan string
	// backoff is the first wait before reconnecting the event stream; it
	// doubles up to maxBackoff.
	backoff, maxBackoff time.Duration
}

func newAttachment(client *monitorClient, refresh time.Duration) *attachment {
	return &attachment{
		client: client, console: &remoteConsole{c: client}, refresh: refresh,
		events: make(chan event.Event, 1024), notices: make(chan string, 16),
		backoff: time.Second, maxBackoff: 30 * time.Second,
	}
}

// start fetches the statuses once, so that a monitor that cannot be
// reached (or refuses the token) is an error before the screen is taken,
// then polls them and streams the events until stop is called or ctx
// ends.
func (a *attachment) start(ctx context.Context) (stop func(), err error) {
	statuses, err := a.client.agents(ctx)
	if err != nil {
		return nil, fmt.Errorf("the monitor at %s: %w", a.client.base, err)
	}
	a.console.set(statuses)
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { a.poll(ctx) })
	wg.Go(func() { a.stream(ctx) })
	return func() { cancel(); wg.Wait() }, nil
}

// config is the terminal view's configuration.
func (a *attachment) config(title string) tui.Config {
	l := lines{c: a.console, prefix: "tui"}
	return tui.Config{
		Title:    title,
		Statuses: a.console.current,
		Handle:   l.handle,
		Refresh:  a.refresh,
		Notices:  a.notices,
	}
}

// notify shows a line in the view, unless the view is behind.
func (a *attachment) notify(format string, args ...any) {
	select {
	case a.notices <- fmt.Sprintf(format, args...):
	default:
	}
}

// poll fetches the statuses every a.refresh; a failure keeps the last ones
// and is shown once (and its end).
func (a *attachment) poll(ctx context.Context) {
	t := time.NewTicker(a.refresh)
	defer t.Stop()
	failing := ""
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		statuses, err := a.client.agents(ctx)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			if msg := err.Error(); msg != failing {
				failing = msg
				a.notify("tui: fetching the agents failed: %v (showing the last statuses)", err)
			}
		default:
			if failing != "" {
				failing = ""
				a.notify("tui: the monitor answers again")
			}
			a.console.set(statuses)
		}
	}
}

// stream forwards the monitor's events to the view, reconnecting after a
// lost stream with a growing wait.
func (a *attachment) stream(ctx context.Context) {
	wait := a.backoff
	for ctx.Err() == nil {
		err := a.client.events(ctx,
			func() { wait = a.backoff },
			func(e event.Event) {
				select {
				case a.events <- e:
				default: // the view is behind: it catches up with the next event
				}
			},
			func(n uint64) { a.notify("tui: the monitor dropped %d events for this view", n) })
		if ctx.Err() != nil {
			return
		}
		a.notify("tui: the event stream ended (%v); reconnecting in %v", err, wait)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = backoff.Next(wait, a.backoff, a.maxBackoff)
	}
}
