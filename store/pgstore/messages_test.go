package pgstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/internal/pgtest"
	"github.com/existence-loop/sdk/store/pgstore"
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
	require.NoError(t, a.Enroll(ctx, "scout"))
	require.Len(t, ids(t, a, 1), 1, "a claimed nothing")
	woken := make(chan string, 4)
	lctx, stop := context.WithCancel(ctx)
	listening := make(chan error, 1)
	go func() { listening <- a.Listen(lctx, func(id string) { woken <- id }) }()

	// Listen has no "ready" signal: send until the first wake-up arrives.
	var sent []pgstore.Message
	for len(woken) == 0 {
		m, err := b.Send(ctx, "scout", false, identity.AgentMessage{From: "Cipher", Text: "your map misses design/"})
		require.NoError(t, err)
		sent = append(sent, m)
		select {
		case id := <-woken:
			require.Equal(t, "scout", id, "woken for another agent")
			woken <- id
		case <-time.After(200 * time.Millisecond):
		}
	}
	stop()
	require.ErrorIs(t, <-listening, context.Canceled, "Listen")
	_, err := b.Send(ctx, "scout", true, identity.AgentMessage{Text: "stop and write it down"})
	require.NoError(t, err)

	// a hands the messages over but "dies" before saving: nothing is acked.
	dying := &recipient{s: a, st: state("scout", ""), fail: errors.New("killed")}
	_, err = a.DeliverPending(ctx, "scout", dying)
	require.Error(t, err, "DeliverPending hid the recipient's error")
	pending, err := b.Pending(ctx, "scout")
	require.NoError(t, err, "pending")
	require.Len(t, pending, len(sent)+1, "pending")

	// b takes the agent over and delivers every message exactly once.
	expire(t, a, "scout")
	require.Len(t, ids(t, b, 1), 1, "b claimed nothing")
	r := &recipient{s: b, st: state("scout", "")}
	n, err := b.DeliverPending(ctx, "scout", r)
	require.NoError(t, err, "DeliverPending")
	require.Equal(t, len(sent)+1, n, "DeliverPending")
	require.Len(t, r.st.Inbox, len(sent), "peer messages in the state")
	require.Len(t, r.st.Host, 1, "host messages in the state")
	pending, _ = b.Pending(ctx, "scout")
	require.Empty(t, pending, "messages still pending after the saves")
	n, err = b.DeliverPending(ctx, "scout", r)
	require.NoError(t, err, "second DeliverPending")
	require.Zero(t, n, "second DeliverPending")
	loaded, err := b.Load(ctx, "scout")
	require.NoError(t, err, "stored state")
	require.Len(t, loaded.Inbox, len(sent), "stored state %+v", loaded)
	require.NotEmpty(t, loaded.Host, "stored state %+v", loaded)
	require.Equal(t, "stop and write it down", loaded.Host[0].Text, "stored state %+v", loaded)
}
