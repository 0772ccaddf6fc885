package existence

// Apply is the internal apply, for the external tests (package
// existence_test) that check the spec's field table directly.
var Apply = apply
