package minds_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/existence/minds"
	"github.com/existence-loop/sdk/slot"
)

// A feed mind reads the feed at once and posts its newest item; an agent
// runs its minds with Config.Minds.
func ExampleFeed() {
	srv := httptest.NewServer(http.FileServer(http.Dir("testdata")))
	defer srv.Close()
	feed, err := minds.NewFeed(minds.FeedConfig{Name: "news", URL: srv.URL + "/news.xml", Interval: time.Hour})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	posted := make(chan slot.Slot, 1)
	go feed.Run(ctx, existence.MindEnv{
		Post: func(_ context.Context, s slot.Slot) error {
			posted <- s
			cancel() // one read is enough here
			return nil
		},
	})
	s := <-posted
	fmt.Printf("%s: %s - %s\n", s.Title, s.Status, s.Summary)
	// Output:
	// Workshop News: completed - newest: "New oak delivered" (2026-11-25 08:30 UTC, http://example.invalid/oak); 3 items
}
