package retryafter

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Max is the longest delay a server can ask for: a value over it (a day)
// is taken as absurd and ignored like an invalid one, so the caller's own
// backoff applies.
const Max = 24 * time.Hour

// Parse returns the delay of a Retry-After value v: delay-seconds (a
// decimal fraction such as "1.5" is accepted too) or an HTTP date, measured
// from now (the caller's clock). Missing, invalid, non-positive, past or
// over [Max] values give 0.
func Parse(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		return valid(f, time.Second)
	}
	if t, err := http.ParseTime(v); err == nil {
		return valid(float64(t.Sub(now)), 1)
	}
	return 0
}

// ParseMillis returns the delay of a retry-after-ms value v (OpenAI's
// header, milliseconds, fractions accepted). Missing, invalid,
// non-positive or over [Max] values give 0.
func ParseMillis(v string) time.Duration {
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil {
		return 0
	}
	return valid(f, time.Millisecond)
}

// FromHeader returns the delay h asks for: Retry-After-Ms when it gives
// one, else Retry-After (see [Parse]), measured from now; 0 when neither
// does.
func FromHeader(h http.Header, now time.Time) time.Duration {
	if d := ParseMillis(h.Get("Retry-After-Ms")); d > 0 {
		return d
	}
	return Parse(h.Get("Retry-After"), now)
}

// valid converts n units to a duration: 0 unless 0 < n·unit <= Max (NaN
// and infinities included).
func valid(n float64, unit time.Duration) time.Duration {
	d := n * float64(unit)
	if math.IsNaN(d) || d <= 0 || d > float64(Max) {
		return 0
	}
	return time.Duration(d)
}
