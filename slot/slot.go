package slot

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/existence-loop/sdk/internal/runes"
)

// Status is a slot's state, a short lower-case word. The statuses of
// GLaDOS are constants here; any other word of 1–32 characters (a–z, 0–9,
// "_", "-", starting with a letter) is allowed too, e.g. "changed" for a
// file that changed.
type Status string

// Common statuses.
const (
	// Pending: the job has not produced anything yet.
	Pending Status = "pending"
	// Running: the job is working on it.
	Running Status = "running"
	// Completed: the job produced the summary.
	Completed Status = "completed"
	// Failed: the job failed; the summary says why (a failing mind reports
	// this status, see existence.Mind).
	Failed Status = "failed"
	// Idle: nothing to report; all is as expected.
	Idle Status = "idle"
)

// Valid reports whether s is 1–32 characters of a–z, 0–9, "_" and "-",
// starting with a letter.
func (s Status) Valid() bool {
	if len(s) == 0 || len(s) > MaxStatusChars || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

// Caps of a slot's fields, in characters (Unicode code points).
const (
	// MaxIDChars caps a slot id.
	MaxIDChars = 128
	// MaxTitleChars caps a title (a display name, one line).
	MaxTitleChars = 80
	// MaxSummaryChars caps a summary.
	MaxSummaryChars = 500
	// MaxStatusChars caps a status.
	MaxStatusChars = 32
	// MaxNextRun caps next_run: 366 days, in seconds.
	MaxNextRun = 366 * 24 * 3600
)

// ErrInvalid matches (errors.Is) every error of a slot that cannot be
// used: a blank or malformed id, an invalid status, text with control
// characters or over its cap, a number out of range.
var ErrInvalid = errors.New("slot: invalid slot")

// Slot is one report on a board (GLaDOS's slot). In JSON the fields keep
// GLaDOS's names; UpdatedAt is "updated_at".
type Slot struct {
	// ID identifies the slot on its board ("slot_id"): 1–128 characters,
	// no whitespace, control or invisible format characters, e.g.
	// "workspace" or "feed:news". A slot posted with the id of one on the
	// board replaces it.
	ID string `json:"slot_id"`
	// Title is the display name, one line of at most 80 characters, e.g.
	// "Weather"; [Slot.Clean] sets a blank title to the id.
	Title string `json:"title"`
	// Status is the job's state: pending, running, completed, failed, idle
	// or another word (see [Status]).
	Status Status `json:"status"`
	// Summary is what the job found, at most 500 characters, e.g.
	// "Temperature dropping 5C in the next hour"; may be empty.
	Summary string `json:"summary"`
	// Importance is how much the slot matters, 0–1: the prompt lists the
	// most important first and a full board drops the least important.
	Importance float64 `json:"importance"`
	// Confidence is how sure the job is of the summary, 0–1; 0 is not
	// shown.
	Confidence float64 `json:"confidence"`
	// NextRun is in how many seconds the job expects to update the slot
	// again, 0 when it does not say; a slot not updated long after that is
	// [Slot.Stale]. At most 366 days.
	NextRun float64 `json:"next_run"`
	// NotifyUser asks, when the slot is posted, for a cycle of the agents
	// that see it at once instead of at their next heartbeat (GLaDOS's
	// event trigger), through the scheduler's coalescing and cooldown.
	NotifyUser bool `json:"notify_user"`
	// UpdatedAt is when the slot was last posted; the agent stamps a zero
	// UpdatedAt with its clock's time.
	UpdatedAt time.Time `json:"updated_at,omitzero"`
}

// Validate checks s strictly, as input from outside must be: a non-blank
// id of at most 128 characters without whitespace; a valid [Status]; a
// title and a summary within their caps (80 and 500 characters) without
// control characters (a summary may hold newlines and tabs) or invisible
// ones (format characters such as zero-width and bidirectional marks and
// controls, tag characters, variation selectors used as carriers: the
// unsafe-character rule prompts apply); importance and confidence finite and within
// 0–1; next_run finite, 0 or more and at most 366 days in seconds; valid
// UTF-8 everywhere. The error matches [ErrInvalid] and names the field.
func (s Slot) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
	}
	switch {
	case s.ID == "":
		return bad(`"slot_id" is missing`)
	case !utf8.ValidString(s.ID):
		return bad(`"slot_id" is not valid UTF-8`)
	case runes.Count(s.ID) > MaxIDChars:
		return bad(`"slot_id" has %d characters; the limit is %d`, runes.Count(s.ID), MaxIDChars)
	case strings.IndexFunc(s.ID, unicode.IsSpace) >= 0 || runes.UnsafeAt(s.ID) >= 0:
		return bad(`"slot_id" %q holds whitespace or a control character`, s.ID)
	case s.Status == "":
		return bad(`"status" is missing (pending, running, completed, failed, idle, or another lower-case word)`)
	case !s.Status.Valid():
		return bad(`"status" %q: want 1–%d of a-z 0-9 _ -, starting with a letter (pending, running, completed, failed, idle, ...)`, s.Status, MaxStatusChars)
	}
	if err := checkText("title", s.Title, MaxTitleChars, false); err != nil {
		return err
	}
	if err := checkText("summary", s.Summary, MaxSummaryChars, true); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"importance", s.Importance}, {"confidence", s.Confidence}} {
		if math.IsNaN(f.v) || f.v < 0 || f.v > 1 {
			return bad("%q is %v; want a number from 0 to 1", f.name, f.v)
		}
	}
	if math.IsNaN(s.NextRun) || s.NextRun < 0 || s.NextRun > MaxNextRun {
		return bad(`"next_run" is %v; want 0 to %d seconds`, s.NextRun, MaxNextRun)
	}
	return nil
}

// checkText validates one text field.
func checkText(name, s string, max int, lines bool) error {
	if !utf8.ValidString(s) {
		return fmt.Errorf("%w: %q is not valid UTF-8", ErrInvalid, name)
	}
	if n := runes.Count(s); n > max {
		return fmt.Errorf("%w: %q has %d characters; the limit is %d", ErrInvalid, name, n, max)
	}
	i := runes.UnsafeAt(s)
	if j := strings.IndexAny(s, "\n\t"); !lines && j >= 0 && (i < 0 || j < i) {
		i = j
	}
	if i >= 0 {
		r, _ := utf8.DecodeRuneInString(s[i:])
		what := "a control character"
		switch {
		case r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069:
			what = "a bidirectional control character"
		case r >= 0xA0:
			what = "an invisible character"
		}
		return fmt.Errorf("%w: %q holds %s (%U) at byte %d", ErrInvalid, name, what, r, i)
	}
	return nil
}

// Clean returns s made presentable, for text a mind reads from the world:
// invalid UTF-8 becomes U+FFFD; control and invisible characters (the
// unsafe-character rule prompts apply) are removed (a summary keeps newlines; tabs become spaces);
// the title is put on one line; title and summary are trimmed and cut to
// their caps (80 and 500 characters), ending in "…" when cut; a blank
// title becomes the id. The id, status and numbers are left for
// [Slot.Validate] to check.
func (s Slot) Clean() Slot {
	s.Title = cutText(strings.Join(strings.Fields(cleanText(s.Title)), " "), MaxTitleChars)
	s.Summary = cutText(strings.TrimSpace(strings.ReplaceAll(cleanText(s.Summary), "\t", " ")), MaxSummaryChars)
	if s.Title == "" {
		s.Title = cutText(strings.TrimSpace(cleanText(s.ID)), MaxTitleChars)
	}
	return s
}

// cleanText makes s valid UTF-8 and removes what the unsafe-character
// rule refuses (internal/runes.Strip).
func cleanText(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return runes.Strip(s)
}

// cutText cuts s to n characters, ending in "…" when cut.
func cutText(s string, n int) string {
	if runes.Count(s) <= n {
		return s
	}
	return strings.TrimRightFunc(runes.Head(s, n-1), unicode.IsSpace) + "…"
}

// StaleGrace is the least a slot's expected update must be overdue by
// before the slot is [Slot.Stale]: one minute.
const StaleGrace = time.Minute

// Due returns when the slot's next update is expected: UpdatedAt plus
// NextRun seconds. ok is false when the slot says nothing (NextRun 0, or
// no UpdatedAt).
func (s Slot) Due() (due time.Time, ok bool) {
	if s.NextRun <= 0 || s.UpdatedAt.IsZero() || math.IsNaN(s.NextRun) {
		return time.Time{}, false
	}
	return s.UpdatedAt.Add(seconds(s.NextRun)), true
}

// Stale reports whether the slot's next update has long passed at now:
// it is overdue by more than twice NextRun, and by at least [StaleGrace]
// (a slot expecting an update every 30 minutes is stale 90 minutes after
// its last one). A slot that gives no NextRun is never stale.
func (s Slot) Stale(now time.Time) bool {
	due, ok := s.Due()
	if !ok {
		return false
	}
	return now.Sub(due) > max(2*seconds(s.NextRun), StaleGrace)
}

// seconds converts a number of seconds to a Duration, saturating at the
// largest Duration.
func seconds(v float64) time.Duration {
	if v >= float64(math.MaxInt64)/float64(time.Second) {
		return math.MaxInt64
	}
	return time.Duration(v * float64(time.Second))
}
