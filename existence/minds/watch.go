package minds

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/slot"
)

// Defaults of [WatchConfig].
const (
	DefaultWatchImportance = 0.3
	DefaultDebounce        = 200 * time.Millisecond
	DefaultRecent          = 8
)

// WatchConfig configures a [Watcher]. Only Dir is required.
type WatchConfig struct {
	// Name is the mind's name and its slot's id; default "workspace".
	Name string
	// Title is the slot's title; default "Workspace".
	Title string
	// Dir is the directory watched, with every directory under it
	// (directories created later included). It must exist.
	Dir string
	// Importance is the slot's importance, 0–1; 0 means 0.3.
	Importance float64
	// Notify posts the slot with notify_user: a change asks for a cycle
	// at once.
	Notify bool
	// Debounce is how long the watcher gathers changes after the first
	// one before it posts them together (real time: an editor's save is
	// several events); changes that go on are posted every Debounce, never
	// held back. Default 200 ms, negative: every change at once.
	Debounce time.Duration
	// Ignore reports whether a path (relative to Dir, with "/") is left
	// out; default: any path with an element starting with "." (hidden
	// files, and the temp files of atomic saves).
	Ignore func(rel string) bool
	// Recent is how many changed paths the summary lists, newest first;
	// default 8.
	Recent int
}

// Watcher is a mind that watches a directory tree with fsnotify and posts
// one slot listing the latest changes, newest first:
//
//	created notes/plan.md; changed scout/index.md; removed tmp.txt
//
// Its status is "changed" (idle, "watching DIR", before the first change).
// A change is reported at most Debounce after it, with the changes that
// came meanwhile. A
// failing watch (an error of the operating system's watcher, a directory
// that cannot be watched) is a failure (see existence.Mind); at the
// restart the tree is watched again. Create it with [NewWatcher].
type Watcher struct {
	cfg WatchConfig

	mu     sync.Mutex
	recent []change // newest first
}

// change is one path's latest change.
type change struct{ op, rel string }

var _ existence.Mind = (*Watcher)(nil)

// NewWatcher returns a Watcher. Errors: [ErrConfig] for an empty Dir or a
// Dir that is not a directory, an invalid name, an importance out of 0–1.
func NewWatcher(cfg WatchConfig) (*Watcher, error) {
	if cfg.Dir == "" {
		return nil, fmt.Errorf("%w: WatchConfig.Dir is empty", ErrConfig)
	}
	if st, err := os.Stat(cfg.Dir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("%w: WatchConfig.Dir %s is not a directory: %v", ErrConfig, cfg.Dir, err)
	}
	cfg.Dir = filepath.Clean(cfg.Dir)
	cfg.Name = orDefault(cfg.Name, "workspace")
	cfg.Title = orDefault(cfg.Title, "Workspace")
	cfg.Importance = orDefault(cfg.Importance, DefaultWatchImportance)
	cfg.Debounce = orDefault(cfg.Debounce, DefaultDebounce)
	cfg.Recent = orDefault(cfg.Recent, DefaultRecent)
	if cfg.Ignore == nil {
		cfg.Ignore = hidden
	}
	if err := checkName(cfg.Name); err != nil {
		return nil, err
	}
	if err := checkImportance(cfg.Importance); err != nil {
		return nil, err
	}
	return &Watcher{cfg: cfg}, nil
}

// hidden reports whether a path has an element starting with ".".
func hidden(rel string) bool {
	for _, el := range strings.Split(rel, "/") {
		if strings.HasPrefix(el, ".") && el != "." {
			return true
		}
	}
	return false
}

// Name returns the mind's name (WatchConfig.Name).
func (w *Watcher) Name() string { return w.cfg.Name }

// Run watches the tree until ctx ends, posting the slot after each quiet
// spell that follows changes. Errors: the failures above, and the post's.
func (w *Watcher) Run(ctx context.Context, env existence.MindEnv) error {
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watching %s: %w", w.cfg.Dir, err)
	}
	defer fw.Close()
	if err := w.addTree(fw, w.cfg.Dir, false); err != nil {
		return err
	}
	if err := w.post(ctx, env, false); err != nil {
		return err
	}
	var quiet <-chan time.Time
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	due := false
	for {
		select {
		case <-ctx.Done():
			return nil
		case err, ok := <-fw.Errors:
			if !ok {
				return fmt.Errorf("watching %s: the watcher closed", w.cfg.Dir)
			}
			return fmt.Errorf("watching %s: %w", w.cfg.Dir, err)
		case ev, ok := <-fw.Events:
			if !ok {
				return fmt.Errorf("watching %s: the watcher closed", w.cfg.Dir)
			}
			if !w.event(fw, ev) {
				continue
			}
			if w.cfg.Debounce < 0 {
				if err := w.post(ctx, env, true); err != nil {
					return err
				}
				continue
			}
			if due {
				continue // posted with the others when the timer fires
			}
			due = true
			if timer == nil {
				timer = time.NewTimer(w.cfg.Debounce)
				quiet = timer.C
			} else {
				timer.Reset(w.cfg.Debounce)
			}
		case <-quiet:
			if due {
				due = false
				if err := w.post(ctx, env, true); err != nil {
					return err
				}
			}
		}
	}
}

// event records one fsnotify event and reports whether it is a change to
// report.
func (w *Watcher) event(fw *fsnotify.Watcher, ev fsnotify.Event) bool {
	rel, err := filepath.Rel(w.cfg.Dir, ev.Name)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return false
	}
	rel = filepath.ToSlash(rel)
	if w.cfg.Ignore(rel) {
		return false
	}
	switch {
	case ev.Has(fsnotify.Create):
		if st, err := os.Lstat(ev.Name); err == nil && st.IsDir() {
			// A new directory: watch it, and report what it already holds
			// (files created before its watch was added).
			if err := w.addTree(fw, ev.Name, true); err != nil {
				w.record("created", rel+"/ (not watched: "+err.Error()+")")
				return true
			}
			w.record("created", rel+"/")
			return true
		}
		w.record("created", rel)
	case ev.Has(fsnotify.Write):
		w.record("changed", rel)
	case ev.Has(fsnotify.Remove), ev.Has(fsnotify.Rename):
		w.record("removed", rel)
	default:
		return false // chmod
	}
	return true
}

// addTree watches dir and the directories under it; with report, the
// files found are recorded as created.
func (w *Watcher) addTree(fw *fsnotify.Watcher, dir string, report bool) error {
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && path != dir {
				return nil // gone meanwhile
			}
			return fmt.Errorf("watching %s: %w", path, err)
		}
		rel, _ := filepath.Rel(w.cfg.Dir, path)
		rel = filepath.ToSlash(rel)
		if rel != "." && w.cfg.Ignore(rel) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.IsDir() {
			if report && path != dir {
				w.record("created", rel)
			}
			return nil
		}
		if err := fw.Add(path); err != nil {
			return fmt.Errorf("watching %s: %w", path, err)
		}
		return nil
	})
}

// record puts a path's change first in the recent list.
func (w *Watcher) record(op, rel string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if i := slices.IndexFunc(w.recent, func(c change) bool { return c.rel == rel }); i >= 0 {
		if prev := w.recent[i].op; prev == "created" && op == "changed" {
			op = "created" // a new file being written is still new
		}
		w.recent = slices.Delete(w.recent, i, i+1)
	}
	w.recent = slices.Insert(w.recent, 0, change{op, rel})
	if len(w.recent) > w.cfg.Recent {
		w.recent = w.recent[:w.cfg.Recent]
	}
}

// post posts the slot: the recent changes, or that the tree is watched;
// with notify, a change is posted with WatchConfig.Notify.
func (w *Watcher) post(ctx context.Context, env existence.MindEnv, notify bool) error {
	w.mu.Lock()
	s := slot.Slot{ID: w.cfg.Name, Title: w.cfg.Title, Status: "changed", Importance: w.cfg.Importance, Confidence: 1, NotifyUser: notify && w.cfg.Notify}
	if len(w.recent) == 0 {
		s.Status, s.Summary, s.NotifyUser = slot.Idle, "watching "+filepath.ToSlash(w.cfg.Dir)+": no change yet", false
	} else {
		parts := make([]string, len(w.recent))
		for i, c := range w.recent {
			parts[i] = c.op + " " + c.rel
		}
		s.Summary = strings.Join(parts, "; ")
	}
	w.mu.Unlock()
	return env.Post(ctx, s)
}
