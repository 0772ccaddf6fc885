// Package storespec opens the agents' store and task queue named by a
// store spec, the value of the examples' -store flag (issue 10):
//
//	DIR            a directory: identity.FileStore and a taskqueue file queue (the default)
//	sqlite:PATH    one SQLite database file: identity/sqlitestore
//
// The PostgreSQL store adds "postgres://..." here (issue 11). The trio and
// examples/swarm share it.
package storespec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/taskqueue"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/identity/sqlitestore"
)

// Tasks is a store's task queue: [existence.TaskSource] and the methods of
// [*taskqueue.Queue] the examples use. *taskqueue.Queue and
// *sqlitestore.Queue implement it.
type Tasks interface {
	existence.TaskSource
	Submit(ctx context.Context, description, agentID string) (taskqueue.Task, error)
	List(ctx context.Context) ([]taskqueue.Task, error)
	Get(ctx context.Context, id string) (taskqueue.Task, error)
}

var (
	_ Tasks = (*taskqueue.Queue)(nil)
	_ Tasks = (*sqlitestore.Queue)(nil)
)

// Options configure [Open]. The zero value gives the defaults.
type Options struct {
	// Now is the clock of the store and the queue; nil means time.Now.
	Now func() time.Time
	// FreshOnCorrupt moves a corrupt task queue file aside and starts an
	// empty queue (taskqueue.Options.FreshOnCorrupt); agent states are
	// quarantined by the agent (existence.Config.FreshOnCorrupt).
	FreshOnCorrupt bool
	// Logger receives the stores' reports; nil means slog.Default().
	Logger *slog.Logger
}

// ErrSpec: a store spec that names no known kind of store.
var ErrSpec = errors.New("storespec: invalid store spec")

// Kind returns the kind of store spec names, "dir" or "sqlite", without
// opening it. Errors: [ErrSpec].
func Kind(spec string) (string, error) {
	switch {
	case spec == "":
		return "", fmt.Errorf("%w: empty (want DIR or sqlite:PATH)", ErrSpec)
	case strings.HasPrefix(spec, "sqlite:"):
		if strings.TrimPrefix(spec, "sqlite:") == "" {
			return "", fmt.Errorf("%w: %q has no path (want sqlite:PATH)", ErrSpec, spec)
		}
		return "sqlite", nil
	case strings.Contains(spec, "://"):
		return "", fmt.Errorf("%w: %q: unknown scheme (want DIR or sqlite:PATH)", ErrSpec, spec)
	default:
		return "dir", nil
	}
}

// Open opens the store and the task queue spec names, and returns them
// with the closer that releases them (close it after the agents stop).
// Errors: [ErrSpec]; the stores' own errors (a corrupt task file, a
// database of a newer schema, ...), which name the file.
func Open(ctx context.Context, spec string, opts Options) (identity.Store, Tasks, io.Closer, error) {
	kind, err := Kind(spec)
	if err != nil {
		return nil, nil, nil, err
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	switch kind {
	case "sqlite":
		s, err := sqlitestore.Open(ctx, strings.TrimPrefix(spec, "sqlite:"), sqlitestore.Options{Now: opts.Now, Logger: opts.Logger})
		if err != nil {
			return nil, nil, nil, err
		}
		s.Tasks().SetOptions(taskqueue.Options{Now: opts.Now})
		return s, s.Tasks(), s, nil
	default:
		fs, err := identity.OpenFileStore(spec, identity.FileOptions{Logger: opts.Logger})
		if err != nil {
			return nil, nil, nil, err
		}
		q, err := taskqueue.Open(spec, taskqueue.Options{Now: opts.Now, FreshOnCorrupt: opts.FreshOnCorrupt, Logger: opts.Logger})
		if err != nil {
			return nil, nil, nil, err
		}
		return fs, q, io.NopCloser(nil), nil
	}
}
