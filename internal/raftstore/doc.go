// Package raftstore is litek8s's replicated object store: hashicorp/raft with
// internal/raftlog (hashicorp/raft-wal) as log and stable store, file snapshots, the FSM that applies
// WAL records of raw JSON objects, the in-memory object store ordered by key,
// the change feed that serves watches, write proposals, consistent reads
// (read-index), membership (join, removal, the leader's dead-member cleanup
// in autopilot.go) and their metrics (metrics.go; hashicorp/raft's
// own go-metrics bridged in gometrics.go). Its sentinel errors, and the HTTP
// codes the internal API answers them with, are in errors.go. It and raftlog
// are the only packages that import hashicorp/raft; everything it hands out
// is a kv value.
//
// Concurrency: a Store is safe for concurrent use. The FSM is driven by
// raft's single apply goroutine; readers never block it for longer than a
// pointer swap. Stored objects are immutable once applied, so lists, gets and
// watches share their bytes without copying. Every goroutine the Store starts
// is owned by it and ends before Close returns. The one process-wide state
// is the go-metrics global that hashicorp/raft emits to, set once by the
// first Store opened with a metrics registry (gometrics.go).
package raftstore
