package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/llm/llmtest"
)

// longGoal is longer than any log line cut, with non-ASCII text and a
// newline, to show the stream carries the goal in full.
var longGoal = "Écrire un index de l'espace de travail — every file, with one line on what it holds and who wrote it;\n" +
	strings.Repeat("then cross-check the index against list_files and fix what is missing. ", 4)

func TestEventsStreamGoalChosen(t *testing.T) {
	f := newFixture(t, fixtureOptions{token: "s3cret", replies: []llmtest.Reply{goalReply(t, longGoal)}})
	ctx := context.Background()
	stream := f.openStream(t, ctx, "/events")

	require.NoError(t, f.agent.Tick(ctx))
	e := stream.until(existence.EventGoalChosen)
	assert.Equal(t, strings.TrimSpace(longGoal), e.Text, "the full goal")
	assert.Equal(t, "because a person may need it", e.Reasoning)
	assert.Equal(t, "agent", e.AgentID)
	assert.Equal(t, "Wren", e.Agent)
	assert.Equal(t, t0, e.Time.UTC())
	// The cycle's statistics follow.
	assert.NotNil(t, stream.until(existence.EventCycle).Cycle)
}

func TestEventsKindFilter(t *testing.T) {
	f := newFixture(t, fixtureOptions{replies: []llmtest.Reply{goalReply(t, "map the workspace")}})
	ctx := context.Background()
	stream := f.openStream(t, ctx, "/events?kind=cycle,goal_chosen&kind=+goal_ended")

	require.NoError(t, f.agent.Tick(ctx))
	require.NoError(t, f.agent.WaitGoal(ctx))
	f.clock.Advance(6 * time.Second)
	require.NoError(t, f.agent.Tick(ctx)) // records DONE, chooses again

	var kinds []string
	for range 5 {
		m := stream.next()
		kinds = append(kinds, m.Event)
	}
	// No model_call, task or other events in between.
	assert.Equal(t, []string{"goal_chosen", "cycle", "goal_ended", "goal_chosen", "cycle"}, kinds)
}

func TestEventsKeepAlive(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	stream := f.openStream(t, context.Background(), "/events")
	f.clock.Advance(15 * time.Second)
	assert.Equal(t, sseMessage{Comment: "keep-alive"}, stream.next())
	f.clock.Advance(15 * time.Second)
	assert.Equal(t, sseMessage{Comment: "keep-alive"}, stream.next())
}

func TestEventsEndOnShutdown(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	stream := f.openStream(t, context.Background(), "/events")
	require.Equal(t, 1, f.hub.subscribers())

	f.hub.close() // what http.Server.Shutdown does, through RegisterOnShutdown
	_, err := stream.read()
	assert.ErrorIs(t, err, io.EOF, "the stream ends")

	var e errorBody
	f.call(t, http.MethodGet, "/events", "", http.StatusServiceUnavailable, &e)
	assert.Equal(t, "the server is shutting down", e.Error)
}

func TestEventsEndWhenClientGoes(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	f.openStream(t, ctx, "/events")
	require.Equal(t, 1, f.hub.subscribers())

	cancel()
	f.ts.Close() // returns once every handler has returned
	assert.Equal(t, 0, f.hub.subscribers(), "the handler unsubscribed")
}

func TestEventsSubscriberLimit(t *testing.T) {
	f := newFixture(t, fixtureOptions{maxSubscribers: 2})
	ctx := context.Background()
	f.openStream(t, ctx, "/events")
	f.openStream(t, ctx, "/events")
	var e errorBody
	f.call(t, http.MethodGet, "/events", "", http.StatusServiceUnavailable, &e)
	assert.Equal(t, "too many event subscribers", e.Error)
}

func event(i int) existence.Event {
	return existence.Event{Kind: existence.EventGoalChosen, Time: t0, AgentID: "agent", Agent: "Wren", Text: fmt.Sprint("goal ", i)}
}

// TestHubDropsForSlowSubscriber: publish never blocks; what does not fit a
// subscriber's buffer is dropped and counted for it alone.
func TestHubDropsForSlowSubscriber(t *testing.T) {
	h := newHub(2, 2)
	slow, err := h.subscribe()
	require.NoError(t, err)
	fast, err := h.subscribe()
	require.NoError(t, err)
	_, err = h.subscribe()
	require.ErrorIs(t, err, errTooManySubscribers)

	h.publish(event(1))
	<-fast.ch
	h.publish(event(2))
	<-fast.ch
	for i := 3; i <= 6; i++ {
		h.publish(event(i)) // slow is full after event 2
	}
	assert.Equal(t, uint64(4), slow.dropped.Load())
	assert.Equal(t, uint64(2), fast.dropped.Load(), "fast kept up until it stopped reading too")
	assert.Equal(t, uint64(6), h.dropped.Load())
	assert.Equal(t, event(1), <-slow.ch)
	assert.Equal(t, event(2), <-slow.ch)

	h.unsubscribe(fast)
	h.unsubscribe(fast) // twice is fine
	h.close()
	h.close() // idempotent
	h.publish(event(7))
	_, ok := <-slow.ch
	assert.False(t, ok, "closed")
	h.unsubscribe(slow) // after close is fine
	_, err = h.subscribe()
	assert.ErrorIs(t, err, errHubClosed)
}

// TestStreamReportsDropped: after events were dropped, the stream says how
// many, then drains what was buffered and ends when the hub closes.
func TestStreamReportsDropped(t *testing.T) {
	h := newHub(2, 1)
	s := newServer(serverConfig{Events: h})
	sub, err := h.subscribe()
	require.NoError(t, err)
	for i := 1; i <= 5; i++ {
		h.publish(event(i))
	}
	h.close()

	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/events", nil)
	s.stream(req, &stream{w: rec, rc: http.NewResponseController(rec)}, sub, nil, nil)

	data := func(i int) string {
		b, err := json.Marshal(event(i))
		require.NoError(t, err)
		return string(b)
	}
	want := "event: goal_chosen\ndata: " + data(1) + "\n\n" +
		"event: dropped\ndata: {\"dropped\":3}\n\n" +
		"event: goal_chosen\ndata: " + data(2) + "\n\n"
	assert.Equal(t, want, rec.Body.String())
	assert.True(t, rec.Flushed)
}

// TestHubConcurrent exercises publish, subscribe, unsubscribe and close
// from many goroutines (run with -race).
func TestHubConcurrent(t *testing.T) {
	h := newHub(4, 100)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for j := range 200 {
				h.publish(event(i*1000 + j))
			}
		}()
		go func() {
			defer wg.Done()
			for range 20 {
				s, err := h.subscribe()
				if err != nil {
					return // closed
				}
				select {
				case <-s.ch:
				default:
				}
				h.unsubscribe(s)
			}
		}()
	}
	h.close()
	wg.Wait()
	assert.Equal(t, 0, h.subscribers())
}
