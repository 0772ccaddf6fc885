package slot

import (
	"cmp"
	"slices"
	"strings"
)

// DefaultMax is how many slots a board keeps by default, an agent's own
// board and a shared one (identity.SharedBoard) alike.
const DefaultMax = 20

// Put returns board with s in it: s replaces the slot with its id in
// place, or is appended. When that leaves more than max slots (max <= 0
// means [DefaultMax]), the slots of lowest importance are dropped until
// max remain — the least recently updated first among equal importance,
// then by id — and returned in the order dropped; s itself is dropped when
// it ranks lowest. board is not modified: the result is a new slice.
// Put does not validate s (see [Slot.Validate]).
func Put(board []Slot, s Slot, max int) (out, dropped []Slot) {
	if max <= 0 {
		max = DefaultMax
	}
	out = make([]Slot, 0, len(board)+1)
	replaced := false
	for _, x := range board {
		if x.ID == s.ID && !replaced {
			out = append(out, s)
			replaced = true
			continue
		}
		out = append(out, x)
	}
	if !replaced {
		out = append(out, s)
	}
	for len(out) > max {
		low := 0
		for i := 1; i < len(out); i++ {
			if dropBefore(out[i], out[low]) {
				low = i
			}
		}
		dropped = append(dropped, out[low])
		out = slices.Delete(out, low, low+1)
	}
	return out, dropped
}

// dropBefore reports whether a goes before b when a full board drops
// slots: lower importance, then older update, then smaller id.
func dropBefore(a, b Slot) bool {
	if a.Importance != b.Importance {
		return a.Importance < b.Importance
	}
	if !a.UpdatedAt.Equal(b.UpdatedAt) {
		return a.UpdatedAt.Before(b.UpdatedAt)
	}
	return a.ID < b.ID
}

// Remove returns board without the slot with id (a new slice), and
// whether there was one.
func Remove(board []Slot, id string) ([]Slot, bool) {
	i := slices.IndexFunc(board, func(s Slot) bool { return s.ID == id })
	if i < 0 {
		return board, false
	}
	return slices.Delete(slices.Clone(board), i, i+1), true
}

// Find returns the slot with id, and whether board has one.
func Find(board []Slot, id string) (Slot, bool) {
	for _, s := range board {
		if s.ID == id {
			return s, true
		}
	}
	return Slot{}, false
}

// Sorted returns a copy of slots in the order the prompt and the
// dashboard show them: most important first, then most recently updated,
// then by id.
func Sorted(slots []Slot) []Slot {
	out := slices.Clone(slots)
	slices.SortStableFunc(out, func(a, b Slot) int {
		if c := cmp.Compare(b.Importance, a.Importance); c != 0 {
			return c
		}
		if c := b.UpdatedAt.Compare(a.UpdatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out
}
