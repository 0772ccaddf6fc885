package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/existence-loop/sdk/cmd/existence/internal/cli/tui"
	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/event"
	"github.com/existence-loop/sdk/existence/requests"
	"github.com/existence-loop/sdk/existence/runner"
)

// runTUI runs the agents under the full-screen terminal view (-tui) until
// the person quits or ctx ends; then the agents stop and save.
func runTUI(ctx context.Context, o *runOptions, rn *runner.Runner, reqs *requests.Queue, stdout io.Writer) error {
	events := make(chan event.Event, 1024)
	defer rn.Subscribe(func(e event.Event) {
		select {
		case events <- e:
		default: // the view is behind: it catches up with the next event
		}
	})()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	var runErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		runErr = rn.Run(ctx)
	}()
	in := o.stdin
	if in == nil {
		in = os.Stdin
	}
	cfg := tui.Config{
		Title: fmt.Sprintf("existence-loop trio · %s %s", o.provider, o.model),
		Statuses: func() []existence.Status {
			var out []existence.Status
			for _, a := range rn.Agents() {
				out = append(out, a.Status())
			}
			return out
		},
		Handle:  func(ctx context.Context, line string, w io.Writer) { handleLine(ctx, line, rn, reqs, w) },
		Refresh: time.Second, // escalation shows between events
	}
	err := tui.Run(ctx, cfg, in, stdout, events)
	cancel()
	wg.Wait()
	return errors.Join(err, runErr)
}
