#!/usr/bin/env bash
# build.sh builds the binaries of the realcluster harness into a cache outside
# the repository and skips every binary that is already there:
#   kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy
#   kubectl (k8s.io/kubernetes v1.37.2), etcd (go.etcd.io/etcd/server/v3),
#   coredns (github.com/coredns/coredns), crictl (sigs.k8s.io/cri-tools, used
#   by down.sh to stop pod sandboxes), metrics-server (sigs.k8s.io/metrics-server,
#   for `kubectl top`) and pause (./pause).
# Cold it takes ~25 min on 2 cores; warm, seconds.
#
# `build.sh conformance` builds, instead, what a conformance run needs:
# e2e.test (k8s.io/kubernetes/test/e2e, `go test -c`) and agnhost
# (k8s.io/kubernetes/test/images/agnhost); ~27 min cold on 2 busy cores.
# CI does not build them.
#
# Environment: LITEK8S_CACHE (default /var/cache/litek8s).
set -euo pipefail

K8S_VERSION=v1.37.2
STAGING_VERSION=v0.37.2
ETCD_VERSION=v3.7.3
COREDNS_VERSION=v1.15.0
CRITOOLS_VERSION=v1.37.0
METRICS_SERVER_VERSION=v0.8.0

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${LITEK8S_CACHE:-/var/cache/litek8s}
ROOT=$CACHE/k8s-$K8S_VERSION
BIN=$ROOT/bin
export CGO_ENABLED=0 GOFLAGS=-buildvcs=false GOTOOLCHAIN=local
mkdir -p "$BIN"
# One build at a time per cache (two test binaries may call up.sh at once).
exec 9>"$ROOT/.build.lock"
flock 9

log() { echo "$(date -u +%H:%M:%S) build.sh: $*" >&2; }

# missing prints the names in "$@" that are not yet in $BIN.
missing() {
	local n
	for n in "$@"; do
		[[ -x $BIN/$n ]] || echo "$n"
	done
}

# version_ldflags: the -X flags that stamp Kubernetes' version into a
# binary, as its release builds do (e2e.test reads its own version, e.g.
# for the Pod Security level of its fixtures).
version_ldflags() {
	local minor=${K8S_VERSION#v1.} v=k8s.io/component-base/version
	minor=${minor%%.*}
	echo "-X $v.gitVersion=$K8S_VERSION -X $v.gitMajor=1 -X $v.gitMinor=$minor" \
		"-X $v.gitTreeState=clean -X $v.buildDate=$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
		"-X k8s.io/client-go/pkg/version.gitVersion=$K8S_VERSION" \
		"-X k8s.io/client-go/pkg/version.gitMajor=1 -X k8s.io/client-go/pkg/version.gitMinor=$minor"
}

# throwaway DIR MODULE@VERSION: a module in DIR that requires MODULE@VERSION,
# used to build commands whose own go.mod carries replace directives.
throwaway() {
	local dir=$1
	mkdir -p "$dir"
	if [[ ! -f $dir/go.mod ]]; then
		(cd "$dir" && go mod init litek8s.local/realcluster-build >/dev/null 2>&1)
	fi
}

# kubernetes_module: the current directory becomes a module requiring
# k8s.io/kubernetes, in which every staging module that k8s.io/kubernetes
# replaces with ./staging/src/k8s.io/X is replaced with the published X.
kubernetes_module() {
	local gomod m
	gomod=$(go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/.*"GoMod": "\(.*\)",/\1/p')
	for m in $(sed -n 's#^[[:space:]]*\(k8s.io/[^ ]*\) => ./staging/.*#\1#p' "$gomod"); do
		go mod edit -replace "$m=$m@$STAGING_VERSION"
	done
	go mod edit -require "k8s.io/kubernetes@$K8S_VERSION"
}

build_kubernetes() {
	local cmds
	mapfile -t cmds < <(missing kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl)
	((${#cmds[@]})) || return 0
	log "kubernetes $K8S_VERSION: ${cmds[*]}"
	local dir=$ROOT/src/kubernetes
	throwaway "$dir"
	(
		cd "$dir"
		kubernetes_module
		local pkgs=() c
		for c in "${cmds[@]}"; do
			pkgs+=("k8s.io/kubernetes/cmd/$c")
		done
		printf 'package tools\n\nimport (\n' >tools.go
		for c in "${pkgs[@]}"; do printf '\t_ "%s"\n' "$c" >>tools.go; done
		printf ')\n' >>tools.go
		# tools.go is not buildable (imports of main packages); it only keeps
		# the requirements for go mod; build with explicit packages.
		sed -i '1i //go:build tools\n' tools.go
		go get "${pkgs[@]/%/@$K8S_VERSION}" >/dev/null 2>&1
		local ld
		ld="-s -w $(version_ldflags)"
		# One package per go build so that a finished binary is kept even if
		# a later one is interrupted; the build cache makes the rest cheaper.
		for c in "${cmds[@]}"; do
			log "  go build $c"
			local start=$SECONDS
			go build -trimpath -ldflags "$ld" -o "$BIN/$c.tmp" "k8s.io/kubernetes/cmd/$c"
			mv "$BIN/$c.tmp" "$BIN/$c"
			log "  $c built in $((SECONDS - start))s"
		done
	)
}

build_etcd() {
	[[ -n $(missing etcd) ]] || return 0
	log "etcd $ETCD_VERSION"
	local dir=$ROOT/src/etcd
	throwaway "$dir"
	(
		cd "$dir"
		local gomod m
		gomod=$(go mod download -json "go.etcd.io/etcd/server/v3@$ETCD_VERSION" | sed -n 's/.*"GoMod": "\(.*\)",/\1/p')
		for m in $(sed -n 's#^[[:space:]]*\(go.etcd.io/etcd/[^ ]*\) => \.\./.*#\1#p' "$gomod"); do
			go mod edit -replace "$m=$m@$ETCD_VERSION"
		done
		go get "go.etcd.io/etcd/server/v3@$ETCD_VERSION" >/dev/null 2>&1
		go build -trimpath -ldflags "-s -w" -o "$BIN/etcd.tmp" go.etcd.io/etcd/server/v3
		mv "$BIN/etcd.tmp" "$BIN/etcd"
	)
}

build_coredns() {
	[[ -n $(missing coredns) ]] || return 0
	log "coredns $COREDNS_VERSION"
	local dir=$ROOT/src/coredns
	throwaway "$dir"
	(
		cd "$dir"
		# CoreDNS has no replace directives; the throwaway module only pins it.
		go get "github.com/coredns/coredns@$COREDNS_VERSION" >/dev/null 2>&1
		go build -trimpath -ldflags "-s -w -X github.com/coredns/coredns/coremain.GitCommit=$COREDNS_VERSION" \
			-o "$BIN/coredns.tmp" github.com/coredns/coredns
		mv "$BIN/coredns.tmp" "$BIN/coredns"
	)
}

build_crictl() {
	[[ -n $(missing crictl) ]] || return 0
	log "crictl $CRITOOLS_VERSION"
	local dir=$ROOT/src/crictl
	throwaway "$dir"
	(
		cd "$dir"
		go get "sigs.k8s.io/cri-tools/cmd/crictl@$CRITOOLS_VERSION" >/dev/null 2>&1
		go build -trimpath -ldflags "-s -w -X sigs.k8s.io/cri-tools/pkg/version.Version=$CRITOOLS_VERSION" \
			-o "$BIN/crictl.tmp" sigs.k8s.io/cri-tools/cmd/crictl
		mv "$BIN/crictl.tmp" "$BIN/crictl"
	)
}

build_metrics_server() {
	[[ -n $(missing metrics-server) ]] || return 0
	log "metrics-server $METRICS_SERVER_VERSION"
	local dir=$ROOT/src/metrics-server
	throwaway "$dir"
	(
		cd "$dir"
		# No replace directives; the throwaway module only pins it. The
		# version is stamped as its Makefile does (client-go's version
		# package), so `metrics-server --version` and its User-Agent say it.
		go get "sigs.k8s.io/metrics-server/cmd/metrics-server@$METRICS_SERVER_VERSION" >/dev/null 2>&1
		local v=k8s.io/client-go/pkg/version
		go build -trimpath -ldflags "-s -w -X $v.gitVersion=$METRICS_SERVER_VERSION -X $v.gitTreeState=clean" \
			-o "$BIN/metrics-server.tmp" sigs.k8s.io/metrics-server/cmd/metrics-server
		mv "$BIN/metrics-server.tmp" "$BIN/metrics-server"
	)
}

build_pause() {
	# Always rebuilt when the source is newer (it takes a second).
	if [[ -x $BIN/pause && $BIN/pause -nt $HERE/pause/main.go ]]; then
		return 0
	fi
	log "pause"
	(cd "$HERE/pause" && go build -trimpath -ldflags "-s -w" -o "$BIN/pause" .)
}

# build_conformance builds e2e.test and agnhost in a module of their own
# (the test packages need requirements the commands' module does not).
build_conformance() {
	# e2e.test.versioned marks an e2e.test built with version_ldflags
	# (earlier ones said v0.0).
	[[ -n $(missing e2e.test agnhost ginkgo) || ! -f $BIN/e2e.test.versioned ]] || return 0
	log "conformance $K8S_VERSION: e2e.test agnhost ginkgo"
	local dir=$ROOT/src/e2e
	throwaway "$dir"
	(
		cd "$dir"
		kubernetes_module
		go get "k8s.io/kubernetes/test/e2e/...@$K8S_VERSION" "k8s.io/kubernetes/test/images/agnhost/...@$K8S_VERSION" \
			"k8s.io/sample-apiserver@$STAGING_VERSION" >/dev/null 2>&1
		local start=$SECONDS
		if [[ ! -x $BIN/e2e.test || ! -f $BIN/e2e.test.versioned ]]; then
			go test -c -trimpath -ldflags "$(version_ldflags)" -o "$BIN/e2e.test.tmp" k8s.io/kubernetes/test/e2e
			mv "$BIN/e2e.test.tmp" "$BIN/e2e.test"
			touch "$BIN/e2e.test.versioned"
		fi
		if [[ ! -x $BIN/agnhost ]]; then
			go build -trimpath -ldflags "-s -w" -o "$BIN/agnhost.tmp" k8s.io/kubernetes/test/images/agnhost
			mv "$BIN/agnhost.tmp" "$BIN/agnhost"
		fi
		# The ginkgo CLI of the version e2e.test is built with, to run the
		# suite on several processes (conformance.sh PARALLEL=N).
		if [[ ! -x $BIN/ginkgo ]]; then
			go get github.com/onsi/ginkgo/v2/ginkgo >/dev/null 2>&1
			go build -trimpath -o "$BIN/ginkgo.tmp" github.com/onsi/ginkgo/v2/ginkgo
			mv "$BIN/ginkgo.tmp" "$BIN/ginkgo"
		fi
		log "  built in $((SECONDS - start))s"
	)
}

start=$SECONDS
if [[ ${1:-} == conformance ]]; then
	build_conformance
	log "done in $((SECONDS - start))s: $BIN"
	exit 0
fi
build_pause
build_etcd
build_coredns
build_crictl
build_metrics_server
build_kubernetes
log "done in $((SECONDS - start))s: $BIN"
