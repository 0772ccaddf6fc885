package workspace

// Describe exposes describe to the tests.
var Describe = describe

// Scans returns how many times a whole tree was walked.
func Scans() int64 { return scans.Load() }
