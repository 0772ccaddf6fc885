// Package backoff is the SDK's one rule for exponential backoff: the wait
// after a failure doubles with each failure in a row, from a first wait up
// to a limit. [Next] gives the wait after the previous one (for loops that
// keep the current wait), [Nth] the wait after the n-th failure in a row
// (for code that counts failures or retries). Jitter, when wanted, is the
// caller's: model retries (middleware.RetryPolicy) and lock polling
// (internal/docfile.WaitLock) add their own. Waits are plain durations, so
// every caller sleeps on its own clock (real or injected).
//
// github.com/cenkalti/backoff/v5 was considered: its ExponentialBackOff is
// a stateful object with its own randomisation, while the SDK's callers
// need a stateless rule indexed by failure count (RetryPolicy.Backoff is
// part of the llm API) and deterministic waits on injected clocks; the rule
// is three lines.
package backoff
