// Command cyclebench measures the durable existence cycle of the SDK side by
// side with the original's: the same imported state (the
// hollow-agentOS snapshot's agent), the same canned model reply, in one
// run, alternating the two in rounds so that the machine's noise falls on
// both. The Go cycle is one [existence.Agent.Tick] and its goal's end
// (WaitGoal) against a [filestore.Store] on disk, fsync included; the
// original's is harness.py --mode steady (which never fsyncs). It prints
// the medians and their ratio. The Go side runs against each store that
// -stores names: "file" (a [filestore.Store] directory) and "sqlite"
// (a [sqlitestore.Store] database file, WAL with synchronous=FULL).
//
//	go run ./cmd/cyclebench -rounds 5 -n 40
//	go run ./cmd/cyclebench -rounds 5 -n 40 -agent analyst -stores file,sqlite
//
// Flags: -harness (the harness.py, default
// ../shared/bench/hollow-original/harness.py beside the repository),
// -data (the snapshot, passed to the harness as HOLLOW_SNAPSHOT), -agent, -rounds, -n (cycles per round and side),
// -base (parent of the temp state directories, default the system temp
// dir, as the harness), -reload (also time a cycle that re-opens the agent
// from the store every time), -stores (comma-separated, default
// "file,sqlite"), -cpuprofile (write a CPU profile of the run).
package main
