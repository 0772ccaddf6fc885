// Package strictjson decodes JSON that comes from outside the program —
// model replies, HTTP request bodies, MCP tool arguments, tool calls,
// `memory eval` datasets — with
// the semantics of encoding/json/v2 (github.com/go-json-experiment/json):
// an object that names a key twice is an error, never "last one wins".
//
// Two readers of one document must never see two different values:
// {"content": "a", "content": "b"} is "a" to one parser and "b" to
// another. RFC 8259 leaves duplicate names undefined and RFC 7493 (I-JSON)
// forbids them; the v2 decoder enforces that, comparing names after their
// escapes are decoded ("a" and "\u0061" are the same key). This package
// turns its duplicate-name error into a [*DuplicateKeyError] (matching
// [ErrDuplicateKey]) that names the key, its JSON Pointer and its byte
// offset, and leaves every other error as the decoder returned it.
//
// [Unmarshal] decodes one value; [Check] only looks for duplicates, for
// callers that decode with another decoder (one that keeps number
// precision, for example) and must refuse duplicates first.
package strictjson
