// Package slot holds the contract of slots: what background jobs ("minds")
// and the world outside report to an agent, after the slots of GLaDOS
// (https://github.com/dnhkng/GLaDOS). A [Slot] is one report — slot_id, title, status, summary,
// importance (0–1), confidence (0–1), next_run (seconds) and notify_user,
// with the time it was last updated — and a board is the set of slots an
// agent sees.
//
// It sits below the loop and the stores, as the task package does: an
// agent's own board is kept with its state in every identity store
// (identity.AgentState.Slots), a shared board that several agents see is
// identity.SharedBoard, the prompt shows the slots (the "WORLD UPDATES"
// section, most important first), and the loop posts them
// (existence.Agent.PostSlot, minds); a slot posted with NotifyUser asks
// for a cycle at once. This package imports nothing of the SDK but its
// internal helpers.
//
// Boards are capped: [Put] keeps at most a maximum number of slots, and
// when one more arrives the slot of lowest importance is dropped (the
// least recently updated first among equals); every drop is returned, so
// that the caller reports it. A slot whose next update is long overdue is
// [Slot.Stale].
//
// Text rules. [Slot.Validate] is strict, for input from outside (an HTTP
// request, an MCP call): it refuses control and invisible (format, tag,
// variation-selector) characters, over-long texts and out-of-range numbers with an error
// matching [ErrInvalid]. [Slot.Clean] is lenient, for what a mind reads
// from the world (a feed's titles, a file's name): it removes those
// characters and cuts the texts to their caps, leaving the numbers for
// Validate to check.
package slot
