// Package report is the JSON document api_load writes with -json (the
// format of bench/perf-baseline.json and what bench/perfcompare reads), the
// issue 4 targets computed from it, and the text tables both programs print.
//
// The JSON format is versioned by Report.Schema: perf-compare.sh runs the
// api_load of an older commit and compares its output with the working
// tree's, so fields are only ever added.
//
// Concurrency: plain values and pure functions.
package report
