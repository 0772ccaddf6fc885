package pgstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/existence-loop/sdk/identity"
)

// NotifyChannel is the LISTEN/NOTIFY channel a [Store.Send] notifies, with
// the recipient's agent id as the payload.
const NotifyChannel = "existence_messages"

// Message is a message waiting in the database for its agent.
type Message struct {
	// ID orders the messages of the database.
	ID int64
	// AgentID is the recipient.
	AgentID string
	// Host is true for a message from the host (a person), false for a
	// peer message.
	Host bool
	// Message is what is delivered; At is when it was sent, by the
	// database's clock (microseconds).
	identity.AgentMessage
}

// Send stores a message for agentID and notifies the process that holds
// the agent (through LISTEN/NOTIFY, see [Store.Listen]) when the
// transaction commits. A peer message has From set to the sender's name; a
// host message (host true) has From "host". The message waits in the
// database until the holder delivers it with [Store.DeliverPending] and
// saves it, whoever holds the agent then, so none is lost when a process
// dies. It returns the stored message. Errors: [identity.ErrInvalidID];
// an empty text; the database's error.
func (s *Store) Send(ctx context.Context, agentID string, host bool, m identity.AgentMessage) (Message, error) {
	if err := identity.ValidateID(agentID); err != nil {
		return Message{}, err
	}
	if m.Text == "" {
		return Message{}, errors.New("pgstore: send: empty message")
	}
	kind := "peer"
	if host {
		kind, m.From = "host", "host"
	}
	out := Message{AgentID: agentID, Host: host, AgentMessage: m}
	err := s.pool.QueryRow(ctx, `WITH ins AS (
			INSERT INTO existence_messages (agent_id, kind, sender, body, sent_at)
			VALUES ($1, $2, $3, $4, clock_timestamp()) RETURNING id, sent_at)
		SELECT id, sent_at, pg_notify($5, $1) FROM ins`, agentID, kind, m.From, m.Text, NotifyChannel).Scan(&out.ID, &out.At, nil)
	if err != nil {
		return Message{}, fmt.Errorf("pgstore: send to %s: %w", agentID, err)
	}
	return out, nil
}

// Pending returns the messages for agentID that no save has acknowledged
// yet, oldest first.
func (s *Store) Pending(ctx context.Context, agentID string) ([]Message, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, agent_id, kind = 'host', sender, body, sent_at FROM existence_messages
		WHERE agent_id = $1 AND acked_at IS NULL ORDER BY id`, agentID)
	if err != nil {
		return nil, fmt.Errorf("pgstore: pending: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Message, error) {
		var m Message
		err := r.Scan(&m.ID, &m.AgentID, &m.Host, &m.From, &m.Text, &m.At)
		return m, err
	})
	if err != nil {
		return nil, fmt.Errorf("pgstore: pending: %w", err)
	}
	return out, nil
}

// Recipient is what [Store.DeliverPending] hands messages to;
// *existence.Agent implements it. DeliverToInbox and SayAsHost must save the agent's
// state through this Store before returning.
type Recipient interface {
	// DeliverToInbox puts a peer message in the agent's inbox and saves.
	DeliverToInbox(ctx context.Context, m identity.AgentMessage) error
	// SayAsHost delivers a host message and saves.
	SayAsHost(ctx context.Context, text string) error
}

// DeliverPending hands the pending messages of agentID, oldest first, to
// to (the local agent this Store holds) and returns how many it handed
// over. Each message is acknowledged in the database by the save that
// first stores it in the agent's state (see [Store.Save]): a process that
// dies before that save leaves it pending for the next holder, and one
// that dies after leaves it in the saved state, so a message is delivered
// exactly once. A message handed over but not yet acknowledged is not
// handed over again by this Store. Errors: [ErrFenced] when this Store
// does not hold the agent; the first error of Deliver or Say (the rest
// wait for the next call); the database's error.
func (s *Store) DeliverPending(ctx context.Context, agentID string, to Recipient) (int, error) {
	if _, err := s.fenceOf(agentID); err != nil {
		return 0, err
	}
	if _, ok := s.Held(agentID); !ok {
		return 0, &FencedError{AgentID: agentID, Epoch: -1}
	}
	s.deliverMu.Lock()
	defer s.deliverMu.Unlock()
	msgs, err := s.Pending(ctx, agentID)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, m := range msgs {
		s.mu.Lock()
		h := s.held[agentID]
		if h == nil || h.lost {
			s.mu.Unlock()
			return n, &FencedError{AgentID: agentID, Epoch: -1}
		}
		if slices.ContainsFunc(h.inflight, func(x Message) bool { return x.ID == m.ID }) {
			s.mu.Unlock()
			continue
		}
		h.inflight = append(h.inflight, m)
		s.mu.Unlock()
		if m.Host {
			err = to.SayAsHost(ctx, m.Text)
		} else {
			err = to.DeliverToInbox(ctx, m.AgentMessage)
		}
		if err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// ackable returns the ids of the messages handed over to agentID's agent
// that st now holds: a peer message by sender, text and time, a host
// message by text (the agent stamps its own time on host messages).
func (s *Store) ackable(st *identity.AgentState) []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.held[st.Identity.AgentID]
	if h == nil || len(h.inflight) == 0 {
		return nil
	}
	usedHost := make([]bool, len(st.Host))
	var ids []int64
	for _, m := range h.inflight {
		if !m.Host {
			if slices.ContainsFunc(st.Inbox, func(x identity.AgentMessage) bool {
				return x.From == m.From && x.Text == m.Text && x.At.Equal(m.At)
			}) {
				ids = append(ids, m.ID)
			}
			continue
		}
		for i, x := range st.Host {
			if !usedHost[i] && x.Text == m.Text {
				usedHost[i] = true
				ids = append(ids, m.ID)
				break
			}
		}
	}
	return ids
}

// acked forgets the handed-over messages a save acknowledged.
func (s *Store) acked(agentID string, ids []int64) {
	if len(ids) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if h := s.held[agentID]; h != nil {
		h.inflight = slices.DeleteFunc(h.inflight, func(m Message) bool { return slices.Contains(ids, m.ID) })
	}
}

// Listen calls fn with the recipient's agent id for every message sent
// with [Store.Send] (by any process) until ctx ends or the connection
// fails, and returns ctx's or the connection's error. It holds one
// connection of its own. fn runs in Listen's goroutine and should be quick
// (hand the id to a worker); it is called for every agent, held here or
// not. Since notifications sent while no one listens are not kept, also
// deliver pending messages when claiming an agent and on every lease
// renewal.
func (s *Store) Listen(ctx context.Context, fn func(agentID string)) error {
	c, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("pgstore: listen: %w", err)
	}
	conn := c.Hijack()
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+NotifyChannel); err != nil {
		return fmt.Errorf("pgstore: listen: %w", err)
	}
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("pgstore: listen: %w", err)
		}
		fn(n.Payload)
	}
}

// Relay delivers the messages of [Store.Send] to the agents this process
// runs, until ctx ends, and returns ctx's error: at once through
// LISTEN/NOTIFY ([Store.Listen], reconnected after every after a failure),
// and every `every` (default 1 s) by a sweep for pending messages of every
// agent this Store holds, which catches those sent before the agent was
// claimed or while the listening connection was down. find returns the
// local agent of an id, or nil when it does not run here; with an
// runner.Runner:
//
//	go store.Relay(ctx, time.Second, func(id string) pgstore.Recipient {
//		if a := runner.Agent(id); a != nil {
//			return a
//		}
//		return nil
//	})
//
// Delivery errors are logged (Options.Logger); a message not delivered
// stays pending for the next attempt or the next holder.
func (s *Store) Relay(ctx context.Context, every time.Duration, find func(agentID string) Recipient) error {
	if every <= 0 {
		every = time.Second
	}
	deliver := func(id string) {
		r := find(id)
		if r == nil {
			return
		}
		if _, err := s.DeliverPending(ctx, id, r); err != nil && ctx.Err() == nil && !errors.Is(err, ErrFenced) {
			s.opts.Logger.Warn("pgstore: delivering messages failed", "agent", id, "err", err)
		}
	}
	go func() {
		for ctx.Err() == nil {
			err := s.Listen(ctx, func(id string) { go deliver(id) })
			if ctx.Err() != nil {
				return
			}
			s.opts.Logger.Warn("pgstore: listening for messages failed; sweeping until it reconnects", "err", err)
			select {
			case <-ctx.Done():
			case <-time.After(every):
			}
		}
	}()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		s.mu.Lock()
		holds := false
		for _, h := range s.held {
			if !h.lost {
				holds = true
				break
			}
		}
		s.mu.Unlock()
		if holds {
			// Every pending message's agent (few: a message is pending
			// until its agent's next save), filtered here, rather than
			// sending the ids of thousands of held agents every time.
			rows, err := s.pool.Query(ctx, `SELECT DISTINCT agent_id FROM existence_messages WHERE acked_at IS NULL`)
			var ids []string
			if err == nil {
				ids, err = pgx.CollectRows(rows, pgx.RowTo[string])
			}
			if err != nil && ctx.Err() == nil {
				s.opts.Logger.Warn("pgstore: sweeping for messages failed", "err", err)
			}
			for _, id := range ids {
				if _, ok := s.Held(id); ok {
					deliver(id)
				}
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}
