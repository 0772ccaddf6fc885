// Package tasktest is the conformance suite of [task.Queue]: [Run] checks
// that a backend keeps the contract every queue shares — the submission
// rule ([task.CheckSubmit]), ids, claiming and resuming, targeted tasks,
// finishing once, the typed errors, expiry after the timeout, cut results,
// and that concurrent claims never hand one task to two agents.
// store/taskqueue, store/sqlitestore and store/pgstore pass it, as
// store/storetest checks the stores.
//
//	func TestQueueConformance(t *testing.T) {
//		tasktest.Run(t, tasktest.Harness{
//			New: func(t *testing.T, l task.Limits) task.Queue { return open(t, l) },
//		})
//	}
//
// It uses package testing's T only (no assertion library), so a backend
// outside this module can run it without new dependencies.
package tasktest
