// Package minds has the built-in minds (existence.Mind): background jobs
// that watch part of the world and report it to an agent's board, or to
// the board several agents share, as slots (GLaDOS's minds and slots).
//
//   - [Watcher]: a workspace watcher, with fsnotify: files created,
//     changed and removed under a directory, summed up in one slot.
//   - [Poller]: an HTTP poller: a URL fetched every interval with
//     If-None-Match (ETag) and If-Modified-Since, and a summary of what
//     changed.
//   - [Feed]: an RSS or Atom feed read every interval with
//     github.com/mmcdole/gofeed (conditional requests too): the newest
//     item's title and how many items are new.
//   - [Timer]: a slot posted every interval (a clock, a reminder).
//   - [Resource]: an MCP resource through the SDK's MCP client
//     (existence/toolloop/mcptools): read, then re-read at each update
//     notification of its subscription.
//
// Each mind posts one slot, named after the mind (its slot id is the
// mind's Name), and says when it expects to post again (next_run) when it
// runs on an interval. A mind's Run returns an error when it fails (an
// HTTP status that is not a success, a feed that does not parse, a watch
// that breaks, an MCP server that ends the session): the runner then posts
// a failed slot for it and runs it again after a backoff (see
// existence.Mind). None of them calls a model.
//
// The Poller and the Feed fetch with a client that keeps to the
// configured origin: a redirect elsewhere fails with [ErrRedirect] unless
// its host is in AllowRedirect, and link-local and cloud metadata
// addresses, and private ones unless the URL's own host is such an
// address or AllowPrivate is set, are refused when connecting, after DNS
// resolution ([ErrAddress]): a URL cannot be turned into a request to the
// machine's metadata service or internal network.
//
// Give an agent its minds with existence.Config.Minds, or give them to a
// runner (runner.Config.Minds) to post to the shared board:
//
//	w, err := minds.NewWatcher(minds.WatchConfig{Dir: "workspace"})
//	...
//	agent, err := existence.New(ctx, existence.Config{..., Minds: []existence.Mind{w}})
//
// and place prompt.SlotsSection in the agent's prompt to show what they
// report.
package minds
