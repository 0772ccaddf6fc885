package identity

import "time"

// t0 is the fixed instant of the test fixtures.
var t0 = time.Date(2026, 11, 21, 22, 23, 0, 0, time.UTC)
