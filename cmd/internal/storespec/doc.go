// Package storespec opens the agents' store and task queue named by a
// store spec, the value of the command-line tools' -store flag:
//
//	DIR              a directory: filestore.Store and a taskqueue file queue (the default)
//	sqlite:PATH      one SQLite database file: store/sqlitestore
//	postgres://...   a PostgreSQL database (also postgresql://): store/pgstore,
//	                 whose store is also a lease.Manager (see [Leases])
//
// [Open] returns the store, its task queue (a [task.Queue]) and a closer; a
// malformed spec is an error wrapping [ErrSpec]. [Kind] names a spec's
// kind without opening anything, [Leases] says whether the store shares
// agents between processes, [Memories] gives its long-term memories
// (every kind holds them), and [OpenRequests] opens the requests to the
// human kept in the same database. The command-line programs (the trio,
// the swarm) share it.
package storespec
