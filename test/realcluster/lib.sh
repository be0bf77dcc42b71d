# lib.sh: settings and helpers shared by up.sh, down.sh and load-image.sh.
# Sourced, not run.

K8S_VERSION=v1.37.2
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${LITEK8S_CACHE:-/var/cache/litek8s}
BIN=$CACHE/k8s-$K8S_VERSION/bin
IMAGES=$CACHE/k8s-$K8S_VERSION/images
STATE=${REALCLUSTER_DIR:-/var/lib/litek8s-realcluster}
STATE=${STATE%/}
# down.sh kills every process whose command line names $STATE and removes
# it: refuse anything that is not a dedicated directory.
case $STATE in
/ | /tmp | /var | /var/lib | /var/tmp | /root | /home | /run | /opt | /usr* | /etc* | /bin* | /sbin* | /lib* | /proc* | /sys* | /dev*)
	echo "REALCLUSTER_DIR=$STATE is not a dedicated directory" >&2
	exit 1
	;;
/*/*) ;;
*)
	echo "REALCLUSTER_DIR must be an absolute path of two or more components, not $STATE" >&2
	exit 1
	;;
esac

NODE_NAME=${REALCLUSTER_NODE_NAME:-litek8s-realnode}
# The node IP lives on a sink interface of our own (dummy, or ifb where the
# kernel has no dummy driver, like kube-proxy IPVS's kube-ipvs0), so no
# component ever talks to the machine's real address; the service CIDR is
# routed into the same interface, so a ClusterIP packet that kube-proxy did
# not DNAT is dropped there instead of leaving by the default route.
NODE_IP=10.245.0.1
POD_CIDR=10.244.0.0/24
POD_GATEWAY=10.244.0.1
# kube's default service range (kube-apiserver's and litek8s's).
SERVICE_CIDR=10.96.0.0/12
SERVICE_IP=10.96.0.1
DNS_IP=10.96.0.10
CLUSTER_DOMAIN=cluster.local
BRIDGE=litek8s-br0
DUMMY=litek8s-node0
CNI_NETWORK=litek8s-realcluster
FWD_CHAIN=LITEK8S-RC-FWD
CTR_NAMESPACE=k8s.io
CONTAINERD_SOCK=$STATE/containerd/containerd.sock

PAUSE_IMAGE=localhost/litek8s-realcluster/pause:3.10
COREDNS_IMAGE=localhost/litek8s-realcluster/coredns:v1.15.0
BUSYBOX_IMAGE=localhost/litek8s-realcluster/busybox:1
# kubernetes-sigs/metrics-server (for `kubectl top`), built by build.sh;
# up.sh imports the image, the chart installs it (README).
METRICS_SERVER_VERSION=v0.8.0
METRICS_SERVER_IMAGE=localhost/litek8s-realcluster/metrics-server:$METRICS_SERVER_VERSION

# Sysctls the harness or its components change; up.sh records them and
# down.sh restores them.
SYSCTLS=(
	kernel.panic kernel.panic_on_oops vm.overcommit_memory vm.panic_on_oom
	net.ipv4.ip_forward net.ipv4.conf.all.route_localnet
	net.bridge.bridge-nf-call-iptables net.bridge.bridge-nf-call-ip6tables
	net.netfilter.nf_conntrack_max net.netfilter.nf_conntrack_tcp_timeout_established
	net.netfilter.nf_conntrack_tcp_timeout_close_wait
	net.netfilter.nf_conntrack_tcp_be_liberal
)

# Components in start order; down.sh stops them in reverse. With
# `up.sh --litek8s`, three litek8s members (litek8s-0..2) replace etcd,
# kube-apiserver, kube-controller-manager and kube-scheduler.
COMPONENTS=(containerd etcd kube-apiserver kube-controller-manager kube-scheduler litek8s-0 litek8s-1 litek8s-2 kubelet kube-proxy provisioner)
# The auth-extra-groups kubeadm gives its node bootstrap tokens; the RBAC
# bindings up.sh makes (kubeadm's) name it.
BOOTSTRAP_GROUP=system:bootstrappers:kubeadm:default-node-token

# One cluster per machine: up.sh and down.sh hold this lock while they run,
# and the Go helper holds it for a whole test (and sets
# REALCLUSTER_LOCK_HELD=1 for the scripts it runs).
LOCK=/run/litek8s-realcluster.lock

log() { echo "$(date -u +%H:%M:%S) ${0##*/}: $*" >&2; }
die() {
	log "ERROR: $*"
	exit 1
}

kctl() { "$BIN/kubectl" --kubeconfig "$STATE/pki/admin.kubeconfig" "$@"; }
crictl() { "$BIN/crictl" --runtime-endpoint "unix://$CONTAINERD_SOCK" --image-endpoint "unix://$CONTAINERD_SOCK" --timeout 20s "$@"; }
ctr_() { ctr --address "$CONTAINERD_SOCK" -n "$CTR_NAMESPACE" "$@"; }

# start NAME COMMAND...: runs COMMAND in its own session with its output
# appended to logs/NAME.log and its pid in pids/NAME.pid, and records the
# command (shell-quoted) in cmds/NAME so component.sh can start it again.
# Every command line mentions $STATE, which is how down.sh recognises our
# processes.
start() {
	local name=$1
	shift
	mkdir -p "$STATE/cmds"
	printf '%q ' "$@" >"$STATE/cmds/$name"
	setsid "$@" >>"$STATE/logs/$name.log" 2>&1 </dev/null 8>&- &
	echo $! >"$STATE/pids/$name.pid"
}

# wait_for SECONDS DESCRIPTION COMMAND...: polls COMMAND every second.
wait_for() {
	local timeout=$1 what=$2
	shift 2
	local deadline=$((SECONDS + timeout))
	until "$@" >/dev/null 2>&1; do
		if ((SECONDS >= deadline)); then
			log "timed out after ${timeout}s waiting for $what"
			return 1
		fi
		sleep 1
	done
}

# ours PID: true if PID runs a command line that mentions $STATE (every
# process up.sh starts does), so a recycled pid is never killed.
ours() {
	local pid=$1
	[[ -r /proc/$pid/cmdline ]] && tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline" | grep -qF -- "$STATE"
}

# take_lock: waits (up to REALCLUSTER_LOCK_WAIT seconds, default 3600) for
# the machine's realcluster lock unless the caller holds it already. The
# lock is fd 8; start() closes it for the daemons.
take_lock() {
	[[ ${REALCLUSTER_LOCK_HELD:-} == 1 ]] && return 0
	exec 8>"$LOCK"
	if ! flock -n 8; then
		log "waiting for $LOCK (a test or another up.sh/down.sh holds it)"
		flock -w "${REALCLUSTER_LOCK_WAIT:-3600}" 8 || die "could not take $LOCK"
	fi
	export REALCLUSTER_LOCK_HELD=1
}

# build_image NAME TAG CONTEXTDIR: podman build + podman save into
# $IMAGES/NAME.tar unless it is newer than everything in CONTEXTDIR.
build_image() {
	local name=$1 tag=$2 ctx=$3 tar=$IMAGES/$1.tar
	if [[ -f $tar && -z $(find "$ctx" -mindepth 1 -newer "$tar" -print -quit) ]]; then
		return 0
	fi
	log "building image $tag"
	podman build -q -t "$tag" -f "$ctx/Containerfile" "$ctx" >/dev/null 8>&-
	rm -f "$tar.tmp"
	podman save -q --format docker-archive -o "$tar.tmp" "$tag"
	podman rmi -f "$tag" >/dev/null 2>&1 || true
	mv "$tar.tmp" "$tar"
}
