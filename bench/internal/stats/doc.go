// Package stats computes the figures api_load reports: nearest-rank
// percentiles of one run's latencies and the median of several runs.
//
// Concurrency: pure functions; callers own their slices.
package stats
