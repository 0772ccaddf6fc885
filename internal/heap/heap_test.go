package heap

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type item struct {
	key, seq int
	idx      int
}

func newHeap() *Heap[*item] {
	return &Heap[*item]{
		Less: func(a, b *item) bool {
			if a.key != b.key {
				return a.key < b.key
			}
			return a.seq < b.seq
		},
		SetIndex: func(x *item, i int) { x.idx = i },
	}
}

// check verifies the heap property and that every element knows its index.
func check(t *testing.T, h *Heap[*item]) {
	t.Helper()
	for i := range h.Len() {
		require.Equal(t, i, h.At(i).idx, "index of element %d", i)
		if i > 0 {
			require.False(t, h.Less(h.At(i), h.At((i-1)/2)), "element %d before its parent", i)
		}
	}
}

func TestPopOrder(t *testing.T) {
	h := newHeap()
	rng := rand.New(rand.NewPCG(1, 2))
	var want []int
	for seq := range 500 {
		k := rng.IntN(50)
		want = append(want, k)
		h.Push(&item{key: k, seq: seq})
	}
	check(t, h)
	slices.Sort(want)
	var got []int
	prevSeq := map[int]int{}
	for h.Len() > 0 {
		x := h.Pop()
		assert.Equal(t, -1, x.idx, "a popped element is told it left")
		if s, ok := prevSeq[x.key]; ok {
			assert.Greater(t, x.seq, s, "ties come out in Less's order")
		}
		prevSeq[x.key] = x.seq
		got = append(got, x.key)
	}
	assert.Equal(t, want, got)
}

// FuzzOperations runs random pushes, pops, fixes and removals against a
// sorted slice as the reference.
func FuzzOperations(f *testing.F) {
	f.Add([]byte{0, 5, 0, 3, 1, 2, 0, 9, 3, 1})
	f.Add([]byte{0, 1, 0, 1, 0, 1, 2, 0, 2, 0, 1})
	f.Fuzz(func(t *testing.T, ops []byte) {
		h := newHeap()
		var live []*item
		seq := 0
		for i := 0; i+1 < len(ops); i += 2 {
			op, arg := ops[i]%4, int(ops[i+1])
			switch {
			case op == 0 || len(live) == 0:
				x := &item{key: arg % 16, seq: seq}
				seq++
				h.Push(x)
				live = append(live, x)
			case op == 1:
				x := h.Pop()
				for _, y := range live {
					require.False(t, h.Less(y, x) && y != x, "popped %v while %v was less", x, y)
				}
				live = slices.DeleteFunc(live, func(y *item) bool { return y == x })
			case op == 2:
				x := live[arg%len(live)]
				x.key = (x.key + arg) % 16
				h.Fix(x.idx)
			default:
				x := live[arg%len(live)]
				require.Same(t, x, h.Remove(x.idx))
				require.Equal(t, -1, x.idx)
				live = slices.DeleteFunc(live, func(y *item) bool { return y == x })
			}
			require.Equal(t, len(live), h.Len())
			check(t, h)
		}
	})
}

func TestWithoutSetIndex(t *testing.T) {
	h := Heap[int]{Less: func(a, b int) bool { return a < b }}
	for _, v := range []int{5, 1, 4, 2, 3} {
		h.Push(v)
	}
	assert.Equal(t, 1, h.Min())
	var got []int
	for h.Len() > 0 {
		got = append(got, h.Pop())
	}
	assert.Equal(t, []int{1, 2, 3, 4, 5}, got)
}

func BenchmarkPushPop(b *testing.B) {
	h := newHeap()
	items := make([]*item, 10000)
	for i := range items {
		items[i] = &item{key: i * 7919 % 10000, seq: i}
		h.Push(items[i])
	}
	b.ResetTimer()
	for i := range b.N {
		x := h.Pop()
		x.key += 10000
		x.seq = i
		h.Push(x)
	}
}
