#!/usr/bin/env bash
# conformance.sh [--litek8s] [E2E_FLAG...]: runs Kubernetes v1.37.2's
# [Conformance] tests (e2e.test) against the harness, with the images they
# use built offline and tagged with the names the tests ask for.
#
#   1. build.sh conformance (e2e.test, agnhost; cached);
#   2. up.sh [--litek8s] unless the harness is up in the same mode;
#   3. images: agnhost 2.66.1 and 2.55 (the agnhost binary and busybox's
#      applets in a scratch image, since the tests also run shell commands
#      in it), busybox 1.37.0-2 and pause 3.10.2 (the harness's own,
#      retagged); the other images the suite names are not built, and the
#      tests that need them fail on ErrImageNeverPull-like pull errors;
#   4. e2e.test --ginkgo.focus='\[Conformance\]' with the report (JUnit) and
#      log in $STATE/conformance; the last line is ginkgo's summary.
#
# The harness stays up afterwards (inspect it; down.sh removes it). FOCUS
# (default '\[Conformance\]') is e2e.test's --ginkgo.focus, e.g.
# FOCUS='\[sig-node\] Pods .*\[Conformance\]' for fewer tests; extra
# arguments go to e2e.test (e.g. --ginkgo.timeout=2h). PARALLEL=N runs the
# tests not labelled Serial on N processes (ginkgo's CLI) into e2e.log, then
# the Serial ones alone into e2e-serial.log. SKIP is --ginkgo.skip and
# TIMEOUT (default 6h) the suite timeout of each phase. Not part of CI: a
# full run takes hours on one process.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$HERE/lib.sh"

mode=kube
if [[ ${1:-} == --litek8s ]]; then
	mode=litek8s
	shift
fi

# Hold the machine's realcluster lock for the whole run, so that no test
# tears the harness down under it (up.sh and down.sh see it is ours).
take_lock

"$HERE/build.sh"
"$HERE/build.sh" conformance

# up.sh records its mode in $STATE/mode; bring the harness up in the asked
# mode unless it already is.
if [[ ! -f $STATE/env || $(cat "$STATE/mode" 2>/dev/null) != "$mode" ]]; then
	if [[ $mode == litek8s ]]; then "$HERE/up.sh" --litek8s; else "$HERE/up.sh"; fi
fi
# shellcheck disable=SC1091
source "$STATE/env"

# --- images ----------------------------------------------------------------------
ctx=$IMAGES/agnhost
mkdir -p "$ctx"
cp -p "$BIN/agnhost" "$ctx/agnhost"
# The real image has /agnhost-2 → agnhost too (the Containers spec that
# overrides the entrypoint runs it).
[[ -L $ctx/agnhost-2 ]] || ln -sfn agnhost "$ctx/agnhost-2"
[[ -d $ctx/bin ]] || cp -a "$IMAGES/busybox/bin" "$ctx/bin"
printf 'FROM scratch\nCOPY bin /bin\nCOPY agnhost /agnhost\nCOPY agnhost-2 /agnhost-2\nENV PATH=/bin\nENTRYPOINT ["/agnhost"]\nCMD ["pause"]\n' >"$ctx/Containerfile.new"
# Keep the Containerfile's mtime unless it changed, so the tar stays cached.
if cmp -s "$ctx/Containerfile.new" "$ctx/Containerfile"; then rm "$ctx/Containerfile.new"; else mv "$ctx/Containerfile.new" "$ctx/Containerfile"; fi
if [[ ! -f $IMAGES/agnhost.tar || -n $(find "$ctx" -mindepth 1 -maxdepth 1 -newer "$IMAGES/agnhost.tar" -print -quit) ]]; then
	log "building image agnhost"
	podman build -q -t localhost/litek8s-realcluster/agnhost:latest -f "$ctx/Containerfile" "$ctx" >/dev/null
	podman save -q --format docker-archive -o "$IMAGES/agnhost.tar.tmp" localhost/litek8s-realcluster/agnhost:latest
	podman rmi -f localhost/litek8s-realcluster/agnhost:latest >/dev/null 2>&1 || true
	mv "$IMAGES/agnhost.tar.tmp" "$IMAGES/agnhost.tar"
fi
ctr_ images import "$IMAGES/agnhost.tar" >/dev/null
# tag SOURCE TARGET: (re)points TARGET at SOURCE in containerd.
tag() { ctr_ images tag --force "$1" "$2" >/dev/null; }
e2e=registry.k8s.io/e2e-test-images
tag localhost/litek8s-realcluster/agnhost:latest "$e2e/agnhost:2.66.1"
tag localhost/litek8s-realcluster/agnhost:latest "$e2e/agnhost:2.55"
tag "$BUSYBOX_IMAGE" "$e2e/busybox:1.37.0-2"
tag "$PAUSE_IMAGE" registry.k8s.io/pause:3.10.2
log "conformance images tagged"

# --- run -------------------------------------------------------------------------
out=$STATE/conformance
rm -rf "$out" && mkdir -p "$out"
log "e2e.test [Conformance] ($mode) → $out/e2e.log"
focus="${FOCUS:-\[Conformance\]}" # quoted: unquoted, the backslashes would go
timeout=${TIMEOUT:-6h}
# An empty skip pattern would match every spec: pass one only when set.
skip_cli=() skip_e2e=()
if [[ -n ${SKIP:-} ]]; then skip_cli=(--skip="$SKIP") skip_e2e=(--ginkgo.skip="$SKIP"); fi
e2e_flags=(--kubeconfig="$KUBECONFIG" --provider=skeleton --dump-logs-on-failure=false)
set +e
if ((${PARALLEL:-1} > 1)); then
	# The tests not labelled Serial on PARALLEL processes, then the Serial
	# ones alone, as Kubernetes' own conformance runs do.
	log "  not [Serial] on $PARALLEL processes, then [Serial] on one"
	"$BIN/ginkgo" --procs="$PARALLEL" --focus="$focus" "${skip_cli[@]}" --label-filter='!Serial' --no-color --timeout="$timeout" \
		--output-dir="$out" --junit-report=junit_parallel.xml "$BIN/e2e.test" -- \
		"${e2e_flags[@]}" "$@" >"$out/e2e.log" 2>&1
	rc=$?
	"$BIN/e2e.test" "${e2e_flags[@]}" --ginkgo.focus="$focus" "${skip_e2e[@]}" --ginkgo.label-filter=Serial \
		--ginkgo.no-color --ginkgo.timeout="$timeout" --report-dir="$out" "$@" >"$out/e2e-serial.log" 2>&1
	((rc |= $?))
	summary_logs=("$out/e2e.log" "$out/e2e-serial.log")
else
	"$BIN/e2e.test" "${e2e_flags[@]}" --ginkgo.focus="$focus" "${skip_e2e[@]}" --ginkgo.no-color \
		--ginkgo.timeout="$timeout" --report-dir="$out" "$@" >"$out/e2e.log" 2>&1
	rc=$?
	summary_logs=("$out/e2e.log")
fi
set -e
for f in "${summary_logs[@]}"; do
	echo "$(basename "$f"):"
	grep -E '^(Ran [0-9]+ of|(SUCCESS|FAIL)! --)' "$f" || tail -5 "$f"
done
exit $rc
