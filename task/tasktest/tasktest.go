package tasktest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/existence-loop/sdk/task"
)

// Harness gives the suite new queues and the hook that reaches under the
// [task.Queue] interface. Only New is required; a nil hook skips the
// subtests that need it (t.Skip names the hook).
type Harness struct {
	// New returns a new, empty queue that applies l (Timeout,
	// MaxDescription and MaxResult are set; MaxTasks is zero, the
	// default) and registers its own cleanup with t.Cleanup.
	New func(t *testing.T, l task.Limits) task.Queue
	// Age makes d pass for the tasks of q, as if the clock had moved on
	// by d: a fake clock advanced, or the stored assigned times moved
	// back. Nil skips the expiry subtests.
	Age func(t *testing.T, q task.Queue, d time.Duration)
}

// limits are the caps every queue of the suite gets: short enough that
// the suite reaches them.
var limits = task.Limits{Timeout: time.Hour, MaxDescription: 40, MaxResult: 30}

// Run runs the conformance suite against the queues h.New returns, one
// new queue per subtest.
func Run(t *testing.T, h Harness) {
	if h.New == nil {
		t.Fatal("tasktest: Harness.New is required")
	}
	for _, c := range []struct {
		name string
		fn   func(t *testing.T, h Harness)
	}{
		{"SubmitRule", testSubmitRule},
		{"Lifecycle", testLifecycle},
		{"IDs", testIDs},
		{"Targeted", testTargeted},
		{"OldestFirst", testOldestFirst},
		{"PeekDoesNotClaim", testPeek},
		{"Finish", testFinish},
		{"ResultCut", testResultCut},
		{"BadAgent", testBadAgent},
		{"Expiry", testExpiry},
		{"ConcurrentClaims", testConcurrentClaims},
		{"Cancel", testCancel},
		{"CancelRacesClaims", testCancelRacesClaims},
	} {
		t.Run(c.name, func(t *testing.T) { c.fn(t, h) })
	}
}

func must[T any](t *testing.T, what string) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return v
	}
}

func wantErr(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Errorf("%s: error %v, want one matching %v", what, err, target)
	}
}

// testSubmitRule: the one submission rule, task.CheckSubmit, in every
// backend: blank descriptions and bad agent ids are refused with
// ErrInvalid and store nothing; descriptions are trimmed and cut to
// MaxDescription code points.
func testSubmitRule(t *testing.T, h Harness) {
	ctx := context.Background()
	q := h.New(t, limits)
	for _, c := range []struct{ desc, agent string }{
		{"", ""}, {"   \n\t ", ""}, {"x", "../cedar"}, {"x", "Cedar"}, {"x", "a/b"}, {"x", "-a"}, {"x", strings.Repeat("a", 65)},
	} {
		_, err := q.Submit(ctx, c.desc, c.agent)
		wantErr(t, fmt.Sprintf("Submit(%q, %q)", c.desc, c.agent), err, task.ErrInvalid)
	}
	if all := must[[]task.Task](t, "List")(q.List(ctx)); len(all) != 0 {
		t.Errorf("refused submissions stored tasks: %+v", all)
	}
	long := "  " + strings.Repeat("é", 50) + "  "
	got := must[task.Task](t, "Submit")(q.Submit(ctx, long, "scout"))
	want, _ := task.CheckSubmit(long, "scout", limits.MaxDescription)
	if got.Description != want || utf8.RuneCountInString(got.Description) != limits.MaxDescription {
		t.Errorf("Submit stored description %q, want %q (trimmed, %d code points)", got.Description, want, limits.MaxDescription)
	}
	if got.Status != task.Pending || got.Agent != "scout" || got.AssignedTo != "" || got.Submitted.IsZero() {
		t.Errorf("Submit = %+v, want a pending task for scout with a submitted time", got)
	}
	if stored := must[task.Task](t, "Get")(q.Get(ctx, got.ID)); stored.Description != want {
		t.Errorf("Get = %+v, want the description %q", stored, want)
	}
}

// testLifecycle: pending → assigned → completed, with the times set on
// the way, and the agent gets its assigned task back from Next (resume).
func testLifecycle(t *testing.T, h Harness) {
	ctx := context.Background()
	q := h.New(t, limits)
	sub := must[task.Task](t, "Submit")(q.Submit(ctx, " map the workspace ", ""))
	if sub.Description != "map the workspace" {
		t.Errorf("Submit description %q, want it trimmed", sub.Description)
	}
	got := must[*task.Task](t, "Next")(q.Next(ctx, "scout"))
	if got == nil || got.ID != sub.ID || got.Status != task.Assigned || got.AssignedTo != "scout" || got.Assigned.IsZero() {
		t.Fatalf("Next = %+v, want %s assigned to scout with an assigned time", got, sub.ID)
	}
	again := must[*task.Task](t, "second Next")(q.Next(ctx, "scout"))
	if again == nil || again.ID != sub.ID {
		t.Errorf("second Next = %+v, want %s back (an agent resumes its task)", again, sub.ID)
	}
	if other := must[*task.Task](t, "Next for builder")(q.Next(ctx, "builder")); other != nil {
		t.Errorf("Next for builder = %+v, want nil: the only task is scout's now", other)
	}
	done := must[task.Task](t, "Finish")(q.Finish(ctx, sub.ID, true, "a map"))
	if done.Status != task.Completed || done.Result != "a map" || done.Ended.IsZero() || !done.Status.Ended() {
		t.Errorf("Finish = %+v, want completed with the result and an end time", done)
	}
	if stored := must[task.Task](t, "Get")(q.Get(ctx, sub.ID)); stored.Status != task.Completed || stored.Result != "a map" {
		t.Errorf("Get after Finish = %+v", stored)
	}
	if next := must[*task.Task](t, "Next after Finish")(q.Next(ctx, "scout")); next != nil {
		t.Errorf("Next after Finish = %+v, want nil", next)
	}
}

// testIDs: ids are "task-" and a zero-padded sequence number, unique, in
// submission order, and List returns the tasks oldest submitted first.
func testIDs(t *testing.T, h Harness) {
	ctx := context.Background()
	q := h.New(t, limits)
	seen := map[string]bool{}
	var ids []string
	for i := range 5 {
		tk := must[task.Task](t, "Submit")(q.Submit(ctx, fmt.Sprint("task ", i), ""))
		if !strings.HasPrefix(tk.ID, "task-") || seen[tk.ID] {
			t.Errorf("Submit id %q: want a new id starting with task-", tk.ID)
		}
		seen[tk.ID] = true
		ids = append(ids, tk.ID)
	}
	all := must[[]task.Task](t, "List")(q.List(ctx))
	if len(all) != len(ids) {
		t.Fatalf("List returned %d tasks, want %d", len(all), len(ids))
	}
	for i, tk := range all {
		if tk.ID != ids[i] || tk.Description != fmt.Sprint("task ", i) {
			t.Errorf("List[%d] = %s %q, want %s (oldest first)", i, tk.ID, tk.Description, ids[i])
		}
	}
	_, err := q.Get(ctx, "task-999999")
	wantErr(t, "Get of an unknown id", err, task.ErrNotFound)
	_, err = q.Get(ctx, "nonsense")
	wantErr(t, "Get of a malformed id", err, task.ErrNotFound)
}

// testTargeted: a task for one agent is never claimed by another; a task
// for any agent is.
func testTargeted(t *testing.T, h Harness) {
	ctx := context.Background()
	q := h.New(t, limits)
	forCipher := must[task.Task](t, "Submit")(q.Submit(ctx, "for cipher only", "cipher"))
	if got := must[*task.Task](t, "Next for scout")(q.Next(ctx, "scout")); got != nil {
		t.Errorf("Next for scout = %+v, want nil: the only task is cipher's", got)
	}
	if got := must[*task.Task](t, "Peek for scout")(q.Peek(ctx, "scout")); got != nil {
		t.Errorf("Peek for scout = %+v, want nil", got)
	}
	anyAgent := must[task.Task](t, "Submit")(q.Submit(ctx, "for anyone", ""))
	if got := must[*task.Task](t, "Next for scout")(q.Next(ctx, "scout")); got == nil || got.ID != anyAgent.ID {
		t.Errorf("Next for scout = %+v, want %s (for any agent)", got, anyAgent.ID)
	}
	if got := must[*task.Task](t, "Next for cipher")(q.Next(ctx, "cipher")); got == nil || got.ID != forCipher.ID {
		t.Errorf("Next for cipher = %+v, want %s", got, forCipher.ID)
	}
}

// testOldestFirst: Next claims the oldest pending task the agent may take.
func testOldestFirst(t *testing.T, h Harness) {
	ctx := context.Background()
	q := h.New(t, limits)
	var ids []string
	for i := range 3 {
		ids = append(ids, must[task.Task](t, "Submit")(q.Submit(ctx, fmt.Sprint("task ", i), "")).ID)
	}
	for i, agent := range []string{"a", "b", "c"} {
		got := must[*task.Task](t, "Next")(q.Next(ctx, agent))
		if got == nil || got.ID != ids[i] {
			t.Errorf("Next for %s = %+v, want %s (oldest pending first)", agent, got, ids[i])
		}
	}
	if got := must[*task.Task](t, "Next")(q.Next(ctx, "d")); got != nil {
		t.Errorf("Next for d = %+v, want nil: all claimed", got)
	}
}

// testPeek: Peek shows what Next would give, claims nothing, and shows an
// agent's assigned task.
func testPeek(t *testing.T, h Harness) {
	ctx := context.Background()
	q := h.New(t, limits)
	if got := must[*task.Task](t, "Peek of an empty queue")(q.Peek(ctx, "scout")); got != nil {
		t.Errorf("Peek of an empty queue = %+v, want nil", got)
	}
	sub := must[task.Task](t, "Submit")(q.Submit(ctx, "look", ""))
	for range 2 {
		got := must[*task.Task](t, "Peek")(q.Peek(ctx, "scout"))
		if got == nil || got.ID != sub.ID {
			t.Fatalf("Peek = %+v, want %s", got, sub.ID)
		}
	}
	if stored := must[task.Task](t, "Get")(q.Get(ctx, sub.ID)); stored.Status != task.Pending {
		t.Errorf("after Peek the task is %s, want still pending", stored.Status)
	}
	if got := must[*task.Task](t, "Next for vault")(q.Next(ctx, "vault")); got == nil || got.ID != sub.ID {
		t.Fatalf("Next for vault = %+v, want %s: Peek claimed it", got, sub.ID)
	}
	if got := must[*task.Task](t, "Peek for vault")(q.Peek(ctx, "vault")); got == nil || got.ID != sub.ID || got.Status != task.Assigned {
		t.Errorf("Peek for vault = %+v, want its assigned task", got)
	}
}

// testFinish: failed with ok false; the typed errors for unknown,
// pending and ended tasks; an ended task is unchanged by a second Finish.
func testFinish(t *testing.T, h Harness) {
	ctx := context.Background()
	q := h.New(t, limits)
	_, err := q.Finish(ctx, "task-999999", true, "x")
	wantErr(t, "Finish of an unknown task", err, task.ErrNotFound)
	pending := must[task.Task](t, "Submit")(q.Submit(ctx, "pending", "nobody"))
	_, err = q.Finish(ctx, pending.ID, true, "x")
	wantErr(t, "Finish of a pending task", err, task.ErrNotAssigned)
	sub := must[task.Task](t, "Submit")(q.Submit(ctx, "try", "scout"))
	must[*task.Task](t, "Next")(q.Next(ctx, "scout"))
	failed := must[task.Task](t, "Finish")(q.Finish(ctx, sub.ID, false, "could not"))
	if failed.Status != task.Failed || failed.Result != "could not" {
		t.Errorf("Finish(ok=false) = %+v, want failed with the reason", failed)
	}
	_, err = q.Finish(ctx, sub.ID, true, "again")
	wantErr(t, "second Finish", err, task.ErrEnded)
	if stored := must[task.Task](t, "Get")(q.Get(ctx, sub.ID)); stored.Status != task.Failed || stored.Result != "could not" {
		t.Errorf("a second Finish changed the task: %+v", stored)
	}
}

// testResultCut: results are cut to MaxResult code points.
func testResultCut(t *testing.T, h Harness) {
	ctx := context.Background()
	q := h.New(t, limits)
	sub := must[task.Task](t, "Submit")(q.Submit(ctx, "write", ""))
	must[*task.Task](t, "Next")(q.Next(ctx, "scout"))
	done := must[task.Task](t, "Finish")(q.Finish(ctx, sub.ID, true, strings.Repeat("ü", 100)))
	if n := utf8.RuneCountInString(done.Result); n != limits.MaxResult {
		t.Errorf("Finish kept a %d-character result, want it cut to %d", n, limits.MaxResult)
	}
}

// testBadAgent: Next and Peek refuse an invalid agent id with ErrInvalid.
func testBadAgent(t *testing.T, h Harness) {
	ctx := context.Background()
	q := h.New(t, limits)
	must[task.Task](t, "Submit")(q.Submit(ctx, "x", ""))
	for _, id := range []string{"", "../x", "A", "a b"} {
		_, err := q.Next(ctx, id)
		wantErr(t, fmt.Sprintf("Next(%q)", id), err, task.ErrInvalid)
		_, err = q.Peek(ctx, id)
		wantErr(t, fmt.Sprintf("Peek(%q)", id), err, task.ErrInvalid)
	}
}

// testExpiry: an assigned task with no result after Timeout fails with
// "no result after {Timeout}"; a late Finish gets ErrEnded; Next expires
// before resuming, so the agent does not get its overdue task back.
func testExpiry(t *testing.T, h Harness) {
	if h.Age == nil {
		t.Skip("tasktest: Harness.Age is nil")
	}
	ctx := context.Background()
	q := h.New(t, limits)
	slow := must[task.Task](t, "Submit")(q.Submit(ctx, "slow", ""))
	must[*task.Task](t, "Next")(q.Next(ctx, "scout"))
	h.Age(t, q, limits.Timeout-time.Minute)
	if exp := must[[]task.Task](t, "Expire")(q.Expire(ctx)); len(exp) != 0 {
		t.Fatalf("Expire before the timeout = %+v, want nothing", exp)
	}
	h.Age(t, q, 2*time.Minute)
	exp := must[[]task.Task](t, "Expire")(q.Expire(ctx))
	if len(exp) != 1 || exp[0].ID != slow.ID || exp[0].Status != task.Failed || exp[0].Result != "no result after 1h0m0s" || exp[0].Ended.IsZero() {
		t.Fatalf("Expire = %+v, want %s failed with \"no result after 1h0m0s\"", exp, slow.ID)
	}
	_, err := q.Finish(ctx, slow.ID, true, "late")
	wantErr(t, "late Finish", err, task.ErrEnded)
	if again := must[[]task.Task](t, "second Expire")(q.Expire(ctx)); len(again) != 0 {
		t.Errorf("second Expire = %+v, want nothing", again)
	}

	other := must[task.Task](t, "Submit")(q.Submit(ctx, "slow too", "cipher"))
	must[*task.Task](t, "Next")(q.Next(ctx, "cipher"))
	h.Age(t, q, limits.Timeout+time.Minute)
	if got := must[*task.Task](t, "Next after the timeout")(q.Next(ctx, "cipher")); got != nil {
		t.Errorf("Next after the timeout = %+v, want nil: the overdue task failed first", got)
	}
	if stored := must[task.Task](t, "Get")(q.Get(ctx, other.ID)); stored.Status != task.Failed {
		t.Errorf("overdue task is %s after Next, want failed", stored.Status)
	}
}

// testConcurrentClaims: 8 agents claim 40 tasks at once; every task is
// claimed exactly once.
func testConcurrentClaims(t *testing.T, h Harness) {
	ctx := context.Background()
	q := h.New(t, limits)
	const tasks, agents = 40, 8
	for i := range tasks {
		must[task.Task](t, "Submit")(q.Submit(ctx, fmt.Sprint("task ", i), ""))
	}
	var (
		mu   sync.Mutex
		seen = map[string]string{}
		errs []error
		wg   sync.WaitGroup
	)
	for i := range agents {
		wg.Go(func() {
			agent := fmt.Sprint("agent-", i)
			for {
				tk, err := q.Next(ctx, agent)
				if err == nil && tk != nil {
					_, err = q.Finish(ctx, tk.ID, true, "done")
				}
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
				} else if tk != nil {
					if prev, dup := seen[tk.ID]; dup {
						errs = append(errs, fmt.Errorf("%s claimed by %s and %s", tk.ID, prev, agent))
					}
					seen[tk.ID] = agent
				}
				mu.Unlock()
				if err != nil || tk == nil {
					return
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		t.Error(err)
	}
	if len(seen) != tasks {
		t.Errorf("%d tasks claimed, want %d", len(seen), tasks)
	}
}

// testCancel: Cancel ends a pending task as failed with the result (cut to
// MaxResult) and an Ended time, and no agent ever claims it; an unknown,
// a claimed and an ended task are refused (ErrNotFound, ErrNotPending,
// ErrEnded) and left as they were. task.Cancel does the same through the
// Queue, and ends a claimed task with Finish.
func testCancel(t *testing.T, h Harness) {
	ctx := context.Background()
	q := h.New(t, limits)
	_, err := q.Cancel(ctx, "task-999999", "x")
	wantErr(t, "Cancel of an unknown task", err, task.ErrNotFound)
	sub := must[task.Task](t, "Submit")(q.Submit(ctx, "never", "scout"))
	got := must[task.Task](t, "Cancel")(q.Cancel(ctx, sub.ID, strings.Repeat("ü", 100)))
	if got.Status != task.Failed || got.Ended.IsZero() || got.AssignedTo != "" || utf8.RuneCountInString(got.Result) != limits.MaxResult {
		t.Errorf("Cancel = %+v, want failed, ended, unassigned, the result cut to %d characters", got, limits.MaxResult)
	}
	if stored := must[task.Task](t, "Get")(q.Get(ctx, sub.ID)); stored.Status != task.Failed || stored.Result != got.Result {
		t.Errorf("Get after Cancel = %+v, want %+v", stored, got)
	}
	if tk := must[*task.Task](t, "Next")(q.Next(ctx, "scout")); tk != nil {
		t.Errorf("Next claimed the canceled task: %+v", tk)
	}
	_, err = q.Cancel(ctx, sub.ID, "again")
	wantErr(t, "second Cancel", err, task.ErrEnded)
	_, err = q.Finish(ctx, sub.ID, true, "late")
	wantErr(t, "Finish of a canceled task", err, task.ErrEnded)

	claimed := must[task.Task](t, "Submit")(q.Submit(ctx, "claimed", "scout"))
	must[*task.Task](t, "Next")(q.Next(ctx, "scout"))
	_, err = q.Cancel(ctx, claimed.ID, "x")
	wantErr(t, "Cancel of a claimed task", err, task.ErrNotPending)
	if stored := must[task.Task](t, "Get")(q.Get(ctx, claimed.ID)); stored.Status != task.Assigned {
		t.Errorf("a refused Cancel changed the task: %+v", stored)
	}
	// task.Cancel ends the claimed task through Finish, shown canceled.
	c := must[task.Task](t, "task.Cancel")(task.Cancel(ctx, q, claimed.ID))
	if task.StateOf(c) != task.StateCanceled {
		t.Errorf("task.Cancel of a claimed task = %+v, want it canceled", c)
	}
	_, err = task.Cancel(ctx, q, claimed.ID)
	wantErr(t, "task.Cancel of an ended task", err, task.ErrEnded)
	pending := must[task.Task](t, "Submit")(q.Submit(ctx, "pending", ""))
	if c := must[task.Task](t, "task.Cancel")(task.Cancel(ctx, q, pending.ID)); task.StateOf(c) != task.StateCanceled || c.AssignedTo != "" {
		t.Errorf("task.Cancel of a pending task = %+v, want it canceled, unassigned", c)
	}
}

// testCancelRacesClaims: Cancel and Next of the same pending task at once:
// exactly one wins. Either an agent holds the task and Cancel got
// ErrNotPending, or it is canceled and no agent got it.
func testCancelRacesClaims(t *testing.T, h Harness) {
	ctx := context.Background()
	q := h.New(t, limits)
	for i := range 20 {
		sub := must[task.Task](t, "Submit")(q.Submit(ctx, fmt.Sprint("race ", i), "scout"))
		var (
			wg      sync.WaitGroup
			claimed *task.Task
			nextErr error
			cancErr error
		)
		wg.Go(func() { claimed, nextErr = q.Next(ctx, "scout") })
		wg.Go(func() { _, cancErr = q.Cancel(ctx, sub.ID, "canceled") })
		wg.Wait()
		if nextErr != nil {
			t.Fatalf("Next: %v", nextErr)
		}
		switch {
		case claimed != nil && claimed.ID == sub.ID:
			wantErr(t, "Cancel of a task claimed at the same time", cancErr, task.ErrNotPending)
			must[task.Task](t, "Finish")(q.Finish(ctx, sub.ID, true, "done"))
		case claimed == nil:
			if cancErr != nil {
				t.Fatalf("Cancel of a task no agent claimed: %v", cancErr)
			}
		default:
			t.Fatalf("Next claimed %s, want %s or nothing", claimed.ID, sub.ID)
		}
	}
}
