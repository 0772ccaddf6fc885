// Package task holds the contract of assigned tasks: the [Task] record, its
// [Status] lifecycle, the [Source] interface an agent draws tasks from, the
// [Queue] interface people and programs submit to and read, the one rule
// for a submitted task ([CheckSubmit], [CheckAgent]), the [Limits] every
// backend applies (timeout, text lengths in characters, how many ended
// tasks are kept), the errors every backend returns ([ErrInvalid],
// [ErrNotFound], [ErrEnded], [ErrNotAssigned], [ErrNotPending], [ErrFull]),
// and what the agent protocols share: the [State] a task is shown in
// ([StateOf]: A2A's task states and MCP's Tasks extension both map from
// it) and a client's cancel ([Cancel], [CanceledResult]).
//
// It sits below the loop and the stores, as database/sql/driver sits below
// database/sql: package existence consumes a [Source]; the monitor, the MCP
// server and the command line use a [Queue]; backends implement it —
// store/taskqueue (a file or memory), store/sqlitestore and store/pgstore —
// and pass its conformance suite, task/tasktest. This package imports
// nothing else of the SDK (only the module's internal helpers).
//
// An assigned task is shown at the very top of the agent's prompt as
// "ASSIGNED TASK: {description}" (spec §2 row 1), becomes the cycle's goal,
// and ends with the goal's outcome through [Source.Finish].
package task
