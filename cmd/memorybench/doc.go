// Command memorybench prints the figures of long-term memory on this
// machine: how fast a store takes memories, how much memory one agent's
// cached memories cost (RSS and Go heap, per 10,000), and how long an
// exact recall over them takes.
//
//	go run ./cmd/memorybench                      # SQLite in a temp dir, 10,000 memories of 768 dimensions
//	go run ./cmd/memorybench -store DIR -n 100000
//	go run ./cmd/memorybench -store postgres://... -n 10000
//
// The store is named as the command-line tools' -store flag: a
// directory (the file store), sqlite:PATH or postgres://. Vectors are
// random unit vectors (the cost of a recall does not depend on them).
package main
