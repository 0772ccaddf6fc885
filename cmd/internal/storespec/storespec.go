package storespec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/existence-loop/sdk/existence/requests"
	"github.com/existence-loop/sdk/existence/workspace"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/lease"
	"github.com/existence-loop/sdk/memory"
	"github.com/existence-loop/sdk/store/filestore"
	"github.com/existence-loop/sdk/store/pgstore"
	"github.com/existence-loop/sdk/store/sqlitestore"
	"github.com/existence-loop/sdk/store/taskqueue"
	"github.com/existence-loop/sdk/task"
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
	// Postgres configures a postgres:// store (owner, lease TTL, claim
	// batch, pool size); its Logger defaults to Logger.
	Postgres pgstore.Options
}

// ErrSpec: a store spec that names no known kind of store.
var ErrSpec = errors.New("storespec: invalid store spec")

// Kind returns the kind of store spec names, "dir", "sqlite" or
// "postgres", without opening it. Errors: [ErrSpec].
func Kind(spec string) (string, error) {
	switch {
	case spec == "":
		return "", fmt.Errorf("%w: empty (want DIR, sqlite:PATH or postgres://...)", ErrSpec)
	case strings.HasPrefix(spec, "sqlite:"):
		if strings.TrimPrefix(spec, "sqlite:") == "" {
			return "", fmt.Errorf("%w: %q has no path (want sqlite:PATH)", ErrSpec, spec)
		}
		return "sqlite", nil
	case strings.HasPrefix(spec, "postgres://"), strings.HasPrefix(spec, "postgresql://"):
		return "postgres", nil
	case strings.Contains(spec, "://"):
		return "", fmt.Errorf("%w: %q: unknown scheme (want DIR, sqlite:PATH or postgres://...)", ErrSpec, spec)
	default:
		return "dir", nil
	}
}

// StateDir returns the directory on this machine that holds the state
// spec names: DIR itself, or the directory of the database file of
// sqlite:PATH (its WAL and journal files live beside it). ok is false for
// a postgres:// spec, whose state lives in the database server. Errors:
// [ErrSpec].
func StateDir(spec string) (dir string, ok bool, err error) {
	kind, err := Kind(spec)
	if err != nil {
		return "", false, err
	}
	switch kind {
	case "dir":
		return spec, true, nil
	case "sqlite":
		return filepath.Dir(strings.TrimPrefix(spec, "sqlite:")), true, nil
	}
	return "", false, nil
}

// CheckWorkspace refuses a workspace directory that overlaps the state
// spec names, after symbolic links are resolved (workspace.CheckApart):
// for a directory store, the same directory or one inside the other; for
// a SQLite file, a database directory that is the workspace or inside it
// (the file, its WAL and its journal would be in the agents' reach; a
// workspace beside the database file, as ./trio-workspace beside
// ./trio.db, is fine). Agents write any file of their workspace, so an
// overlap would let one agent rewrite another's saved state. A
// postgres:// spec needs no check. Errors: [ErrSpec]; an error matching
// workspace.ErrOverlap, which names both paths.
func CheckWorkspace(spec, workspaceDir string) error {
	kind, err := Kind(spec)
	if err != nil {
		return err
	}
	dir, ok, err := StateDir(spec)
	if err != nil || !ok {
		return err
	}
	err = workspace.CheckApart(workspaceDir, dir)
	if oe, isOverlap := errors.AsType[*workspace.OverlapError](err); isOverlap && kind == "sqlite" && !oe.StateInWorkspace() {
		return nil
	}
	return err
}

// Open opens the store and the task queue spec names, and returns them
// with the closer that releases them (close it after the agents stop).
// Errors: [ErrSpec]; the stores' own errors (a corrupt task file, a
// database of a newer schema, ...), which name the file.
func Open(ctx context.Context, spec string, opts Options) (identity.Store, task.Queue, io.Closer, error) {
	kind, err := Kind(spec)
	if err != nil {
		return nil, nil, nil, err
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	switch kind {
	case "postgres":
		po := opts.Postgres
		if po.Logger == nil {
			po.Logger = opts.Logger
		}
		s, err := pgstore.Open(ctx, spec, po)
		if err != nil {
			return nil, nil, nil, err
		}
		return s, s.Tasks(), closerFunc(func() error { s.Close(); return nil }), nil
	case "sqlite":
		s, err := sqlitestore.Open(ctx, strings.TrimPrefix(spec, "sqlite:"), sqlitestore.Options{Now: opts.Now, Logger: opts.Logger})
		if err != nil {
			return nil, nil, nil, err
		}
		return s, s.Tasks(), s, nil
	default:
		// The queues keep their documents beside the agents'.
		fs, err := filestore.Open(spec, filestore.Options{Logger: opts.Logger,
			Siblings: []string{taskqueue.FileName, requests.FileName}})
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

// Leases returns the store's leases when it hands agents out between
// processes (a postgres:// store), for runner.Config.Leases;
// ok is false for the stores of one process.
func Leases(store identity.Store) (l lease.Manager, ok bool) {
	l, ok = store.(lease.Manager)
	return l, ok
}

// Memories returns the store's long-term memories: every store Open
// returns (and memstore.Store) is also a [memory.Store], so ok is
// false only for a store from elsewhere that keeps none.
func Memories(store identity.Store) (m memory.Store, ok bool) {
	m, ok = store.(memory.Store)
	return m, ok
}

// closerFunc adapts a function to io.Closer.
type closerFunc func() error

func (f closerFunc) Close() error { return f() }
