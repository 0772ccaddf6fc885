// Package lease holds the contract between a scheduler and a lease
// manager, when many processes share one population of agents: the
// [Lease] record, with its fencing token, and the [Manager] interface.
//
// It sits below the loop and the stores, as database/sql/driver sits below
// database/sql: runner.Runner consumes a [Manager]; store/pgstore
// implements it. This package imports nothing else of the SDK.
//
// A lease gives one process the right to run one agent until it expires.
// Its epoch is a fencing token that grows at every change of owner; a
// backend checks every write of the holder against it, so that a process
// that lost its lease (after a partition or a long pause) can never write.
//
// A [Manager] that also measures its renewals implements [LateReporter]:
// the scheduler reports each renewal that came with less than the alarm
// margin left ([LateRenewal]), before the lease is lost.
package lease
