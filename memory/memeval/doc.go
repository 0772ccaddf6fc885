// Package memeval measures how well [memory.Memory.Recall] finds the
// memories that answer a question: a retrieval benchmark over a dataset
// of one's own, run by `existence memory eval`.
//
// A dataset is JSON Lines, one object a line:
//
//	{"kind":"memory","agent":"A","id":"m1","text":"…","time":"2023-05-08T13:56:00Z","importance":0.5}
//	{"kind":"query","agent":"A","text":"…","gold":["m1","m7"],"category":"temporal"}
//
// (importance and category optional). [Load] and [Scan] check each line
// by the SDK's strict JSON rules, naming the line in their errors; [Scan]
// and [RunFrom] hold no memory in the process, for datasets of millions of
// lines. [Run] stores every memory in a
// fresh store, embeds them unless the run is lexical only, recalls the
// best K memories for every query, and reports recall_any@1, @5 and @K
// (a gold memory among the first n), recall_all@K (every gold memory
// among the first K) and the mean reciprocal rank of the first gold
// memory within K, overall and per category.
package memeval
