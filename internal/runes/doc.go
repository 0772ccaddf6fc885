// Package runes counts and cuts strings by Unicode code points, never
// splitting a character. Every "characters" limit in the SDK (spec §3:
// "Characters" means Unicode code points, never bytes) goes through it:
// [Count] counts code points, [Head] keeps the first n and [Tail] the last
// n.
package runes
