// Package storetest is the conformance suite of [identity.Store]:
// every store of the SDK (store/memstore, store/filestore,
// store/sqlitestore, store/pgstore) passes it, and so must any later
// one. [FullState] (every field set) and [OverCapState] (every list above
// its default cap) are its fixtures; [StateJSON] compares states.
//
// A store's test calls
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) identity.Store {
//			s, err := mystore.Open(t.TempDir())
//			require.NoError(t, err)
//			t.Cleanup(func() { s.Close() })
//			return s
//		})
//	}
//
// and, for the promises that need to reach under the interface (corrupt
// data, a newer schema, a second handle on the same data), [RunHarness]
// with the hooks it can provide. A nil hook skips its subtests with a
// message saying which hook is missing.
//
// What the suite checks, one subtest each:
//   - empty store, not found, hostile ids and invalid states refused;
//   - round trip of every field of [identity.AgentState] (the fixture is checked
//     to set every field, so a new field fails the suite until it is
//     added here);
//   - replace, copies in and out, list in lexical order;
//   - caps on load: an over-cap state loads (never refused) and keeps its
//     newest entries;
//   - the lock against a second owner, when the store is an
//     [identity.Locker]: a [*identity.LockedError] naming the agent;
//   - concurrent saves of different agents, each kept whole, and of one
//     agent, one whole version kept, never a mix;
//   - corrupt data named in a [*identity.CorruptError], never replaced
//     silently, other agents untouched; when the store is an
//     [identity.Quarantiner], quarantine moves it away and a fresh save
//     succeeds;
//   - a newer schema version refused with [identity.ErrFutureVersion];
//   - context cancellation of Load, Save and List;
//   - memories: when the store also implements memory.Store (every SDK
//     store does), the "memories" subtest runs [RunMemory], the
//     conformance suite of long-term memory (round trips of every field
//     and of vectors bit for bit, identical text stored once, bad records
//     refused, updates, deletes, counts, concurrency, durability across
//     handles, and a memory.Memory over the store). [FullMemory] is its
//     fixture. RunMemory runs it alone.
//   - with the [Harness].Document hook, the store's shared documents (a
//     round trip, a second handle, concurrent updates that lose nothing,
//     a canceled update that writes nothing) and the shared board of slots
//     kept in one ([identity.SharedBoard]: posts seen through a second
//     handle, the cap dropping the least important, a corrupt board named
//     and left untouched).
//
// [Crash] proves with real processes that saves survive a crash: a
// child saving [CrashState] versions is killed with SIGKILL at random,
// and each state must load whole and no older than the last save that
// returned. A durable store's test calls it with an Open function:
//
//	func TestCrash(t *testing.T) {
//		storetest.Crash(t, storetest.CrashConfig{
//			Open: func(ctx context.Context, dir string) (identity.Store, error) {
//				return mystore.Open(dir)
//			},
//		})
//	}
//
// [BenchmarkGroupCommit] compares a store's single saves (one transaction
// each) with its group commit (saves that arrive together share one), for
// a store's benchmarks to call.
package storetest
