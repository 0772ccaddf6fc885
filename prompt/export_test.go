package prompt

// Internals the external tests (package prompt_test) check directly.
var (
	FormatDuration = formatDuration
	TrimText       = trimSection
)
