package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"strings"

	"github.com/existence-loop/sdk/clock"
	"github.com/existence-loop/sdk/cmd/internal/storespec"
	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/minds"
	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/prompt"
)

// senseOptions are the run command's minds: what of the world reaches
// the agents as slots on their shared board.
type senseOptions struct {
	watch bool     // -watch: the workspace watcher
	feeds []string // -feed URL, repeatable
	polls []string // -poll URL, repeatable
	// redirects are the hosts a -feed or -poll URL may be redirected to
	// (-poll-allow-redirect HOST, repeatable); allowPrivate lets them
	// reach private addresses (-poll-allow-private).
	redirects    []string
	allowPrivate bool
}

// senseFlags registers -watch, -feed and -poll on fs.
func senseFlags(fs *flag.FlagSet, o *senseOptions) {
	fs.BoolVar(&o.watch, "watch", false, "report files created, changed and removed in -workspace to the agents (a slot on their shared board)")
	fs.Func("feed", "read the RSS or Atom feed at `URL` every 30 minutes and report its newest item to the agents (repeatable)", func(s string) error {
		if err := checkHTTPURL(s); err != nil {
			return err
		}
		o.feeds = append(o.feeds, s)
		return nil
	})
	fs.Func("poll", "fetch `URL` every 5 minutes and report what changed to the agents (repeatable)", func(s string) error {
		if err := checkHTTPURL(s); err != nil {
			return err
		}
		o.polls = append(o.polls, s)
		return nil
	})
	fs.Func("poll-allow-redirect", "let a -feed or -poll URL be redirected to `HOST` (repeatable; by default redirects stay on the URL's scheme, host and port)", func(s string) error {
		if strings.TrimSpace(s) == "" || strings.ContainsAny(s, "/ ") {
			return errors.New("want a host name or address, optionally with :port")
		}
		o.redirects = append(o.redirects, s)
		return nil
	})
	fs.BoolVar(&o.allowPrivate, "poll-allow-private", false, "let -feed and -poll reach private and loopback addresses (10/8, 172.16/12, 192.168/16, 127/8, …) whatever their URL; link-local and cloud metadata addresses stay refused")
}

func checkHTTPURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("want an http:// or https:// address")
	}
	return nil
}

// minds builds the minds the flags ask for, reporting to the shared board;
// names are "workspace", "feed", "feed-2", …, "http", "http-2", ….
func (o *senseOptions) minds(workspaceDir string) ([]existence.Mind, error) {
	var out []existence.Mind
	if o.watch {
		w, err := minds.NewWatcher(minds.WatchConfig{Dir: workspaceDir})
		if err != nil {
			return nil, fmt.Errorf("-watch: %w", err)
		}
		out = append(out, w)
	}
	for i, u := range o.feeds {
		f, err := minds.NewFeed(minds.FeedConfig{Name: numbered("feed", i), URL: u, AllowRedirect: o.redirects, AllowPrivate: o.allowPrivate})
		if err != nil {
			return nil, fmt.Errorf("-feed %s: %w", u, err)
		}
		out = append(out, f)
	}
	for i, u := range o.polls {
		p, err := minds.NewPoller(minds.PollConfig{Name: numbered("http", i), URL: u, AllowRedirect: o.redirects, AllowPrivate: o.allowPrivate})
		if err != nil {
			return nil, fmt.Errorf("-poll %s: %w", u, err)
		}
		out = append(out, p)
	}
	return out, nil
}

// numbered is name for the first, then name-2, name-3, ….
func numbered(name string, i int) string {
	if i == 0 {
		return name
	}
	return fmt.Sprintf("%s-%d", name, i+1)
}

// sharedBoard returns the agents' shared board of slots: where the store
// keeps shared documents (storespec.SharedSlots), else in memory. A dry
// run's board starts from the stored one and keeps changes in memory.
// Errors: reading the stored board for a dry run.
func sharedBoard(ctx context.Context, store identity.Store, clock clock.Clock) (*identity.SharedBoard, error) {
	opts := identity.BoardOptions{Now: clock.Now}
	if b, ok := storespec.SharedSlots(store, opts); ok {
		return b, nil
	}
	mem := identity.NewSharedBoard(identity.NewMemoryDocument(identity.SharedSlotsDocument), opts)
	if ov, ok := store.(*overlay); ok && ov.base != nil {
		if b, ok := storespec.SharedSlots(ov.base, opts); ok {
			slots, err := b.List(ctx)
			if err != nil {
				return nil, err
			}
			for _, s := range slots {
				if _, err := mem.Put(ctx, s); err != nil {
					return nil, err
				}
			}
		}
	}
	return mem, nil
}

// placeSlots puts the slots section (what the world reports: the minds of
// -watch, -feed and -poll, POST /api/slots, the MCP post_slot tool) after
// the discoveries of a (fresh) trio assembler, and returns it.
func placeSlots(a *prompt.Assembler) *prompt.Assembler {
	if err := a.InsertAfter(prompt.SectionDiscoveries, prompt.SlotsSection()); err != nil {
		panic(err) // a fresh assembler has the discoveries and no slots section
	}
	return a
}
