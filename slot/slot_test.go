package slot_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/existence-loop/sdk/slot"
)

var t0 = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)

func valid() slot.Slot {
	return slot.Slot{ID: "weather", Title: "Weather", Status: slot.Completed, Summary: "dropping 5°C\nin the next hour",
		Importance: 0.8, Confidence: 0.95, NextRun: 3600, NotifyUser: true, UpdatedAt: t0}
}

func TestValidate(t *testing.T) {
	require.NoError(t, valid().Validate())
	for _, tc := range []struct {
		name string
		edit func(s *slot.Slot)
		want string
	}{
		{"no id", func(s *slot.Slot) { s.ID = "" }, `"slot_id" is missing`},
		{"space in id", func(s *slot.Slot) { s.ID = "a b" }, "whitespace or a control character"},
		{"control in id", func(s *slot.Slot) { s.ID = "a\x1bb" }, "whitespace or a control character"},
		{"long id", func(s *slot.Slot) { s.ID = strings.Repeat("a", 129) }, "129 characters"},
		{"invalid utf8 id", func(s *slot.Slot) { s.ID = "a\xffb" }, "not valid UTF-8"},
		{"no status", func(s *slot.Slot) { s.Status = "" }, `"status" is missing`},
		{"bad status", func(s *slot.Slot) { s.Status = "Done!" }, `"status" "Done!"`},
		{"long title", func(s *slot.Slot) { s.Title = strings.Repeat("é", 81) }, `"title" has 81 characters`},
		{"newline in title", func(s *slot.Slot) { s.Title = "a\nb" }, `"title" holds a control character`},
		{"escape in summary", func(s *slot.Slot) { s.Summary = "ok\x1b[2J" }, `"summary" holds a control character (U+001B)`},
		{"bidi in summary", func(s *slot.Slot) { s.Summary = "abc\u202Edef" }, "bidirectional control character (U+202E)"},
		{"C1 in title", func(s *slot.Slot) { s.Title = "a\u0085b" }, "control character (U+0085)"},
		{"long summary", func(s *slot.Slot) { s.Summary = strings.Repeat("x", 501) }, "501 characters"},
		{"importance above 1", func(s *slot.Slot) { s.Importance = 1.5 }, `"importance" is 1.5`},
		{"negative confidence", func(s *slot.Slot) { s.Confidence = -0.1 }, `"confidence" is -0.1`},
		{"NaN importance", func(s *slot.Slot) { s.Importance = math.NaN() }, `"importance" is NaN`},
		{"negative next_run", func(s *slot.Slot) { s.NextRun = -1 }, `"next_run" is -1`},
		{"infinite next_run", func(s *slot.Slot) { s.NextRun = math.Inf(1) }, `"next_run" is +Inf`},
		{"next_run over a year", func(s *slot.Slot) { s.NextRun = slot.MaxNextRun + 1 }, `"next_run"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := valid()
			tc.edit(&s)
			err := s.Validate()
			require.ErrorIs(t, err, slot.ErrInvalid)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestStatusValid(t *testing.T) {
	for s, want := range map[slot.Status]bool{
		slot.Pending: true, slot.Running: true, slot.Completed: true, slot.Failed: true, slot.Idle: true,
		"changed": true, "in_progress": true, "re-run2": true,
		"": false, "Done": false, "2fast": false, "-x": false, "a b": false, slot.Status(strings.Repeat("a", 33)): false,
	} {
		assert.Equal(t, want, s.Valid(), "%q", s)
	}
}

func TestClean(t *testing.T) {
	s := slot.Slot{ID: "feed:news", Title: "  Breaking\n\tnews \u202Eevil\x1b[31m  ", Status: slot.Completed,
		Summary: "line one\r\nline two\t\x00 " + strings.Repeat("y", 600) + "\xff"}
	c := s.Clean()
	assert.Equal(t, "Breaking news evil[31m", c.Title, "one line, no controls")
	assert.True(t, strings.HasPrefix(c.Summary, "line one\nline two "), c.Summary)
	assert.Equal(t, slot.MaxSummaryChars, len([]rune(c.Summary)), "cut to the cap")
	assert.True(t, strings.HasSuffix(c.Summary, "…"), "a cut is marked")
	require.NoError(t, c.Validate(), "a cleaned slot with valid numbers validates")

	blank := slot.Slot{ID: "workspace", Status: slot.Idle}.Clean()
	assert.Equal(t, "workspace", blank.Title, "a blank title is the id")
	long := slot.Slot{ID: "x", Title: strings.Repeat("t", 100), Status: slot.Idle}.Clean()
	assert.Len(t, []rune(long.Title), slot.MaxTitleChars)
}

func TestPutDropsTheLeastImportant(t *testing.T) {
	var board []slot.Slot
	var dropped []slot.Slot
	for i, x := range []struct {
		id  string
		imp float64
	}{{"a", 0.5}, {"b", 0.2}, {"c", 0.9}, {"d", 0.2}} {
		board, dropped = slot.Put(board, slot.Slot{ID: x.id, Importance: x.imp, UpdatedAt: t0.Add(time.Duration(i) * time.Second)}, 3)
		if i < 3 {
			assert.Empty(t, dropped)
		}
	}
	require.Len(t, dropped, 1)
	assert.Equal(t, "b", dropped[0].ID, "lowest importance, older of the two")
	assert.Equal(t, []string{"a", "c", "d"}, ids(board), "the order first posted")

	// Replacing keeps the place; a new slot that ranks lowest is itself dropped.
	before := board
	board, dropped = slot.Put(board, slot.Slot{ID: "a", Importance: 0.1, Summary: "new"}, 3)
	assert.Empty(t, dropped)
	assert.Equal(t, []string{"a", "c", "d"}, ids(board))
	assert.Equal(t, "", before[0].Summary, "the input board is not modified")
	board, dropped = slot.Put(board, slot.Slot{ID: "e", Importance: 0.05}, 3)
	require.Len(t, dropped, 1)
	assert.Equal(t, "e", dropped[0].ID)
	assert.Equal(t, []string{"a", "c", "d"}, ids(board))

	// Default cap.
	board = nil
	for i := range slot.DefaultMax + 2 {
		board, _ = slot.Put(board, slot.Slot{ID: string(rune('a' + i)), Importance: 0.5}, 0)
	}
	assert.Len(t, board, slot.DefaultMax)
}

func TestRemoveFindSorted(t *testing.T) {
	board := []slot.Slot{
		{ID: "low", Importance: 0.1, UpdatedAt: t0},
		{ID: "old", Importance: 0.7, UpdatedAt: t0},
		{ID: "new", Importance: 0.7, UpdatedAt: t0.Add(time.Minute)},
		{ID: "top", Importance: 1},
	}
	assert.Equal(t, []string{"top", "new", "old", "low"}, ids(slot.Sorted(board)))
	assert.Equal(t, "low", board[0].ID, "Sorted copies")
	out, ok := slot.Remove(board, "old")
	assert.True(t, ok)
	assert.Equal(t, []string{"low", "new", "top"}, ids(out))
	assert.Len(t, board, 4, "Remove copies")
	_, ok = slot.Remove(board, "nope")
	assert.False(t, ok)
	s, ok := slot.Find(board, "new")
	assert.True(t, ok)
	assert.Equal(t, 0.7, s.Importance)
}

func TestStale(t *testing.T) {
	s := slot.Slot{ID: "news", NextRun: 1800, UpdatedAt: t0}
	due, ok := s.Due()
	require.True(t, ok)
	assert.Equal(t, t0.Add(30*time.Minute), due)
	assert.False(t, s.Stale(t0.Add(89*time.Minute)), "overdue by twice next_run: not yet")
	assert.True(t, s.Stale(t0.Add(91*time.Minute)))
	quick := slot.Slot{ID: "tick", NextRun: 5, UpdatedAt: t0}
	assert.False(t, quick.Stale(t0.Add(50*time.Second)), "at least a minute overdue")
	assert.True(t, quick.Stale(t0.Add(66*time.Second)))
	assert.False(t, slot.Slot{ID: "x", UpdatedAt: t0}.Stale(t0.Add(1000*time.Hour)), "no next_run: never stale")
	_, ok = slot.Slot{ID: "x", NextRun: 10}.Due()
	assert.False(t, ok, "never updated")
}

func ids(ss []slot.Slot) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.ID
	}
	return out
}
