// Package heap is the one binary min-heap of the SDK, generic over its
// elements: the scheduler's timer heap and lane queues, the virtual-time
// runner's cycles in flight, and the simulator's agents all use it.
//
// Unlike container/heap it needs no interface methods and no boxing of
// elements in any. A [Heap] is ordered by its Less function; elements that
// must be fixed or removed in place ([Heap.Fix], [Heap.Remove]) track their
// own position through [Heap.SetIndex]. Push, Pop, Fix and Remove are
// O(log n). A Heap is not safe for concurrent use.
package heap
