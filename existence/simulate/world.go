package simulate

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/existence-loop/sdk/slot"
)

// SlotUpdate is one slot update of a simulated world: At after the run's
// start, Slot is posted to the own board of agent Agent (its id), or to
// the board the agents share when Agent is "". A zero Slot.UpdatedAt is
// stamped with the virtual time of the post.
type SlotUpdate struct {
	At    time.Duration
	Agent string
	Slot  slot.Slot
}

// World is the world that feeds a simulated run's agents with slot
// updates ([Config].World): what minds, feeds and people would post. The
// runner's scheduler handles the updates as in real time: a slot posted
// with notify_user asks for a cycle at once (coalesced, within the
// trigger gap and the cooldown), the others wait for the next heartbeat.
type World interface {
	// Updates returns the updates of a run of duration d from start for
	// agents, in any order (the run sorts them by At, stably), drawn from
	// seed (derived from [Config].Seed) when random: the same arguments
	// give the same updates. Errors end the run before it starts.
	Updates(agents []AgentSpec, start time.Time, d time.Duration, seed uint64) ([]SlotUpdate, error)
}

// Script is a [World] of fixed updates.
type Script []SlotUpdate

// Updates returns the script's updates. Errors: [ErrConfig] for an update
// to an agent the run does not have, at a negative time, or with a slot
// that does not validate (slot.Slot.Validate, after Clean).
func (s Script) Updates(agents []AgentSpec, _ time.Time, _ time.Duration, _ uint64) ([]SlotUpdate, error) {
	known := map[string]bool{}
	for _, a := range agents {
		known[a.ID] = true
	}
	for i, u := range s {
		switch {
		case u.At < 0:
			return nil, fmt.Errorf("%w: slot update %d is at %v, before the start", ErrConfig, i, u.At)
		case u.Agent != "" && !known[u.Agent]:
			return nil, fmt.Errorf("%w: slot update %d is for agent %q, which the run does not have", ErrConfig, i, u.Agent)
		}
		if err := u.Slot.Clean().Validate(); err != nil {
			return nil, fmt.Errorf("%w: slot update %d: %w", ErrConfig, i, err)
		}
	}
	return slices.Clone(s), nil
}

// worldStream derives the world's seed from Config.Seed, apart from the
// agents' streams (derive(seed, agent position)).
const worldStream = 1<<40 | 0x776f726c64 // "world"

// Defaults of [RandomWorld].
const (
	DefaultWorldSources = 3
	DefaultWorldEvery   = time.Hour
)

// RandomWorld is a [World] of Sources sources (feeds, sensors, jobs) that
// each post a slot about every Every: each interval is drawn uniformly
// between half and one and a half times Every. Source n posts the slot
// "source-n" ("Source n"), status completed (failed with the probability
// Failed), with the update's number in its summary, an importance and a
// confidence drawn uniformly in 0–1 (two decimals), next_run Every in
// seconds, and notify_user with the probability Notify; to the shared
// board, or with the probability PerAgent to one agent's own board (drawn
// uniformly). Zero fields take the defaults (3 sources, every hour).
type RandomWorld struct {
	Sources  int
	Every    time.Duration
	Notify   float64
	Failed   float64
	PerAgent float64
}

// Updates draws the updates from seed. Errors: [ErrConfig] for a
// negative count or interval, or a probability outside 0–1.
func (w RandomWorld) Updates(agents []AgentSpec, _ time.Time, d time.Duration, seed uint64) ([]SlotUpdate, error) {
	w.Sources = cmp.Or(w.Sources, DefaultWorldSources)
	w.Every = cmp.Or(w.Every, DefaultWorldEvery)
	if w.Sources < 0 || w.Every < 0 {
		return nil, fmt.Errorf("%w: RandomWorld needs a positive Sources and Every", ErrConfig)
	}
	for _, p := range []float64{w.Notify, w.Failed, w.PerAgent} {
		if math.IsNaN(p) || p < 0 || p > 1 {
			return nil, fmt.Errorf("%w: RandomWorld probabilities are 0 to 1, not %v", ErrConfig, p)
		}
	}
	var out []SlotUpdate
	for n := 1; n <= w.Sources; n++ {
		rng := newRand(derive(seed, uint64(n)))
		at := time.Duration(0)
		for k := 1; ; k++ {
			at += w.Every/2 + time.Duration(rng.Int64N(int64(w.Every)+1))
			if at >= d {
				break
			}
			status := slot.Completed
			if rng.Float64() < w.Failed {
				status = slot.Failed
			}
			u := SlotUpdate{At: at, Slot: slot.Slot{
				ID: fmt.Sprintf("source-%d", n), Title: fmt.Sprintf("Source %d", n), Status: status,
				Summary:    fmt.Sprintf("update %d of source %d", k, n),
				Importance: math.Round(rng.Float64()*100) / 100, Confidence: math.Round(rng.Float64()*100) / 100,
				NextRun: w.Every.Seconds(), NotifyUser: rng.Float64() < w.Notify,
			}}
			if len(agents) > 0 && rng.Float64() < w.PerAgent {
				u.Agent = agents[rng.IntN(len(agents))].ID
			}
			out = append(out, u)
		}
	}
	return out, nil
}

// post posts one update at the runner's current virtual time.
func (s *sim) post(ctx context.Context, u SlotUpdate, at time.Time) error {
	if u.Slot.UpdatedAt.IsZero() {
		u.Slot.UpdatedAt = at
	}
	if u.Agent == "" {
		s.sharedUpdates++
		return s.runners[0].PostSharedSlot(ctx, u.Slot)
	}
	sa := s.byID[u.Agent]
	sa.res.SlotUpdates++
	return sa.agent.PostSlot(ctx, u.Slot)
}
