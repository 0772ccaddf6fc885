package middleware

import "context"

// priorityKey marks a context whose model calls answer someone.
type priorityKey struct{}

// WithPriority returns ctx marked as carrying a priority call: one that
// answers someone now (a host message, an assigned task, an agent in
// crisis) rather than an autonomous cycle. Middleware that queues or
// waits treats such a call first: [WithRetry] retries it after
// [RetryPolicy].WaitPriority instead of the 5 s and 10 s waits meant to
// relieve a loaded server. runner.Runner marks the calls of its
// priority lane.
func WithPriority(ctx context.Context) context.Context {
	if IsPriority(ctx) {
		return ctx
	}
	return context.WithValue(ctx, priorityKey{}, true)
}

// IsPriority reports whether ctx was marked by [WithPriority].
func IsPriority(ctx context.Context) bool {
	v, _ := ctx.Value(priorityKey{}).(bool)
	return v
}
