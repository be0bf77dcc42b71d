#!/usr/bin/env bash
# perf-compare.sh BASE [api_load flags...]
#
# Measures BASE (any commit-ish, checked out in a temporary git worktree)
# and then the working tree with bench/api_load, on this machine in this
# run, and compares them with bench/perfcompare: a scenario that lost more
# than 20% of its ops/s or 40% of its p99 is measured again (base, then
# branch, only those scenarios); the script fails only if the same scenario
# regressed both times. Extra arguments go to both api_load runs, e.g.
#   bench/perf-compare.sh HEAD~1 -duration 3s -runs 3
set -euo pipefail

base=${1:?usage: bench/perf-compare.sh BASE [api_load flags...]}
shift
root=$(git rev-parse --show-toplevel)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/perf-compare.XXXXXX")
wt="$tmp/base"
cleanup() {
	git -C "$root" worktree remove --force "$wt" >/dev/null 2>&1 || true
	git -C "$root" worktree prune >/dev/null 2>&1 || true
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

git -C "$root" worktree add --detach --quiet "$wt" "$base"
(cd "$root" && go build -o "$tmp/perfcompare" ./bench/perfcompare && go build -o "$tmp/branch_api_load" ./bench/api_load)

if [ ! -d "$wt/bench/api_load" ]; then
	echo "perf-compare: $base has no bench/api_load: nothing to compare with; the branch's figures only"
	(cd "$root" && "$tmp/branch_api_load" "$@")
	exit 0
fi
(cd "$wt" && go build -o "$tmp/base_api_load" ./bench/api_load)

echo "== base: $base ($(git -C "$wt" rev-parse --short HEAD))"
(cd "$wt" && "$tmp/base_api_load" "$@" -json "$tmp/base.json")
echo "== branch: the working tree of $root"
(cd "$root" && "$tmp/branch_api_load" "$@" -json "$tmp/branch.json")
echo
"$tmp/perfcompare" -base "$tmp/base.json" -branch "$tmp/branch.json" -regressed "$tmp/regressed"

again=$(cat "$tmp/regressed")
[ -z "$again" ] && exit 0
echo
echo "== measuring again, base then branch: $again"
(cd "$wt" && "$tmp/base_api_load" "$@" -scenario "$again" -json "$tmp/base-again.json")
(cd "$root" && "$tmp/branch_api_load" "$@" -scenario "$again" -json "$tmp/branch-again.json")
echo
"$tmp/perfcompare" -base "$tmp/base.json" -branch "$tmp/branch.json" \
	-base-again "$tmp/base-again.json" -branch-again "$tmp/branch-again.json"
