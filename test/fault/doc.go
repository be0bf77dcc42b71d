// Package fault is the fault suite (issue 8): member processes under
// continuous writes from several clients while members are killed,
// paused, partitioned (internal/faultnet) and restarted; afterwards the
// history of operations is checked (history.go).
package fault
