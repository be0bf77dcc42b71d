// Command perfcompare compares two api_load -json reports, base and branch,
// measured on the same machine in the same run by bench/perf-compare.sh,
// and decides whether the branch regressed. It holds the logic so that the
// script stays a thin sequence of builds and runs.
//
//	perfcompare -base base.json -branch branch.json -regressed FILE
//
// prints both tables side by side and writes the scenarios that lost more
// than -ops-loss of their ops/s or gained more than -p99-gain on their p99
// to FILE (comma-separated, empty when none), to be measured again;
//
//	perfcompare -base base.json -branch branch.json -base-again b2.json -branch-again r2.json
//
// also compares the second measurement and exits 1 when a scenario
// regressed both times (once is noise on a shared 2-core machine).
//
// Exit status: 0 no confirmed regression, 1 confirmed regression, 2 usage
// or input error.
package main
