// Package kv holds the value types shared by the store (internal/raftstore)
// and its users (internal/api, internal/controllers): keys, stored objects,
// writes, watch events and the store's typed errors.
//
// It has no behaviour worth a lock: every value here is immutable once a
// store has handed it out, so it may be read from any goroutine.
package kv
