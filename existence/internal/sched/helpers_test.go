package sched

// newRunner is [New] in the shape of runner.New, for the tests.
func newRunner(c Config) (*Runner, error) { return New(c), nil }
