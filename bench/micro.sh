#!/usr/bin/env bash
# micro.sh [BASE]
#
# Runs the hot-path micro-benchmarks (store list, WAL encode + FSM apply,
# watch fan-out, list serving incl. Tables and selectors, Table cells,
# selector matching) -count times and prints them through benchstat. With
# BASE (any commit-ish, checked out in a temporary git worktree) it runs
# BASE's then the working tree's in the same run and benchstat compares
# them side by side. benchstat is installed into ~/.cache/litek8s-bench on
# first use (from the Go module proxy).
#   bench/micro.sh            # the working tree alone
#   bench/micro.sh HEAD~1     # base vs working tree
# COUNT (default 6) and BENCH (a -bench regexp) override the defaults.
set -euo pipefail

root=$(git rev-parse --show-toplevel)
count=${COUNT:-6}
bench=${BENCH:-'^Benchmark(List|Apply|WatchFanout|ServeList|SelectorMatch|Cells|AppendCells)$'}
pkgs=(./internal/raftstore ./internal/api ./internal/api/table)
bin=${XDG_CACHE_HOME:-$HOME/.cache}/litek8s-bench
benchstat=$bin/benchstat
if [ ! -x "$benchstat" ]; then
	GOBIN=$bin go install golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/micro.XXXXXX")
wt="$tmp/base"
cleanup() {
	git -C "$root" worktree remove --force "$wt" >/dev/null 2>&1 || true
	git -C "$root" worktree prune >/dev/null 2>&1 || true
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

run() { # dir out
	(cd "$1" && go test -run '^$' -bench "$bench" -benchmem -count "$count" "${pkgs[@]}") >"$2"
}

if [ $# -eq 0 ]; then
	run "$root" "$tmp/head.txt"
	"$benchstat" working-tree="$tmp/head.txt"
	exit 0
fi
git -C "$root" worktree add --detach --quiet "$wt" "$1"
echo "== base: $1 ($(git -C "$wt" rev-parse --short HEAD))" >&2
run "$wt" "$tmp/base.txt"
echo "== branch: the working tree of $root" >&2
run "$root" "$tmp/branch.txt"
"$benchstat" base="$tmp/base.txt" branch="$tmp/branch.txt"
