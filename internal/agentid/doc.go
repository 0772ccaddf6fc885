// Package agentid holds the one rule for agent ids, below every package
// that checks one: identity (ValidateID, ErrInvalidID) re-exports it, and
// the task contract applies it to the agents tasks are submitted for and
// claimed by, without importing identity.
package agentid
