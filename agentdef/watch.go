package agentdef

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/fsnotify/fsnotify"
)

// Watch watches the definitions directory dir and loads it again
// ([Load]) after each change of a file in it, calling onLoad with the new
// Set, or with the error when a definition no longer loads (the caller
// keeps running what it has). It watches dir and each folder in it
// (fsnotify is not recursive; a folder added later is watched from then
// on); changes that arrive together are loaded once. The watching starts
// before Watch returns; it stops when ctx ends or stop is called, and
// onLoad is never called after stop returns. Errors: the watcher's, when
// it cannot start.
func Watch(ctx context.Context, dir string, opts Options, onLoad func(*Set, error)) (stop func(), err error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("agentdef: watch %s: %w", dir, err)
	}
	add := func(path string) {
		if err := w.Add(path); err != nil {
			onLoad(nil, fmt.Errorf("agentdef: watch %s: %w", path, err))
		}
	}
	if err := w.Add(dir); err != nil {
		w.Close()
		return nil, fmt.Errorf("agentdef: watch %s: %w", dir, err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("agentdef: watch %s: %w", dir, err)
	}
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			add(filepath.Join(dir, e.Name()))
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer w.Close()
		for {
			select {
			case <-ctx.Done():
				return
			case err, ok := <-w.Errors:
				if !ok {
					return
				}
				onLoad(nil, fmt.Errorf("agentdef: watch %s: %w", dir, err))
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				note := func(ev fsnotify.Event) {
					if ev.Has(fsnotify.Create) && filepath.Dir(ev.Name) == filepath.Clean(dir) {
						if fi, err := os.Stat(ev.Name); err == nil && fi.IsDir() {
							add(ev.Name)
						}
					}
				}
				note(ev)
			drain: // what arrived with it is one change
				for {
					select {
					case ev, ok := <-w.Events:
						if !ok {
							break drain
						}
						note(ev)
					default:
						break drain
					}
				}
				set, err := Load(dir, opts)
				if ctx.Err() != nil {
					return
				}
				onLoad(set, err)
			}
		}
	}()
	return func() { cancel(); <-done }, nil
}
