package retryafter

import (
	"net/http"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		in   string
		want time.Duration
	}{
		{"", 0},
		{"7", 7 * time.Second},
		{" 10 ", 10 * time.Second},
		{"1.5", 1500 * time.Millisecond},
		{"0", 0},
		{"-3", 0},
		{"NaN", 0},
		{"+Inf", 0},
		{"1e20", 0},
		{"86400", Max},
		{"86401", 0}, // over Max: ignored
		{"99999999999999999999", 0},
		{"9223372036854775807", 0},
		{"soon", 0},
		{"Sun, 01 Mar 2026 12:00:30 GMT", 30 * time.Second},
		{"Sun, 01 Mar 2026 11:59:00 GMT", 0}, // in the past
		{"Tue, 03 Mar 2026 12:00:00 GMT", 0}, // over Max
	} {
		if got := Parse(tc.in, now); got != tc.want {
			t.Errorf("Parse(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestFromHeader(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		h    http.Header
		want time.Duration
	}{
		{"none", nil, 0},
		{"seconds", http.Header{"Retry-After": {"7"}}, 7 * time.Second},
		{"ms wins", http.Header{"Retry-After-Ms": {"250"}, "Retry-After": {"9"}}, 250 * time.Millisecond},
		{"bad ms falls back", http.Header{"Retry-After-Ms": {"x"}, "Retry-After": {"9"}}, 9 * time.Second},
		{"negative ms falls back", http.Header{"Retry-After-Ms": {"-5"}, "Retry-After": {"2"}}, 2 * time.Second},
		{"absurd ms falls back", http.Header{"Retry-After-Ms": {"1e12"}, "Retry-After": {"2"}}, 2 * time.Second},
		{"date", http.Header{"Retry-After": {now.Add(time.Minute).Format(http.TimeFormat)}}, time.Minute},
	} {
		if got := FromHeader(tc.h, now); got != tc.want {
			t.Errorf("%s: FromHeader = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func FuzzFromHeader(f *testing.F) {
	for _, s := range []string{"7", "1.5", "-1", "NaN", "1e400", "Wed, 21 Oct 2015 07:28:00 GMT", "", "0x10", "9223372036854775807"} {
		f.Add(s, "")
		f.Add("", s)
	}
	now := time.Date(2015, 10, 21, 7, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, v, ms string) {
		h := http.Header{}
		h.Set("Retry-After", v)
		h.Set("Retry-After-Ms", ms)
		if d := FromHeader(h, now); d < 0 || d > Max {
			t.Fatalf("FromHeader(%q, %q) = %v, want within [0, Max]", v, ms, d)
		}
	})
}
