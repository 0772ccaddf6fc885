// Package callnote carries, in a call's context, the name of the server a
// pool sent the call to last, so that a trace above the pool can name the
// server of a failed call (a reply names its server in
// [llm.Response].Server; an error does not). The trace puts a note in the
// call's context; the pool writes each server it tries into it.
package callnote
