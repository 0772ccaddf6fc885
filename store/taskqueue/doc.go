// Package taskqueue is a durable queue of externally assigned tasks, shared
// by the agents of one state directory. A [*Queue] is a [task.Source]: pass
// it as existence.Config.Tasks. (store/sqlitestore and store/pgstore
// keep the same queue in their databases.)
//
// A person or another program assigns work with [Queue.Submit], to one
// agent or to any agent. An agent asks for work with [Queue.Next]; the task
// it gets appears at the very top of its prompt as "ASSIGNED TASK:
// {description}" (spec §2 row 1), becomes the cycle's goal, and ends with
// the goal's outcome through [Queue.Finish].
//
// # Lifecycle
//
// A [task.Task] goes [task.Pending] → [task.Assigned] → [task.Completed] or
// [task.Failed]:
//
//   - [Queue.Submit] adds a pending task. Its Agent field names the agent
//     it is for, or is empty for any agent.
//   - [Queue.Next] claims the oldest pending task for the agent (or for any
//     agent) and marks it assigned. An agent that already has an assigned
//     task gets that one back, so it resumes its task after a restart.
//   - [Queue.Finish] ends an assigned task as completed or failed with a
//     result. An ended task cannot be finished again ([task.ErrEnded]).
//   - A task with no result 2 hours ([Options.Timeout]) after it was
//     assigned is failed with the result "no result after 2h0m0s".
//     [Queue.Expire] does this, and so does every other update before it
//     changes anything, so a late result gets [task.ErrEnded].
//
// Ended tasks are kept for reference, up to [Options.MaxTasks] (oldest
// ended dropped first); pending and assigned tasks are never dropped.
//
// # Durability and concurrency
//
// [Open] keeps the queue in dir/tasks.json. Every update takes an
// in-process lock and the cross-process advisory lock dir/tasks.lock, reads
// the file, applies the change, writes the file back atomically and durably
// (temp file, fsync, atomic rename, fsync of the directory), and only then
// unlocks. Several goroutines, [*Queue] values and processes can therefore
// submit and claim at the same time without losing a task or claiming one
// twice. (The Python original rewrote its queue file without a lock and lost
// tasks.) A crash at any instant leaves either the previous or the new
// version of the file. Reads ([Queue.Get], [Queue.List]) take no file lock:
// the atomic rename means they always see one complete version.
//
// A queue file that cannot be used (bad JSON, wrong types, a newer schema
// version, duplicate ids, larger than [MaxFileSize]) is never overwritten:
// every operation returns a [*identity.CorruptError] naming the file and the reason,
// matching [identity.ErrCorrupt], and the file stays as it is for a person to repair.
// With [Options].FreshOnCorrupt, [Open] moves it aside instead ([Quarantine])
// and starts with an empty queue.
//
// [NewMemory] gives the same queue without a file, for tests and for
// embedding without persistence.
package taskqueue
