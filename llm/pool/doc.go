// Package pool spreads model calls over several servers. A [Pool] is an
// [llm.Model] over servers of one model: each agent (named on the call's
// context with [WithAgent]) is pinned to one server by rendezvous hashing,
// so that its prompts keep hitting one KV cache, and moves to the next of
// its ranking while its server is down ([IsServerFailure]); a reply names
// its server ([llm.Response].Server). An [EmbedPool] does the same for
// embedding servers of one model, without pinning (an embedding has no
// cache to keep warm). Every server has an adaptive concurrency limit
// (middleware.AdaptiveLimit).
package pool
