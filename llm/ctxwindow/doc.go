// Package ctxwindow holds what an adapter knows of a model's context
// window, in tokens, and how a prompt is planned to fit it.
//
// A [Tracker] keeps a model's window on a server and lowers it only on
// what the server states: a refusal (llm.ParseContextRefusal knows every
// wording, and the window it states) or a prompt count that proves a cut
// ([Tracker.Observe] returns a [Verdict]; a count a KV-cache hit could
// give is never one, and a doubt is probed). The window grows in [Steps]
// so that Ollama reloads a model rarely. [Reserve] and [Plan] size a
// request's prompt and reply within the window.
package ctxwindow
