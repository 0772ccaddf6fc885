package requests

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/existence-loop/sdk/identity"
	"github.com/existence-loop/sdk/internal/docfile"
	"github.com/existence-loop/sdk/internal/runes"
)

// Kind is what an agent asks of its human.
type Kind string

// Request kinds: what a person is asked to do with a request.
const (
	// Approval asks for a yes or no: approve or reject.
	Approval Kind = "approval"
	// Question asks for an answer in words.
	Question Kind = "question"
	// BuildRequest asks a person to build or install something the agent
	// cannot (its text is usually a spec).
	BuildRequest Kind = "build_request"
)

// Kinds lists the valid kinds, in the order tools and pages show them.
var Kinds = []Kind{Approval, Question, BuildRequest}

// Valid reports whether k is one of [Kinds].
func (k Kind) Valid() bool { return slices.Contains(Kinds, k) }

// ParseKind maps a kind as a model or a person writes it ("approval",
// "Question", "build request", "build-request") to a [Kind]. Errors:
// [ErrInvalid].
func ParseKind(s string) (Kind, error) {
	k := Kind(strings.NewReplacer(" ", "_", "-", "_").Replace(strings.ToLower(strings.TrimSpace(s))))
	if k == "build" {
		k = BuildRequest
	}
	if !k.Valid() {
		return "", fmt.Errorf("%w: kind %q: want approval, question or build_request", ErrInvalid, s)
	}
	return k, nil
}

// Status is where a [Request] is in its lifecycle.
type Status string

// Request statuses.
const (
	// Pending: waiting for a person.
	Pending Status = "pending"
	// Approved: a person approved it (any kind; usually an approval).
	Approved Status = "approved"
	// Rejected: a person refused it, with a reason as the answer.
	Rejected Status = "rejected"
	// Answered: a person answered it in words.
	Answered Status = "answered"
)

// Ended reports whether s is final (anything but [Pending]).
func (s Status) Ended() bool { return s == Approved || s == Rejected || s == Answered }

func (s Status) valid() bool { return s == Pending || s.Ended() }

// Request is one request from an agent to its human. Values returned by a
// [Queue] are copies the caller owns.
type Request struct {
	// ID is unique within the queue: "req-" and a zero-padded sequence
	// number, e.g. "req-000042"; never reused. People may type just the
	// number (see [NormalizeID]).
	ID string `json:"id"`
	// Agent is the id of the agent that asked.
	Agent string `json:"agent"`
	// Kind is approval, question or build_request.
	Kind Kind `json:"kind"`
	// Text is what the agent asks: non-blank, at most
	// [Options.MaxText] characters (Unicode code points).
	Text string `json:"text"`
	// Status is open until a person answers.
	Status Status `json:"status"`
	// Answer is the person's answer or reason, at most [Options.MaxAnswer]
	// characters; may be empty for an approval.
	Answer string `json:"answer,omitempty"`
	// Created is when the agent asked; Ended when a person answered (zero
	// while open).
	Created time.Time `json:"created"`
	Ended   time.Time `json:"ended,omitzero"`
}

// Age returns how long the request has waited (until now while open, until
// Ended otherwise).
func (r Request) Age(now time.Time) time.Duration {
	if !r.Ended.IsZero() {
		return r.Ended.Sub(r.Created)
	}
	return now.Sub(r.Created)
}

// Options configure a [Queue]. The zero value gives the defaults.
type Options struct {
	// Now tells the time; default time.Now.
	Now func() time.Time
	// MaxText and MaxAnswer cut a request's text and an answer, in
	// characters (code points). Defaults 2000 and 1000.
	MaxText   int
	MaxAnswer int
	// MaxOpen is how many open requests one agent may have; beyond it
	// [Queue.Submit] refuses with [ErrFull]. Default 20.
	MaxOpen int
	// MaxRequests is how many ended requests are kept (oldest ended
	// dropped first). Default 1000.
	MaxRequests int
}

// Defaults of [Options].
const (
	DefaultMaxText     = 2000
	DefaultMaxAnswer   = 1000
	DefaultMaxOpen     = 20
	DefaultMaxRequests = 1000
)

func (o Options) withDefaults() Options {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.MaxText <= 0 {
		o.MaxText = DefaultMaxText
	}
	if o.MaxAnswer <= 0 {
		o.MaxAnswer = DefaultMaxAnswer
	}
	if o.MaxOpen <= 0 {
		o.MaxOpen = DefaultMaxOpen
	}
	if o.MaxRequests <= 0 {
		o.MaxRequests = DefaultMaxRequests
	}
	return o
}

// Errors returned by a [Queue]. Match them with errors.Is.
var (
	// ErrInvalid: a blank text, an unknown kind or status, an invalid
	// agent id.
	ErrInvalid = errors.New("requests: invalid argument")
	// ErrNotFound: no request has the given id.
	ErrNotFound = errors.New("requests: no such request")
	// ErrEnded: the request was already answered; it is unchanged.
	ErrEnded = errors.New("requests: request already answered")
	// ErrFull: the agent already has [Options.MaxOpen] open requests, or
	// the file would exceed its size limit.
	ErrFull = errors.New("requests: too many open requests")
)

// NormalizeID turns what a person types ("3", "#3", "req-3", "req-000003")
// into a request id ("req-000003"). Anything else is returned trimmed, as
// is.
func NormalizeID(s string) string {
	s = strings.TrimPrefix(strings.TrimSpace(s), "#")
	num := strings.TrimPrefix(s, "req-")
	if n, err := strconv.ParseUint(num, 10, 64); err == nil && n > 0 {
		return formatID(n)
	}
	return s
}

func formatID(n uint64) string { return fmt.Sprintf("req-%06d", n) }

// Queue is the request queue of one state directory or database. Create it
// with [Open], [OpenBackend] or [NewMemory]. All methods are safe for
// concurrent use; it holds no file open between calls.
type Queue struct {
	opts  Options
	sem   chan struct{} // in-process lock; a channel so waiting honours ctx
	store store
	// backend, when set ([OpenBackend]), keeps the document instead of
	// store.
	backend Backend
}

// store loads and saves the document: a file ([fileStore]) or memory.
type store interface {
	docfile.Store[document]
	Save(d *document) error
}

func newQueue(opts Options, s store) *Queue {
	return &Queue{opts: opts.withDefaults(), sem: make(chan struct{}, 1), store: s}
}

// NewMemory returns a Queue kept in memory only; its requests are lost when
// the process ends.
func NewMemory(opts Options) *Queue { return newQueue(opts, docfile.NewMemory(format)) }

func (q *Queue) now() time.Time { return q.opts.Now().UTC().Round(0) }

// Now returns the current time by the queue's clock ([Options].Now), for
// computing a request's age with [Request.Age] or [Describe].
func (q *Queue) Now() time.Time { return q.now() }

// update runs fn on the current document under both locks and saves it when
// fn reports a change.
func (q *Queue) update(ctx context.Context, fn func(d *document, now time.Time) (bool, error)) error {
	if q.backend != nil {
		return q.updateBackend(ctx, func(d *document) (bool, error) {
			changed, err := fn(d, q.now())
			if changed && err == nil {
				d.trim(q.opts.MaxRequests)
			}
			return changed, err
		})
	}
	return docfile.Update(ctx, q.sem, q.store, func(d *document) error {
		changed, err := fn(d, q.now())
		if err != nil || !changed {
			return err
		}
		d.trim(q.opts.MaxRequests)
		return q.store.Save(d)
	})
}

// Submit files a request from agentID and returns it, [Pending]. The text is
// trimmed and cut to [Options.MaxText] characters. Errors: [ErrInvalid]
// (blank text, bad kind or agent id), [ErrFull], [identity.ErrCorrupt], ctx's error.
func (q *Queue) Submit(ctx context.Context, agentID string, kind Kind, text string) (Request, error) {
	if err := identity.ValidateID(agentID); err != nil {
		return Request{}, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if !kind.Valid() {
		return Request{}, fmt.Errorf("%w: kind %q: want approval, question or build_request", ErrInvalid, kind)
	}
	text = strings.TrimSpace(text)
	if text == "" {
		return Request{}, fmt.Errorf("%w: blank request text", ErrInvalid)
	}
	text = runes.Head(text, q.opts.MaxText)
	var r Request
	err := q.update(ctx, func(d *document, now time.Time) (bool, error) {
		open := 0
		for _, x := range d.Requests {
			if x.Agent == agentID && x.Status == Pending {
				open++
			}
		}
		if open >= q.opts.MaxOpen {
			return false, fmt.Errorf("%w: %s already has %d open requests; wait for answers", ErrFull, agentID, open)
		}
		d.Seq++
		r = Request{ID: formatID(d.Seq), Agent: agentID, Kind: kind, Text: text, Status: Pending, Created: now}
		d.Requests = append(d.Requests, r)
		return true, nil
	})
	if err != nil {
		return Request{}, err
	}
	return r, nil
}

// Answer ends the pending request id with status ([Approved], [Rejected] or
// [Answered]) and the answer (trimmed, cut to [Options.MaxAnswer]). An
// [Answered] status needs a non-blank answer. The id may be written as a
// person types it (see [NormalizeID]). Errors: [ErrInvalid], [ErrNotFound],
// [ErrEnded], [identity.ErrCorrupt], ctx's error.
func (q *Queue) Answer(ctx context.Context, id string, status Status, answer string) (Request, error) {
	id = NormalizeID(id)
	if !status.Ended() {
		return Request{}, fmt.Errorf("%w: status %q: want approved, rejected or answered", ErrInvalid, status)
	}
	answer = runes.Head(strings.TrimSpace(answer), q.opts.MaxAnswer)
	if status == Answered && answer == "" {
		return Request{}, fmt.Errorf("%w: blank answer", ErrInvalid)
	}
	var r Request
	err := q.update(ctx, func(d *document, now time.Time) (bool, error) {
		i := d.index(id)
		if i < 0 {
			return false, fmt.Errorf("%w: %q", ErrNotFound, id)
		}
		x := &d.Requests[i]
		if x.Status.Ended() {
			return false, fmt.Errorf("%w: %s is %s", ErrEnded, id, x.Status)
		}
		x.Status, x.Answer, x.Ended = status, answer, now
		r = *x
		return true, nil
	})
	if err != nil {
		return Request{}, err
	}
	return r, nil
}

// Get returns the request id (see [NormalizeID]). Errors: [ErrNotFound],
// [identity.ErrCorrupt], ctx's error.
func (q *Queue) Get(ctx context.Context, id string) (Request, error) {
	id = NormalizeID(id)
	d, err := q.snapshot(ctx)
	if err != nil {
		return Request{}, err
	}
	if i := d.index(id); i >= 0 {
		return d.Requests[i], nil
	}
	return Request{}, fmt.Errorf("%w: %q", ErrNotFound, id)
}

// Filter selects requests for [Queue.List]; zero fields match everything.
type Filter struct {
	// Agent keeps one agent's requests.
	Agent string
	// Status keeps requests with this status.
	Status Status
}

// List returns the requests f selects, oldest first. Errors: [identity.ErrCorrupt],
// ctx's error.
func (q *Queue) List(ctx context.Context, f Filter) ([]Request, error) {
	d, err := q.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	out := []Request{}
	for _, r := range d.Requests {
		if (f.Agent == "" || r.Agent == f.Agent) && (f.Status == "" || r.Status == f.Status) {
			out = append(out, r)
		}
	}
	return out, nil
}

// snapshot returns one complete version of the document without locks
// (saves replace the file by atomic rename).
func (q *Queue) snapshot(ctx context.Context) (*document, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if q.backend != nil {
		return q.loadBackend(ctx)
	}
	return q.store.Load()
}
