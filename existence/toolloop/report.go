package toolloop

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/existence-loop/sdk/existence"
	"github.com/existence-loop/sdk/identity"
)

// ctxKey keys the values the executor puts on the context of a tool call.
type ctxKey int

const (
	artifactKey ctxKey = iota
	discoveryKey
	callerKey
)

// sink collects what one tool call reports. A tool may report from several
// goroutines, or after it timed out, so it is locked; merge adds one item
// to the list (de-duplicating as its kind requires).
type sink[T any] struct {
	mu    sync.Mutex
	items []T
	merge func([]T, T) []T
}

func (s *sink[T]) add(item T) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.items = s.merge(s.items, item)
}

func (s *sink[T]) list() []T {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.items)
}

func collect[T any](ctx context.Context, key ctxKey, merge func([]T, T) []T) (context.Context, func() []T) {
	s := &sink[T]{merge: merge}
	return context.WithValue(ctx, key, s), s.list
}

func report[T any](ctx context.Context, key ctxKey, item T) {
	if s, ok := ctx.Value(key).(*sink[T]); ok {
		s.add(item)
	}
}

// mergeArtifact appends path unless the list holds it already.
func mergeArtifact(list []string, path string) []string {
	if slices.Contains(list, path) {
		return list
	}
	return append(list, path)
}

// mergeDiscovery adds d to list: a discovery with the same Source (or, when
// both have no Source, the same Text) is replaced in place by d, so the
// list keeps the order of first report and the latest text.
func mergeDiscovery(list []identity.Discovery, d identity.Discovery) []identity.Discovery {
	for i, old := range list {
		if old.Source == d.Source && (d.Source != "" || old.Text == d.Text) {
			list[i] = d
			return list
		}
	}
	return append(list, d)
}

// ReportArtifact records that the running tool call produced an artifact,
// such as a workspace path it wrote. The [Executor] lists the artifacts of
// successful calls in [existence.Outcome.Artifacts], in the order first
// reported, without duplicates; they feed the futility assessment
// (spec §4). Tools call it with the ctx they were given; an empty artifact
// is ignored, and outside a tool call (or [CollectArtifacts]) it does
// nothing.
func ReportArtifact(ctx context.Context, artifact string) {
	if artifact != "" {
		report(ctx, artifactKey, artifact)
	}
}

// CollectArtifacts returns a context in which [ReportArtifact] records, and
// a function that lists what was recorded so far (a copy, in the order
// first reported, without duplicates). It lets code that calls a [Tool]
// directly (tests, other executors) see the artifacts it reports.
func CollectArtifacts(ctx context.Context) (context.Context, func() []string) {
	return collect(ctx, artifactKey, mergeArtifact)
}

// ReportDiscovery records that the running tool call found something
// outside the agent and documented it, such as a workspace file it read
// (Source: the path; Text: a one-line description). The [Executor] lists
// the discoveries of successful calls in [existence.Outcome.Discoveries],
// which feed the "WHAT YOU'VE FOUND OUTSIDE:" section of the prompt
// (spec §2 row 11).
//
// Text and Source are trimmed of surrounding white space, and a discovery
// with blank Text is ignored. Discoveries are listed in the order first
// reported; a later one with the same Source (or, when Source is empty,
// the same Text) replaces the earlier one in place, so a file read twice
// is listed once, with its latest text. d.At is kept as given; the agent
// stamps a zero At when it records the discovery. Tools call ReportDiscovery
// with the ctx they were given; outside a tool call (or
// [CollectDiscoveries]) it does nothing.
func ReportDiscovery(ctx context.Context, d identity.Discovery) {
	d.Text, d.Source = strings.TrimSpace(d.Text), strings.TrimSpace(d.Source)
	if d.Text != "" {
		report(ctx, discoveryKey, d)
	}
}

// CollectDiscoveries returns a context in which [ReportDiscovery] records,
// and a function that lists what was recorded so far (a copy, de-duplicated
// as ReportDiscovery describes). It lets code that calls a [Tool] directly
// (tests, other executors) see the discoveries it reports.
func CollectDiscoveries(ctx context.Context) (context.Context, func() []identity.Discovery) {
	return collect(ctx, discoveryKey, mergeDiscovery)
}

// WithCaller returns a context that carries a, the assignment on whose
// behalf tools are called; [Caller] returns it. The [Executor] sets it on
// the ctx of every Tool.Call; code that calls a [Tool] directly (tests,
// other executors) can set it the same way.
func WithCaller(ctx context.Context, a existence.Assignment) context.Context {
	return context.WithValue(ctx, callerKey, a)
}

// Caller returns the [existence.Assignment] the executor is running when a
// tool is called: the calling agent's id and name (AgentID, AgentName),
// its goal and task. A tool such as send_message uses it to know the
// sending agent. The boolean is false outside a tool call run by an
// [Executor] (or a ctx from [WithCaller]); tools that need a caller should
// then return an error rather than guess.
func Caller(ctx context.Context) (existence.Assignment, bool) {
	a, ok := ctx.Value(callerKey).(existence.Assignment)
	return a, ok
}
