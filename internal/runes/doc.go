// Package runes counts and cuts strings by Unicode code points, never
// splitting a character. Every "characters" limit in the SDK (spec §3:
// "Characters" means Unicode code points, never bytes) goes through it:
// [Count] counts code points, [Head] keeps the first n and [Tail] the last
// n.
//
// It also holds the SDK's one unsafe-character rule ([Unsafe], [UnsafeAt],
// [Strip]): the code points no text shown to a model may carry, which
// prompt.Clean, the slot checks and identity.ValidateName apply.
package runes
