#!/usr/bin/env bash
# conformance.sh [--litek8s] [E2E_FLAG...]: runs Kubernetes v1.37.2's
# [Conformance] tests (e2e.test) against the harness, with the images they
# use built offline and tagged with the names the tests ask for.
#
#   1. build.sh conformance (e2e.test, agnhost; cached);
#   2. up.sh [--litek8s] unless the harness is up in the same mode;
#   3. images: agnhost 2.66.1 and 2.55 (the agnhost binary, busybox's
#      applets, coredns, a TLS pair, the image's user and group, and the
#      tools the tests exec in it — dig, getent, curl, nc, ip, bash, socat,
#      iperf — copied from Debian's packages with their libraries; also
#      tagged glibc-dns-testing 2.1.1), busybox 1.37.0-2 (busybox's applets
#      with bash as sh) and pause 3.10.2 (the
#      harness's own, retagged), nginx 1.27.0-2 and 1.28.0-2 (Debian's nginx
#      serving a page on port 80); the other images the suite names are not
#      built, and the tests that need them fail on image pull errors;
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
# The real agnhost image is Alpine with the agnhost binary, a TLS key pair,
# a user and a group, coredns and the tools the tests exec in it (dig,
# curl, nc, ip, bash, socat, iperf). Here: the agnhost binary, busybox's
# applets, and those tools copied from Debian's packages with the shared
# libraries they load, and bash as /bin/sh (below). The e2e busybox image
# gets bash as /bin/sh too:
# busybox's and dash's sh drop environment variables whose names are not
# shell names (ConfigMap keys like data-1 that the tests pass with
# envFrom), bash passes them on, as the real busybox image's sh does.
tools=(bash-static bind9-dnsutils curl netcat-openbsd iproute2 iperf socat openssl)
missing=()
for p in "${tools[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
	log "installing ${missing[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# add_bin ROOT BIN [SRC]: copies SRC (default BIN) to ROOT/BIN and the
# shared libraries ldd says it loads into ROOT at their paths (files
# already there are kept, so mtimes stay and the image stays cached).
add_bin() {
	local root=$1 bin=$2 src=${3:-$2} libs lib
	[[ -e $root$bin ]] || install -D -p "$src" "$root$bin"
	libs=$(ldd "$src") || die "ldd $src failed"
	for lib in $(grep -o '/[^ ]*' <<<"$libs"); do
		[[ -e $root$lib ]] || install -D -p "$(readlink -f "$lib")" "$root$lib"
	done
}
# put FILE: writes stdin to FILE unless FILE already holds it (keeping its
# mtime, so the image tar stays cached).
put() {
	local new
	new=$(cat)
	[[ -f $1 && $(cat "$1") == "$new" ]] || printf '%s\n' "$new" >"$1"
}

ctx=$IMAGES/agnhost
mkdir -p "$ctx/uploads" "$ctx/etc"
cp -p "$BIN/agnhost" "$ctx/agnhost"
# The real image has /agnhost-2 → agnhost too (the Containers spec that
# overrides the entrypoint runs it).
[[ -L $ctx/agnhost-2 ]] || ln -sfn agnhost "$ctx/agnhost-2"
[[ -d $ctx/bin ]] || cp -a "$IMAGES/busybox/bin" "$ctx/bin"
cp -p "$BIN/coredns" "$ctx/coredns"
for b in /usr/bin/dig /usr/bin/nslookup /usr/bin/host /usr/bin/curl /usr/bin/nc.openbsd /usr/bin/bash \
	/usr/bin/socat /usr/bin/iperf /usr/sbin/ip /usr/bin/getent; do
	add_bin "$ctx" "$b"
done
[[ -L $ctx/usr/bin/nc ]] || ln -sfn nc.openbsd "$ctx/usr/bin/nc"
# Alpine's sh finds nc, ip, … on PATH; Debian's busybox sh runs its own
# applets first (its nc has no -v: the Services tests' "nc -v -t -w 2"
# fails), so sh is bash here.
[[ $(readlink "$ctx/bin/sh") == /usr/bin/bash ]] || ln -sfn /usr/bin/bash "$ctx/bin/sh"
# The StatefulSet tests' readiness probe fetches /localhost.crt from
# agnhost's test-webserver; porter serves TLS with the pair.
if [[ ! -f $ctx/localhost.crt ]]; then
	openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj /CN=localhost \
		-keyout "$ctx/localhost.key" -out "$ctx/localhost.crt" 2>/dev/null
fi
printf 'root:x:0:0:root:/root:/bin/sh\nuser-defined-in-image:x:1000:1000::/home/user-defined-in-image:/bin/sh\n' | put "$ctx/etc/passwd"
printf 'root:x:0:\nuser-defined-in-image:x:1000:\ngroup-defined-in-image:x:50000:user-defined-in-image\n' | put "$ctx/etc/group"
echo Containerfile | put "$ctx/.containerignore"
put "$ctx/Containerfile" <<'EOF'
FROM scratch
COPY . /
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
EXPOSE 80 8080 8081 9376 5000
ENTRYPOINT ["/agnhost"]
CMD ["pause"]
EOF
build_image agnhost localhost/litek8s-realcluster/agnhost:latest "$ctx"

ctx=$IMAGES/e2e-busybox
mkdir -p "$ctx"
[[ -d $ctx/bin ]] || cp -a "$IMAGES/busybox/bin" "$ctx/bin"
[[ -e $ctx/bin/bash ]] || cp -p /bin/bash-static "$ctx/bin/bash"
[[ $(readlink "$ctx/bin/sh") == bash ]] || ln -sfn bash "$ctx/bin/sh"
put "$ctx/Containerfile" <<'EOF'
FROM scratch
COPY bin /bin
ENV PATH=/bin
CMD ["sh"]
EOF
build_image e2e-busybox localhost/litek8s-realcluster/e2e-busybox:latest "$ctx"

# nginx 1.27.0-2 and 1.28.0-2: Debian's nginx binary (from its package,
# not installed on the host) with its libraries, serving a welcome page
# on port 80, and busybox's applets.
ctx=$IMAGES/nginx
mkdir -p "$ctx/etc/nginx" "$ctx/usr/share/nginx/html" "$ctx/var/lib/nginx" "$ctx/var/log/nginx" "$ctx/run" "$ctx/tmp"
if [[ ! -x $ctx/usr/sbin/nginx ]]; then
	deb=$(mktemp -d)
	(cd "$deb" && apt-get download -q nginx >/dev/null 2>&1) || die "apt-get download nginx failed"
	dpkg -x "$deb"/nginx_*.deb "$deb/root"
	install -D -p "$deb/root/usr/sbin/nginx" "$ctx/usr/sbin/nginx"
	rm -rf "$deb"
fi
add_bin "$ctx" /usr/sbin/nginx "$ctx/usr/sbin/nginx"
[[ -d $ctx/bin ]] || cp -a "$IMAGES/busybox/bin" "$ctx/bin"
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' | put "$ctx/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' | put "$ctx/etc/group"
put "$ctx/etc/nginx/nginx.conf" <<'EOF'
user nobody nogroup;
worker_processes 1;
pid /run/nginx.pid;
events { worker_connections 512; }
http {
	types { text/html html; text/plain txt; }
	default_type application/octet-stream;
	access_log /dev/stdout;
	server {
		listen 80;
		root /usr/share/nginx/html;
		index index.html;
	}
}
EOF
put "$ctx/usr/share/nginx/html/index.html" <<'EOF'
<!DOCTYPE html>
<html><head><title>Welcome to nginx!</title></head>
<body><h1>Welcome to nginx!</h1></body></html>
EOF
echo Containerfile | put "$ctx/.containerignore"
put "$ctx/Containerfile" <<'EOF'
FROM scratch
COPY . /
ENV PATH=/usr/sbin:/usr/bin:/sbin:/bin
EXPOSE 80
STOPSIGNAL SIGQUIT
CMD ["nginx", "-g", "daemon off;"]
EOF
build_image nginx localhost/litek8s-realcluster/nginx:latest "$ctx"

ctr_ images import "$IMAGES/agnhost.tar" >/dev/null
ctr_ images import "$IMAGES/e2e-busybox.tar" >/dev/null
ctr_ images import "$IMAGES/nginx.tar" >/dev/null
# tag SOURCE TARGET: (re)points TARGET at SOURCE in containerd.
tag() { ctr_ images tag --force "$1" "$2" >/dev/null; }
e2e=registry.k8s.io/e2e-test-images
tag localhost/litek8s-realcluster/agnhost:latest "$e2e/agnhost:2.66.1"
tag localhost/litek8s-realcluster/agnhost:latest "$e2e/agnhost:2.55"
# The DNS tests' glibc querier runs getent and dig in glibc-dns-testing:
# agnhost here is glibc-based and has both.
tag localhost/litek8s-realcluster/agnhost:latest "$e2e/glibc-dns-testing:2.1.1"
tag localhost/litek8s-realcluster/e2e-busybox:latest "$e2e/busybox:1.37.0-2"
tag localhost/litek8s-realcluster/nginx:latest "$e2e/nginx:1.27.0-2"
tag localhost/litek8s-realcluster/nginx:latest "$e2e/nginx:1.28.0-2"
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
