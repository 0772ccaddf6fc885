package pgstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/identity/pgstore"
	"github.com/existence-loop/sdk/internal/pgtest"
)

// recipient is an agent's state saved through a store, as an
// existence.Agent's DeliverToInbox and SayAsHost do.
type recipient struct {
	s    *pgstore.Store
	st   *identity.AgentState
	fail error // returned instead of saving: the process "dies" first
}

func (r *recipient) DeliverToInbox(ctx context.Context, m identity.AgentMessage) error {
	r.st.Inbox = append(r.st.Inbox, m)
	return r.save(ctx)
}

func (r *recipient) SayAsHost(ctx context.Context, text string) error {
	r.st.Host = append(r.st.Host, identity.AgentMessage{From: "host", Text: text, At: time.Now()})
	return r.save(ctx)
}

func (r *recipient) save(ctx context.Context) error {
	if r.fail != nil {
		return r.fail
	}
	return r.s.Save(ctx, r.st)
}

func TestMessagesWakeTheOwnerAndSurviveACrash(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	url := pgtest.New(t)
	a, b := open(t, url, "host-a:1", time.Hour), open(t, url, "host-b:2", time.Hour)
	if err := a.Enroll(ctx, "scout"); err != nil {
		t.Fatal(err)
	}
	if got := ids(t, a, 1); len(got) != 1 {
		t.Fatal("a claimed nothing")
	}
	woken := make(chan string, 4)
	lctx, stop := context.WithCancel(ctx)
	listening := make(chan error, 1)
	go func() { listening <- a.Listen(lctx, func(id string) { woken <- id }) }()

	// Listen has no "ready" signal: send until the first wake-up arrives.
	var sent []pgstore.Message
	for len(woken) == 0 {
		m, err := b.Send(ctx, "scout", false, identity.AgentMessage{From: "Cipher", Text: "your map misses design/"})
		if err != nil {
			t.Fatal(err)
		}
		sent = append(sent, m)
		select {
		case id := <-woken:
			if id != "scout" {
				t.Fatalf("woken for %q", id)
			}
			woken <- id
		case <-time.After(200 * time.Millisecond):
		}
	}
	stop()
	if err := <-listening; !errors.Is(err, context.Canceled) {
		t.Fatalf("Listen = %v", err)
	}
	if _, err := b.Send(ctx, "scout", true, identity.AgentMessage{Text: "stop and write it down"}); err != nil {
		t.Fatal(err)
	}

	// a hands the messages over but "dies" before saving: nothing is acked.
	dying := &recipient{s: a, st: state("scout", ""), fail: errors.New("killed")}
	if _, err := a.DeliverPending(ctx, "scout", dying); err == nil {
		t.Fatal("DeliverPending hid the recipient's error")
	}
	pending, err := b.Pending(ctx, "scout")
	if err != nil || len(pending) != len(sent)+1 {
		t.Fatalf("pending = %d, %v; want %d", len(pending), err, len(sent)+1)
	}

	// b takes the agent over and delivers every message exactly once.
	expire(t, a, "scout")
	if got := ids(t, b, 1); len(got) != 1 {
		t.Fatal("b claimed nothing")
	}
	r := &recipient{s: b, st: state("scout", "")}
	n, err := b.DeliverPending(ctx, "scout", r)
	if err != nil || n != len(sent)+1 {
		t.Fatalf("DeliverPending = %d, %v", n, err)
	}
	if len(r.st.Inbox) != len(sent) || len(r.st.Host) != 1 {
		t.Fatalf("state has %d peer and %d host messages", len(r.st.Inbox), len(r.st.Host))
	}
	if pending, _ := b.Pending(ctx, "scout"); len(pending) != 0 {
		t.Fatalf("%d messages still pending after the saves", len(pending))
	}
	if n, err := b.DeliverPending(ctx, "scout", r); n != 0 || err != nil {
		t.Fatalf("second DeliverPending = %d, %v", n, err)
	}
	loaded, err := b.Load(ctx, "scout")
	if err != nil || len(loaded.Inbox) != len(sent) || loaded.Host[0].Text != "stop and write it down" {
		t.Fatalf("stored state %+v, %v", loaded, err)
	}
}
