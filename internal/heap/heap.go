package heap

// Heap is a binary min-heap ordered by Less. The zero value is not usable:
// set Less (and SetIndex, when elements are fixed or removed by index).
// A Heap is not safe for concurrent use.
type Heap[T any] struct {
	// Less reports whether a must come out before b. For a deterministic
	// order, break ties (for example by a sequence number).
	Less func(a, b T) bool
	// SetIndex, when set, is told every element's new index after it
	// moves, and -1 when it leaves the heap, so that its holder can call
	// [Heap.Fix] or [Heap.Remove] with it.
	SetIndex func(x T, i int)

	items []T
}

// Len returns the number of elements.
func (h *Heap[T]) Len() int { return len(h.items) }

// Min returns the element Pop would return, without removing it. It
// panics when the heap is empty.
func (h *Heap[T]) Min() T { return h.items[0] }

// At returns the element at index i (0 ≤ i < Len), in heap order.
func (h *Heap[T]) At(i int) T { return h.items[i] }

// Push adds x. O(log n).
func (h *Heap[T]) Push(x T) {
	h.items = append(h.items, x)
	i := len(h.items) - 1
	h.set(i)
	h.up(i)
}

// Pop removes and returns the least element. It panics when the heap is
// empty. O(log n).
func (h *Heap[T]) Pop() T { return h.Remove(0) }

// Remove removes and returns the element at index i. O(log n).
func (h *Heap[T]) Remove(i int) T {
	n := len(h.items) - 1
	x := h.items[i]
	if i != n {
		h.items[i] = h.items[n]
		h.set(i)
	}
	var zero T
	h.items[n] = zero // no stale reference keeps the element alive
	h.items = h.items[:n]
	if i != n && !h.down(i) {
		h.up(i)
	}
	if h.SetIndex != nil {
		h.SetIndex(x, -1)
	}
	return x
}

// Fix restores the order after the element at index i changed its key.
// O(log n).
func (h *Heap[T]) Fix(i int) {
	if !h.down(i) {
		h.up(i)
	}
}

func (h *Heap[T]) set(i int) {
	if h.SetIndex != nil {
		h.SetIndex(h.items[i], i)
	}
}

func (h *Heap[T]) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !h.Less(h.items[i], h.items[p]) {
			return
		}
		h.items[i], h.items[p] = h.items[p], h.items[i]
		h.set(i)
		h.set(p)
		i = p
	}
}

// down sifts the element at i down and reports whether it moved.
func (h *Heap[T]) down(i0 int) bool {
	i, n := i0, len(h.items)
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		j := l
		if r := l + 1; r < n && h.Less(h.items[r], h.items[l]) {
			j = r
		}
		if !h.Less(h.items[j], h.items[i]) {
			break
		}
		h.items[i], h.items[j] = h.items[j], h.items[i]
		h.set(i)
		h.set(j)
		i = j
	}
	return i > i0
}
