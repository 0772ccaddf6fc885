package prompttest

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/prompt"
	"github.com/existence-loop/sdk/suffering"
)

// DefaultNow is the fixed clock of a new [State]: 2026-01-25 12:00:00 UTC.
var DefaultNow = time.Date(2026, 1, 25, 12, 0, 0, 0, time.UTC)

// DefaultUptime is how long a new [State]'s agent has been running: its
// identity was created DefaultUptime before Now.
const DefaultUptime = 3*time.Hour + 25*time.Minute

// GoalSpacing is the time between the starts of consecutive goals added to
// a [State]; each ended goal ended GoalDuration after it started. The last
// goal starts GoalSpacing before Now.
const (
	GoalSpacing  = 10 * time.Minute
	GoalDuration = 4*time.Minute + 30*time.Second
)

// State builds a [prompt.View] for tests, fluently: each method changes the
// state and returns it, and [State.View] produces the view. Everything is
// deterministic: a fixed clock ([DefaultNow], see [State.At]) and generated
// texts that depend only on their position.
//
//	v := prompttest.NewState("Cedar").
//		Opinions(20).
//		Stressor("repeated_failure", 0.6, "4 of 5 goals failed", "complete a goal").
//		Goals(identity.Done, identity.Failed, identity.Abandoned).
//		Peer("Cipher", "I analyse what the others find.").
//		View()
//
// The builder bypasses identity caps on purpose (Opinions(30) holds 30
// opinions), so that tests can check what the prompt shows of over-cap
// state. A State is not safe for concurrent use; View returns independent
// copies.
type State struct {
	now    time.Time
	uptime time.Duration
	// created is used instead of now − uptime when fixedCreated is set.
	created      time.Time
	fixedCreated bool
	id           identity.Identity
	suf          suffering.State
	hasSuf       bool
	peers        []prompt.Peer
	inbox        []identity.AgentMessage
	host         []identity.AgentMessage
	task         *prompt.Task
	presence     time.Time
	limits       identity.Limits
	values       *prompt.Values
	editors      []func(*prompt.View)
}

// NewState returns a state for an agent called name (its id is name in
// lower case), created [DefaultUptime] before [DefaultNow], with nothing
// else: no worldview, opinions, questions, narrative, peers, goals or
// suffering.
func NewState(name string) *State {
	return &State{
		now:    DefaultNow,
		uptime: DefaultUptime,
		id:     identity.Identity{AgentID: strings.ToLower(name), Name: name},
	}
}

// ID sets the agent id (e.g. "scout").
func (s *State) ID(id string) *State { s.id.AgentID = id; return s }

// At sets the clock: the View's Now. The identity's creation time and goal
// times move with it.
func (s *State) At(now time.Time) *State { s.now = now; return s }

// Running sets how long the agent has been running: its loop started
// (View.Started) and its identity was created (CreatedAt) d before Now
// (Running(0): "Running for: 0s").
func (s *State) Running(d time.Duration) *State {
	s.uptime, s.created, s.fixedCreated = d, time.Time{}, false
	return s
}

// CreatedAt sets an absolute creation and loop start time instead; the
// zero time leaves them unknown ("Running for: unknown").
func (s *State) CreatedAt(t time.Time) *State {
	s.created, s.fixedCreated = t, true
	return s
}

// LastPresence sets when a person was last present (View.LastPresence);
// host messages count too, at their delivery times.
func (s *State) LastPresence(t time.Time) *State { s.presence = t; return s }

// Traits sets the identity's traits.
func (s *State) Traits(traits ...string) *State { s.id.Traits = traits; return s }

// Worldview sets the worldview.
func (s *State) Worldview(text string) *State { s.id.Worldview = text; return s }

// Opinion appends an opinion; its formation time is set by View (one hour
// apart, the newest an hour before Now).
func (s *State) Opinion(domain, text string) *State {
	s.id.Opinions = append(s.id.Opinions, identity.Opinion{Text: text, Domain: domain})
	return s
}

// Opinions appends n generated opinions: "opinion K" in domain "domain K",
// K counting all opinions from 1.
func (s *State) Opinions(n int) *State {
	for range n {
		k := len(s.id.Opinions) + 1
		s.Opinion(fmt.Sprintf("domain %d", k), fmt.Sprintf("opinion %d", k))
	}
	return s
}

// Question appends an open question.
func (s *State) Question(q string) *State {
	s.id.Questions = append(s.id.Questions, q)
	return s
}

// Questions appends n generated questions: "question K?".
func (s *State) Questions(n int) *State {
	for range n {
		s.Question(fmt.Sprintf("question %d?", len(s.id.Questions)+1))
	}
	return s
}

// Narrative sets the narrative.
func (s *State) Narrative(text string) *State { s.id.Narrative = text; return s }

// Discovery appends a discovery with an optional source (e.g. a path).
func (s *State) Discovery(text, source string) *State {
	s.id.Discoveries = append(s.id.Discoveries, identity.Discovery{Text: text, Source: source})
	return s
}

// Discoveries appends n generated discoveries: "discovery K" from
// "/workspace/K.md".
func (s *State) Discoveries(n int) *State {
	for range n {
		k := len(s.id.Discoveries) + 1
		s.Discovery(fmt.Sprintf("discovery %d", k), fmt.Sprintf("/workspace/%d.md", k))
	}
	return s
}

// Stressor adds an active stressor of type typ (normalised as the
// suffering package does) at the given severity (0–1), with onset at Now.
// Adding a type twice, or more than [suffering.MaxActive], changes nothing,
// as in the suffering package; an invalid severity panics, since it is a
// bug in the test.
func (s *State) Stressor(typ string, severity float64, description, condition string) *State {
	s.hasSuf = true
	_, err := s.suf.Add(s.now, suffering.Input{Type: typ, Severity: severity, Description: description, Condition: condition})
	if err != nil && !isBenign(err) {
		panic("prompttest: " + err.Error())
	}
	return s
}

func isBenign(err error) bool {
	return errors.Is(err, suffering.ErrAlreadyActive) || errors.Is(err, suffering.ErrFull)
}

// Suffering replaces the whole suffering state.
func (s *State) Suffering(st suffering.State) *State {
	s.suf, s.hasSuf = st.Clone(), true
	return s
}

// Goal appends a goal with the given status and objective. Times are set
// by View: goals are [GoalSpacing] apart, the last one starting GoalSpacing
// before Now, and an ended goal ends [GoalDuration] after it starts.
func (s *State) Goal(status identity.GoalStatus, objective string) *State {
	s.id.Goals = append(s.id.Goals, identity.Goal{
		ID:        fmt.Sprintf("g%d", len(s.id.Goals)+1),
		Objective: objective,
		Status:    status,
	})
	return s
}

// Goals appends one generated goal per status: "goal K", K counting all
// goals from 1. Goals(identity.Done, identity.Failed) adds "[DONE] goal 1"
// and "[FAILED] goal 2".
func (s *State) Goals(statuses ...identity.GoalStatus) *State {
	for _, st := range statuses {
		s.Goal(st, fmt.Sprintf("goal %d", len(s.id.Goals)+1))
	}
	return s
}

// Outcome sets the outcome summary and the broken tools of the last goal
// added (no-op without goals).
func (s *State) Outcome(summary string, brokenTools ...string) *State {
	if n := len(s.id.Goals); n > 0 {
		s.id.Goals[n-1].Outcome = summary
		s.id.Goals[n-1].BrokenTools = brokenTools
	}
	return s
}

// Peer appends a peer (its id is name in lower case).
func (s *State) Peer(name, narrative string) *State {
	s.peers = append(s.peers, prompt.Peer{ID: strings.ToLower(name), Name: name, Narrative: narrative})
	return s
}

// Inbox appends an unread message from a peer. Messages are a minute apart,
// the last one a minute before Now.
func (s *State) Inbox(from, text string) *State {
	s.inbox = append(s.inbox, identity.AgentMessage{From: from, Text: text})
	return s
}

// Host appends an unread message from the host (a person).
func (s *State) Host(text string) *State {
	s.host = append(s.host, identity.AgentMessage{From: "host", Text: text})
	return s
}

// Task assigns a task with the given description (id "task-1").
func (s *State) Task(description string) *State {
	s.task = &prompt.Task{ID: "task-1", Description: description}
	return s
}

// Limits sets the View's limits (zero fields mean the defaults).
func (s *State) Limits(l identity.Limits) *State { s.limits = l; return s }

// Values returns the application data the View will carry, for
// [prompt.Key.Set]:
//
//	MyKey.Set(st.Values(), myValue)
func (s *State) Values() *prompt.Values {
	if s.values == nil {
		s.values = &prompt.Values{}
	}
	return s.values
}

// Edit registers a function that adjusts the View after View builds it,
// for anything the builder does not cover.
func (s *State) Edit(f func(v *prompt.View)) *State {
	s.editors = append(s.editors, f)
	return s
}

// Identity returns a copy of the identity View would use (times set).
func (s *State) Identity() identity.Identity {
	id := s.id.Clone()
	if s.fixedCreated {
		id.CreatedAt = s.created
	} else {
		id.CreatedAt = s.now.Add(-s.uptime)
	}
	for i := range id.Opinions {
		if id.Opinions[i].Formed.IsZero() {
			id.Opinions[i].Formed = s.now.Add(-time.Duration(len(id.Opinions)-i) * time.Hour)
		}
	}
	for i := range id.Discoveries {
		if id.Discoveries[i].At.IsZero() {
			id.Discoveries[i].At = s.now.Add(-time.Duration(len(id.Discoveries)-i) * time.Hour)
		}
	}
	for i := range id.Goals {
		g := &id.Goals[i]
		if g.Started.IsZero() {
			g.Started = s.now.Add(-time.Duration(len(id.Goals)-i) * GoalSpacing)
		}
		if g.Status.Ended() && g.Ended.IsZero() {
			g.Ended = g.Started.Add(GoalDuration)
		}
	}
	return id
}

// View returns a new view of the state. Each call returns an independent
// deep copy.
func (s *State) View() *prompt.View {
	id := s.Identity()
	v := &prompt.View{
		Now:          s.now,
		Started:      id.CreatedAt,
		LastPresence: s.presence,
		Identity:     &id,
		Peers:        slices.Clone(s.peers),
		Limits:       s.limits,
		Values:       s.values,
	}
	if s.hasSuf {
		st := s.suf.Clone()
		v.Suffering = &st
	}
	v.Inbox = stamp(s.inbox, s.now)
	v.Host = stamp(s.host, s.now)
	if s.task != nil {
		t := *s.task
		v.Task = &t
	}
	for _, f := range s.editors {
		f(v)
	}
	return v
}

func stamp(ms []identity.AgentMessage, now time.Time) []identity.AgentMessage {
	out := slices.Clone(ms)
	for i := range out {
		if out[i].At.IsZero() {
			out[i].At = now.Add(-time.Duration(len(out)-i) * time.Minute)
		}
	}
	return out
}
