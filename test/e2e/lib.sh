# Helpers shared by the end-to-end scripts; sourced, never run. A script
# using them runs under `set -euo pipefail` and starts with
#
#   . "$(dirname "$0")/lib.sh"
#   e2e_init NAME "${1:-}"     # work dir, node binary, EXIT trap
#   start_cluster              # 3 members on 127.0.0.1, ports chosen at run time
#
# e2e_init creates the work dir $work under ${TMPDIR:-/tmp}, sets $node (the
# binary given, or cmd/node built into $work) and installs the EXIT trap: it
# stops every process recorded in $pids (members and background kubectl
# watches: TERM, then KILL after 10 s), prints the members' logs when the
# script fails, and removes $work unless KEEP_E2E is set.

e2e_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
pids=()
# member_args: extra flags for every member start_member starts; a script
# sets them before start_cluster, e.g. member_args=(--simulated-nodes 3).
member_args=()

e2e_init() { # name [node-binary]
  work=$(mktemp -d "${TMPDIR:-/tmp}/litek8s-$1.XXXXXX")
  trap e2e_cleanup EXIT
  node=${2:-}
  if [ -z "$node" ]; then
    node="$work/node"
    (cd "$e2e_root" && go build -o "$node" ./cmd/node)
  fi
}

# stop_pids: TERM every recorded process, KILL what is still alive after 10 s,
# and reap them all, so that nothing outlives the script.
stop_pids() {
  local pid _
  [ "${#pids[@]}" -gt 0 ] || return 0
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for _ in $(seq 100); do
    local alive=0
    for pid in "${pids[@]}"; do
      if kill -0 "$pid" 2>/dev/null; then alive=1; break; fi
    done
    [ "$alive" = 0 ] && break
    sleep 0.1
  done
  for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  pids=()
}

e2e_cleanup() {
  local rc=$?
  trap - EXIT
  stop_pids
  if [ "$rc" -ne 0 ]; then
    echo "--- member logs (failure) ---" >&2
    for f in "$work"/n*/err.log; do
      [ -e "$f" ] || continue
      echo "== $f" >&2
      tail -n 30 "$f" >&2 || true
    done
  fi
  if [ -n "${KEEP_E2E:-}" ]; then echo "kept $work" >&2; else rm -rf "$work"; fi
  exit "$rc"
}

fail() { echo "FAIL: $*" >&2; exit 1; }
step() { echo "--- $*"; }

# wait_for FILE PATTERN: wait up to 30 s for a line matching the ERE PATTERN in FILE.
wait_for() {
  local _
  for _ in $(seq 300); do
    grep -qE "$2" "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  fail "timed out waiting for '$2' in $1"
}

# start_member ID [JOIN-URL TOKEN]: start member node-ID in $work/nID with
# --api-addr and --raft-addr on port 0; returns once its kubeconfig is written.
start_member() {
  local id=$1 dir="$work/n$1"
  mkdir -p "$dir"
  local args=(--id "node-$id" --data-dir "$dir/data" --api-addr 127.0.0.1:0 --raft-addr 127.0.0.1:0)
  [ $# -ge 3 ] && args+=(--join "$2" --join-token "$3")
  args+=("${member_args[@]}")
  "$node" "${args[@]}" >"$dir/out.log" 2>"$dir/err.log" &
  pids+=($!)
  wait_for "$dir/out.log" "^kubeconfig: "
}

# member_url ID: the https URL member ID serves the API on.
member_url() {
  sed -n 's/^litek8s member .* serving \(https:[^ ]*\) .*/\1/p' "$work/n$1/out.log"
}

# start_cluster: members 1, 2 and 3; 2 and 3 join through member 1.
start_cluster() {
  start_member 1
  local url token
  url=$(member_url 1)
  token=$(cat "$work/n1/data/tls/join-token")
  start_member 2 "$url" "$token"
  start_member 3 "$url" "$token"
}

# k MEMBER kubectl-args...: kubectl against one member, with a discovery
# cache private to this run.
k() {
  local m=$1; shift
  kubectl --kubeconfig "$work/n$m/data/kubeconfig" --cache-dir "$work/kube-cache" --request-timeout=20s "$@"
}

# wait_default_namespaces: every member lists default, kube-system and
# kube-public (members that just joined may still be catching up).
wait_default_namespaces() {
  local m out _
  for m in 1 2 3; do
    for _ in $(seq 100); do
      out=$(k "$m" get ns -o name 2>/dev/null || true)
      [ "$(echo "$out" | grep -c -E '^namespace/(default|kube-system|kube-public)$')" = 3 ] && break
      sleep 0.1
    done
    echo "$out" | grep -qx namespace/default || fail "member $m: namespace default missing: $out"
    echo "$out" | grep -qx namespace/kube-system || fail "member $m: kube-system missing"
    echo "$out" | grep -qx namespace/kube-public || fail "member $m: kube-public missing"
  done
}
