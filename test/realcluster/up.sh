#!/usr/bin/env bash
# up.sh starts a real one-machine Kubernetes v1.37.2 cluster on this host:
# containerd, etcd, kube-apiserver, kube-controller-manager, kube-scheduler,
# kubelet, kube-proxy (iptables), a local-volume provisioner behind the
# default StorageClass, and CoreDNS in kube-system behind kube-dns. Every
# image is built offline from FROM scratch Containerfiles; nothing is pulled.
# It waits until a test pod resolves a Service name through CoreDNS and
# reaches a ClusterIP, then prints "kubeconfig: <path>" as its last line.
#
# With --litek8s, three litek8s members built from this checkout (or the
# binary LITEK8S_NODE_BIN names) replace etcd, kube-apiserver,
# kube-controller-manager and kube-scheduler; up.sh then waits only until
# every member is ready and the node components run, and leaves the
# checks (node Ready, CoreDNS, pods) to TestRealNode.
#
# The kubelet joins by TLS bootstrap, as under kubeadm: a bootstrap token
# Secret in kube-system and kubeadm's RBAC bindings for it.
#
# With --litek8s and REALCLUSTER_SIMULATED_NODES=N (default 0), the members
# also run N simulated nodes (sim-node-0, ...) that register with the
# taints REALCLUSTER_SIMULATED_NODE_TAINTS (default
# litek8s.io/simulated=true:NoSchedule), so only pods that tolerate them
# run there (tests use one as the "elsewhere" of a drain or a node loss).
#
# Anything left from an earlier run with the same state dir is removed first
# (down.sh). See README.md for the environment, the ports and what down.sh
# cleans.
set -euo pipefail
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib.sh"
MODE=kube
for a in "$@"; do
	case $a in
	--litek8s) MODE=litek8s ;;
	*) die "usage: up.sh [--litek8s]" ;;
	esac
done
SIMULATED_NODES=${REALCLUSTER_SIMULATED_NODES:-0}

# The kubelet evicts every pod when its disk runs short (DiskPressure taint,
# pods "Evicted" or failing with no log): say so now rather than as a failed
# smoke pod later.
MIN_FREE_MIB=${REALCLUSTER_MIN_FREE_MIB:-2048}
# (The parent when $STATE does not exist yet: creating it here would make
# every up.sh think an earlier cluster left it.)
free_dir=$STATE
[[ -e $free_dir ]] || free_dir=${STATE%/*}
mkdir -p "$free_dir"
free_mib=$(df -Pm "$free_dir" | awk 'NR==2 {print $4}')
((free_mib >= MIN_FREE_MIB)) || die "only ${free_mib} MiB free on the file system of $STATE (need $MIN_FREE_MIB MiB):" \
	"free space first (the Go build cache, 'go clean -cache', is the usual culprit)"
SIMULATED_NODE_TAINTS=${REALCLUSTER_SIMULATED_NODE_TAINTS-litek8s.io/simulated=true:NoSchedule}
[[ $SIMULATED_NODES =~ ^[0-9]+$ ]] || die "REALCLUSTER_SIMULATED_NODES=$SIMULATED_NODES is not a number"
[[ $SIMULATED_NODES == 0 || $MODE == litek8s ]] || die "REALCLUSTER_SIMULATED_NODES needs --litek8s"
[[ $EUID -eq 0 ]] || die "must run as root"
take_lock
# Keep going if whoever reads our output goes away (e.g. `| head`).
trap '' PIPE

T0=$SECONDS
if [[ -e $STATE ]] || ip link show "$DUMMY" >/dev/null 2>&1 || ip link show "$BRIDGE" >/dev/null 2>&1; then
	log "an earlier cluster left $STATE or its interfaces: running down.sh first"
	"$HERE/down.sh"
fi

"$HERE/build.sh"
log "building rctool"
(cd "$HERE" && CGO_ENABLED=0 go build -o "$BIN/rctool" ./rctool)

install_packages() {
	local pkgs=(containerd runc containernetworking-plugins podman buildah busybox-static iptables conntrack ipset socat)
	local missing=() p
	for p in "${pkgs[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
	done
	if ((${#missing[@]})); then
		log "installing ${missing[*]}"
		DEBIAN_FRONTEND=noninteractive apt-get update -qq
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null
	fi
	# The Debian containerd unit must not grab /run/containerd/containerd.sock
	# for us; we run our own daemon and do not touch the system one.
}
install_packages

mkdir -p "$STATE"/{pids,logs,pki,cni/net.d,cni/ipam,containerd,etcd,kubelet,apiserver,volumes,manifests,pod-logs,bin,litek8s}
chmod 0755 "$STATE"
echo "$MODE" >"$STATE/mode"

# The litek8s member binary lives under $STATE, so down.sh knows its
# processes by their command line.
if [[ $MODE == litek8s ]]; then
	if [[ -n ${LITEK8S_NODE_BIN:-} ]]; then
		cp "$LITEK8S_NODE_BIN" "$STATE/bin/litek8s-node"
	else
		log "building litek8s node from $(cd "$HERE/../.." && pwd)"
		(cd "$HERE/../.." && go build -o "$STATE/bin/litek8s-node" ./cmd/node)
	fi
fi

# --- sysctls: record, then set what the data path needs ---------------------
[[ -e /proc/sys/net/bridge ]] || modprobe br_netfilter 2>/dev/null || true
for s in "${SYSCTLS[@]}"; do
	v=$(sysctl -n "$s" 2>/dev/null) || continue
	printf '%s=%s\n' "$s" "$v"
done >"$STATE/sysctl.saved"
sysctl -q -w net.ipv4.ip_forward=1 net.bridge.bridge-nf-call-iptables=1 >/dev/null

# --- network: a sink interface with the node IP and the service CIDR ---------
# A dummy device, or, on kernels built without CONFIG_DUMMY (this VM's), an
# ifb device: both are NOARP sinks that drop whatever is routed into them.
ip link add "$DUMMY" type dummy 2>/dev/null || ip link add "$DUMMY" type ifb
ip addr add "$NODE_IP/32" dev "$DUMMY"
ip link set "$DUMMY" up
ip route add "$SERVICE_CIDR" dev "$DUMMY"
# Nothing that enters from the pod bridge may be forwarded anywhere but back
# into the bridge (pods reach the node IP and each other; never the world).
# mangle runs before kube-proxy's filter rules, so none of them can undo this.
iptables -t mangle -N "$FWD_CHAIN"
iptables -t mangle -A "$FWD_CHAIN" -i "$BRIDGE" ! -o "$BRIDGE" -j DROP
iptables -t mangle -A "$FWD_CHAIN" -o "$DUMMY" -j DROP
iptables -t mangle -I FORWARD 1 -j "$FWD_CHAIN"

# --- ports, PKI, kubeconfig ------------------------------------------------
mapfile -t P < <("$BIN/rctool" ports 16)
APISERVER_PORT=${P[0]} ETCD_PORT=${P[1]} ETCD_PEER_PORT=${P[2]} KUBELET_PORT=${P[3]}
KUBELET_HEALTHZ_PORT=${P[4]} KCM_PORT=${P[5]} SCHEDULER_PORT=${P[6]}
PROXY_HEALTHZ_PORT=${P[7]} PROXY_METRICS_PORT=${P[8]} ETCD_METRICS_PORT=${P[9]}
# litek8s members: API ports (on the node IP) and Raft ports (loopback).
LITEK8S_PORTS=("${P[@]:10:3}") LITEK8S_RAFT_PORTS=("${P[@]:13:3}")
LITEK8S_URLS=
if [[ $MODE == litek8s ]]; then
	# Everything that takes one server URL talks to member 0; pods reach
	# all three through the kubernetes Service.
	APISERVER_PORT=${LITEK8S_PORTS[0]}
	for p in "${LITEK8S_PORTS[@]}"; do LITEK8S_URLS+=${LITEK8S_URLS:+,}https://$NODE_IP:$p; done
fi
# The apiserver (each member) listens on the node IP only (local, on the
# sink interface): reachable from the host and, through the kubernetes
# Service, from pods; not on the machine's own address.
APISERVER_URL=https://$NODE_IP:$APISERVER_PORT
PKI=$STATE/pki
"$BIN/rctool" pki -dir "$PKI" -node-name "$NODE_NAME" -node-ip "$NODE_IP" \
	-service-ip "$SERVICE_IP" -server "$APISERVER_URL"
cp "$PKI/admin.kubeconfig" "$STATE/kubeconfig"
# An admin kubeconfig per litek8s member: litek8s/m<i>.kubeconfig.
if [[ $MODE == litek8s ]]; then
	for i in 0 1 2; do
		cp "$PKI/admin.kubeconfig" "$STATE/litek8s/m$i.kubeconfig"
		"$BIN/kubectl" --kubeconfig "$STATE/litek8s/m$i.kubeconfig" config set-cluster realcluster \
			--server "https://$NODE_IP:${LITEK8S_PORTS[i]}" >/dev/null
	done
fi

# TLS bootstrap, as kubeadm sets it up: a bootstrap token <id>.<secret>
# (its Secret is created once the API answers) and a kubeconfig that
# carries it; the kubelet asks for its client certificate with a CSR and
# writes kubelet/kubeconfig.
h=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
BOOTSTRAP_TOKEN_ID=${h:0:6} BOOTSTRAP_TOKEN_SECRET=${h:6:16}
BOOTSTRAP_KUBECONFIG=$STATE/kubelet/bootstrap.kubeconfig
"$BIN/kubectl" --kubeconfig "$BOOTSTRAP_KUBECONFIG" config set-cluster realcluster \
	--server "$APISERVER_URL" --certificate-authority "$PKI/ca.crt" --embed-certs >/dev/null
"$BIN/kubectl" --kubeconfig "$BOOTSTRAP_KUBECONFIG" config set-credentials tls-bootstrap-token-user \
	--token "$BOOTSTRAP_TOKEN_ID.$BOOTSTRAP_TOKEN_SECRET" >/dev/null
"$BIN/kubectl" --kubeconfig "$BOOTSTRAP_KUBECONFIG" config set-context tls-bootstrap-token-user@realcluster \
	--cluster realcluster --user tls-bootstrap-token-user >/dev/null
"$BIN/kubectl" --kubeconfig "$BOOTSTRAP_KUBECONFIG" config use-context tls-bootstrap-token-user@realcluster >/dev/null
chmod 0600 "$BOOTSTRAP_KUBECONFIG"

# --- configs -----------------------------------------------------------------
# Pods with dnsPolicy Default (CoreDNS) get this resolv.conf: the bridge
# gateway, where nothing answers port 53, so CoreDNS's forward plugin fails
# fast and no DNS query ever leaves the machine.
echo "nameserver $POD_GATEWAY" >"$STATE/resolv.conf"

cat >"$STATE/cni/net.d/10-$CNI_NETWORK.conflist" <<JSON
{
  "cniVersion": "1.0.0",
  "name": "$CNI_NETWORK",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$BRIDGE",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": "$STATE/cni/ipam",
        "ranges": [[{"subnet": "$POD_CIDR", "gateway": "$POD_GATEWAY"}]],
        "routes": [{"dst": "0.0.0.0/0"}]
      }
    },
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
JSON

C=$STATE/containerd
cat >"$C/config.toml" <<TOML
version = 2
root = "$C/root"
state = "$C/state"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs"]

[grpc]
  address = "$CONTAINERD_SOCK"

[debug]
  level = "warn"

[plugins."io.containerd.internal.v1.opt"]
  path = "$C/opt"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  enable_unprivileged_ports = true
  enable_unprivileged_icmp = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "$C/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$STATE/cni/net.d"
    max_conf_num = 1
TOML

cat >"$STATE/kubelet/config.yaml" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $NODE_IP
port: $KUBELET_PORT
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $KUBELET_HEALTHZ_PORT
tlsCertFile: $PKI/kubelet.crt
tlsPrivateKeyFile: $PKI/kubelet.key
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $PKI/ca.crt}
authorization:
  mode: Webhook
cgroupDriver: cgroupfs
failSwapOn: false
failCgroupV1: false
containerRuntimeEndpoint: unix://$CONTAINERD_SOCK
imageServiceEndpoint: unix://$CONTAINERD_SOCK
clusterDNS: [$DNS_IP]
clusterDomain: $CLUSTER_DOMAIN
resolvConf: $STATE/resolv.conf
maxPods: 200
podLogsDir: $STATE/pod-logs
volumePluginDir: $STATE/kubelet/volume-plugins
rotateCertificates: true
serverTLSBootstrap: false
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
# Absolute thresholds: a percentage of a large, nearly full shared disk
# (CI machines) evicts every pod although gigabytes are free; up.sh checks
# for MIN_FREE_MIB itself before it starts anything.
evictionHard:
  memory.available: 100Mi
  nodefs.available: 256Mi
  nodefs.inodesFree: 1%
  imagefs.available: 256Mi
YAML

cat >"$STATE/kube-proxy.yaml" <<YAML
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection:
  kubeconfig: $PKI/kube-proxy.kubeconfig
mode: iptables
hostnameOverride: $NODE_NAME
bindAddress: $NODE_IP
clusterCIDR: $POD_CIDR
detectLocalMode: ClusterCIDR
healthzBindAddress: 127.0.0.1:$PROXY_HEALTHZ_PORT
metricsBindAddress: 127.0.0.1:$PROXY_METRICS_PORT
nodePortAddresses: ["$NODE_IP/32"]
iptables:
  localhostNodePorts: false
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
YAML

# alive NAME: the component is still running (else its log is shown).
alive() {
	local pid
	pid=$(cat "$STATE/pids/$1.pid")
	if ! kill -0 "$pid" 2>/dev/null; then
		log "$1 exited; last lines of $STATE/logs/$1.log:"
		tail -n 30 "$STATE/logs/$1.log" >&2
		return 1
	fi
}

# --- containerd, etcd, apiserver ---------------------------------------------
for p in /var/lib/kubelet /var/log/containers /var/log/pods /run/containerd; do
	[[ -e $p ]] || echo "$p"
done >"$STATE/created-paths"
touch "$STATE/started"
# Nothing is ever pulled: containerd's registry client goes through a proxy
# at 127.0.0.1:1, where nothing listens, so a pod whose image is not loaded
# fails with ErrImagePull at once instead of reaching (or even resolving) a
# registry.
start containerd env HTTP_PROXY=http://127.0.0.1:1 HTTPS_PROXY=http://127.0.0.1:1 \
	http_proxy=http://127.0.0.1:1 https_proxy=http://127.0.0.1:1 NO_PROXY= no_proxy= \
	containerd --config "$C/config.toml"
if [[ $MODE == kube ]]; then
start etcd "$BIN/etcd" --name realcluster --data-dir "$STATE/etcd" \
	--listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
	--listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
	--initial-cluster "realcluster=http://127.0.0.1:$ETCD_PEER_PORT" \
	--listen-metrics-urls "http://127.0.0.1:$ETCD_METRICS_PORT" --unsafe-no-fsync --log-level warn
start kube-apiserver "$BIN/kube-apiserver" \
	--advertise-address "$NODE_IP" --bind-address "$NODE_IP" --secure-port "$APISERVER_PORT" \
	--cert-dir "$STATE/apiserver" \
	--etcd-servers "http://127.0.0.1:$ETCD_PORT" \
	--service-cluster-ip-range "$SERVICE_CIDR" \
	--client-ca-file "$PKI/ca.crt" --tls-cert-file "$PKI/apiserver.crt" --tls-private-key-file "$PKI/apiserver.key" \
	--kubelet-client-certificate "$PKI/apiserver-kubelet-client.crt" --kubelet-client-key "$PKI/apiserver-kubelet-client.key" \
	--kubelet-preferred-address-types InternalIP --kubelet-certificate-authority "$PKI/ca.crt" \
	--service-account-issuer "https://kubernetes.default.svc.$CLUSTER_DOMAIN" \
	--service-account-key-file "$PKI/sa.pub" --service-account-signing-key-file "$PKI/sa.key" \
	--authorization-mode Node,RBAC --enable-admission-plugins NodeRestriction \
	--requestheader-client-ca-file "$PKI/ca.crt" --requestheader-allowed-names front-proxy-client \
	--requestheader-username-headers X-Remote-User --requestheader-group-headers X-Remote-Group \
	--requestheader-extra-headers-prefix X-Remote-Extra- \
	--proxy-client-cert-file "$PKI/front-proxy-client.crt" --proxy-client-key-file "$PKI/front-proxy-client.key" \
	--enable-bootstrap-token-auth \
	--allow-privileged=true --profiling=false
else
	# Three members formed with --bootstrap-expect (as a StatefulSet does),
	# on the harness CA so every certificate the harness made is valid
	# there; the serving certificate also names the kubernetes Service.
	JOIN_TOKEN=$(od -An -N24 -tx1 /dev/urandom | tr -d ' \n')
	SIM_FLAGS=()
	((SIMULATED_NODES == 0)) ||
		SIM_FLAGS=(--simulated-nodes "$SIMULATED_NODES" --simulated-node-taints "$SIMULATED_NODE_TAINTS")
	for i in 0 1 2; do
		peers=
		for j in 0 1 2; do
			((j == i)) || peers+=${peers:+,}https://$NODE_IP:${LITEK8S_PORTS[j]}
		done
		start "litek8s-$i" "$STATE/bin/litek8s-node" --id "m$i" --data-dir "$STATE/litek8s/m$i" \
			--api-addr "$NODE_IP:${LITEK8S_PORTS[i]}" --raft-addr "127.0.0.1:${LITEK8S_RAFT_PORTS[i]}" \
			--bootstrap-expect 3 --peers "$peers" --join-token "$JOIN_TOKEN" \
			--ca-cert-file "$PKI/ca.crt" --ca-key-file "$PKI/ca.key" \
			--hostname "$SERVICE_IP,kubernetes,kubernetes.default,kubernetes.default.svc,kubernetes.default.svc.$CLUSTER_DOMAIN" \
			"${SIM_FLAGS[@]}"
	done
fi

wait_for 30 "containerd" ctr --address "$CONTAINERD_SOCK" version || { alive containerd; exit 1; }

# --- images (built once into $IMAGES, imported every run) ----------------------
mkdir -p "$IMAGES/pause" "$IMAGES/coredns" "$IMAGES/busybox/bin" "$IMAGES/metrics-server"
cp -p "$BIN/pause" "$IMAGES/pause/pause"
printf 'FROM scratch\nCOPY pause /pause\nUSER 65535:65535\nENTRYPOINT ["/pause"]\n' >"$IMAGES/pause/Containerfile.new"
cp -p "$BIN/coredns" "$IMAGES/coredns/coredns"
printf 'FROM scratch\nCOPY coredns /coredns\nEXPOSE 53 53/udp\nENTRYPOINT ["/coredns"]\n' >"$IMAGES/coredns/Containerfile.new"
# busybox: the static binary and one symlink per applet, made here because
# RUN steps cannot run on this host.
if [[ ! -x $IMAGES/busybox/bin/busybox || /bin/busybox -nt $IMAGES/busybox/bin/busybox ]]; then
	cp -p /bin/busybox "$IMAGES/busybox/bin/busybox"
	for a in $(/bin/busybox --list); do
		[[ $a == busybox ]] || ln -sf busybox "$IMAGES/busybox/bin/$a"
	done
fi
printf 'FROM scratch\nCOPY bin /bin\nENV PATH=/bin\nCMD ["sh"]\n' >"$IMAGES/busybox/Containerfile.new"
# metrics-server as its own image has it: the static binary, non-root.
cp -p "$BIN/metrics-server" "$IMAGES/metrics-server/metrics-server"
printf 'FROM scratch\nCOPY metrics-server /metrics-server\nUSER 65534:65534\nENTRYPOINT ["/metrics-server"]\n' \
	>"$IMAGES/metrics-server/Containerfile.new"
for d in pause coredns busybox metrics-server; do
	# Keep the Containerfile's mtime unless it changed, so the tar stays cached.
	if cmp -s "$IMAGES/$d/Containerfile.new" "$IMAGES/$d/Containerfile"; then
		rm "$IMAGES/$d/Containerfile.new"
	else
		mv "$IMAGES/$d/Containerfile.new" "$IMAGES/$d/Containerfile"
	fi
done
build_image pause "$PAUSE_IMAGE" "$IMAGES/pause"
build_image coredns "$COREDNS_IMAGE" "$IMAGES/coredns"
build_image busybox "$BUSYBOX_IMAGE" "$IMAGES/busybox"
build_image metrics-server "$METRICS_SERVER_IMAGE" "$IMAGES/metrics-server"
for d in pause coredns busybox metrics-server; do
	ctr_ images import "$IMAGES/$d.tar" >/dev/null
done
log "images imported"

# --- the rest of the control plane and the node --------------------------------
if [[ $MODE == kube ]]; then
wait_for 90 "kube-apiserver /readyz" kctl get --raw /readyz || { alive etcd; alive kube-apiserver; exit 1; }
log "kube-apiserver ready"
start kube-controller-manager "$BIN/kube-controller-manager" \
	--kubeconfig "$PKI/controller-manager.kubeconfig" \
	--authentication-kubeconfig "$PKI/controller-manager.kubeconfig" \
	--authorization-kubeconfig "$PKI/controller-manager.kubeconfig" \
	--bind-address 127.0.0.1 --secure-port "$KCM_PORT" --leader-elect=false \
	--service-account-private-key-file "$PKI/sa.key" --root-ca-file "$PKI/ca.crt" \
	--use-service-account-credentials=true \
	--cluster-signing-cert-file "$PKI/ca.crt" --cluster-signing-key-file "$PKI/ca.key" \
	--allocate-node-cidrs=true --cluster-cidr "$POD_CIDR" --node-cidr-mask-size 24 \
	--service-cluster-ip-range "$SERVICE_CIDR" --cluster-name realcluster \
	--controllers '*,bootstrapsigner,tokencleaner' --profiling=false
start kube-scheduler "$BIN/kube-scheduler" \
	--kubeconfig "$PKI/scheduler.kubeconfig" \
	--authentication-kubeconfig "$PKI/scheduler.kubeconfig" \
	--authorization-kubeconfig "$PKI/scheduler.kubeconfig" \
	--bind-address 127.0.0.1 --secure-port "$SCHEDULER_PORT" --leader-elect=false --profiling=false
else
	for i in 0 1 2; do
		wait_for 90 "litek8s member $i /readyz" kctl --server "https://$NODE_IP:${LITEK8S_PORTS[i]}" get --raw /readyz ||
			{ alive litek8s-0; alive litek8s-1; alive litek8s-2; exit 1; }
	done
	log "litek8s members ready: $LITEK8S_URLS"
fi

# What kubeadm creates for the kubelet's TLS bootstrap (kube-apiserver's
# default RBAC policy has the roles): the token's Secret, who may ask for a
# node client certificate and whose requests are approved at once.
expiration=$(date -u -d '+1 day' +%Y-%m-%dT%H:%M:%SZ)
cat >"$STATE/manifests/bootstrap.yaml" <<YAML
apiVersion: v1
kind: Secret
metadata:
  name: bootstrap-token-$BOOTSTRAP_TOKEN_ID
  namespace: kube-system
type: bootstrap.kubernetes.io/token
stringData:
  description: realcluster kubelet TLS bootstrap
  token-id: "$BOOTSTRAP_TOKEN_ID"
  token-secret: "$BOOTSTRAP_TOKEN_SECRET"
  expiration: "$expiration"
  usage-bootstrap-authentication: "true"
  usage-bootstrap-signing: "true"
  auth-extra-groups: $BOOTSTRAP_GROUP
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "kubeadm:kubelet-bootstrap"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "system:node-bootstrapper"}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: Group, name: "$BOOTSTRAP_GROUP"}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: "kubeadm:get-nodes"}
rules: [{apiGroups: [""], resources: [nodes], verbs: [get]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "kubeadm:get-nodes"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "kubeadm:get-nodes"}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: Group, name: "$BOOTSTRAP_GROUP"}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "kubeadm:node-autoapprove-bootstrap"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "system:certificates.k8s.io:certificatesigningrequests:nodeclient"}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: Group, name: "$BOOTSTRAP_GROUP"}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "kubeadm:node-autoapprove-certificate-rotation"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "system:certificates.k8s.io:certificatesigningrequests:selfnodeclient"}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: Group, name: "system:nodes"}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "kubeadm:apiserver-kubelet-client"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "system:kubelet-api-admin"}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: kube-apiserver-kubelet-client}]
YAML
wait_for 30 "the bootstrap token and its RBAC" kctl apply -f "$STATE/manifests/bootstrap.yaml" ||
	kctl apply -f "$STATE/manifests/bootstrap.yaml" >&2 || exit 1

start kubelet "$BIN/kubelet" --config "$STATE/kubelet/config.yaml" \
	--bootstrap-kubeconfig "$BOOTSTRAP_KUBECONFIG" --kubeconfig "$STATE/kubelet/kubeconfig" \
	--root-dir "$STATE/kubelet" --cert-dir "$STATE/kubelet/pki" \
	--hostname-override "$NODE_NAME" --node-ip "$NODE_IP"
# kube-proxy once the Node exists, as a DaemonSet pod would: started before,
# it gives up waiting for the Node after 30 s and runs without node IPs,
# then exits when they appear ("NodeIPs changed"), with nobody to restart
# it. litek8s mode starts it anyway when the node does not register (the
# test says why).
if ! wait_for 90 "node $NODE_NAME to register" kctl get node "$NODE_NAME"; then
	alive kubelet || true
	[[ $MODE == litek8s ]] || exit 1
	log "starting kube-proxy without a Node"
fi
start kube-proxy "$BIN/kube-proxy" --config "$STATE/kube-proxy.yaml"
start provisioner "$BIN/rctool" provisioner -kubeconfig "$PKI/admin.kubeconfig" \
	-dir "$STATE/volumes" -node "$NODE_NAME"

# --- cluster add-ons: default StorageClass and CoreDNS --------------------------
cat >"$STATE/manifests/storageclass.yaml" <<YAML
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: realcluster-local
  annotations:
    storageclass.kubernetes.io/is-default-class: "true"
provisioner: realcluster.litek8s.io/local
reclaimPolicy: Delete
volumeBindingMode: Immediate
YAML
# CoreDNS as kubeadm deploys it (RBAC, Corefile, Deployment, kube-dns
# Service), with one replica and the offline image.
cat >"$STATE/manifests/coredns.yaml" <<YAML
apiVersion: v1
kind: ServiceAccount
metadata:
  name: coredns
  namespace: kube-system
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: system:coredns
rules:
- apiGroups: [""]
  resources: [endpoints, services, pods, namespaces]
  verbs: [list, watch]
- apiGroups: [discovery.k8s.io]
  resources: [endpointslices]
  verbs: [list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: system:coredns
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: system:coredns
subjects:
- kind: ServiceAccount
  name: coredns
  namespace: kube-system
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: coredns
  namespace: kube-system
data:
  Corefile: |
    .:53 {
        errors
        health {
           lameduck 5s
        }
        ready
        kubernetes $CLUSTER_DOMAIN in-addr.arpa ip6.arpa {
           pods insecure
           fallthrough in-addr.arpa ip6.arpa
           ttl 30
        }
        prometheus :9153
        forward . /etc/resolv.conf {
           max_concurrent 1000
        }
        cache 30 {
           disable success $CLUSTER_DOMAIN
           disable denial $CLUSTER_DOMAIN
        }
        loop
        reload
        loadbalance
    }
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: coredns
  namespace: kube-system
  labels: {k8s-app: kube-dns}
spec:
  replicas: 1
  strategy:
    type: RollingUpdate
    rollingUpdate: {maxUnavailable: 1}
  selector:
    matchLabels: {k8s-app: kube-dns}
  template:
    metadata:
      labels: {k8s-app: kube-dns}
    spec:
      priorityClassName: system-cluster-critical
      serviceAccountName: coredns
      tolerations:
      - key: CriticalAddonsOnly
        operator: Exists
      - key: node-role.kubernetes.io/control-plane
        effect: NoSchedule
      nodeSelector:
        kubernetes.io/os: linux
      containers:
      - name: coredns
        image: $COREDNS_IMAGE
        imagePullPolicy: Never
        args: ["-conf", "/etc/coredns/Corefile"]
        resources:
          limits: {memory: 170Mi}
          requests: {cpu: 100m, memory: 70Mi}
        volumeMounts:
        - name: config-volume
          mountPath: /etc/coredns
          readOnly: true
        ports:
        - {containerPort: 53, name: dns, protocol: UDP}
        - {containerPort: 53, name: dns-tcp, protocol: TCP}
        - {containerPort: 9153, name: metrics, protocol: TCP}
        livenessProbe:
          httpGet: {path: /health, port: 8080, scheme: HTTP}
          initialDelaySeconds: 60
          timeoutSeconds: 5
          successThreshold: 1
          failureThreshold: 5
        readinessProbe:
          httpGet: {path: /ready, port: 8181, scheme: HTTP}
          periodSeconds: 2
        securityContext:
          allowPrivilegeEscalation: false
          capabilities:
            add: [NET_BIND_SERVICE]
            drop: [ALL]
          readOnlyRootFilesystem: true
      dnsPolicy: Default
      volumes:
      - name: config-volume
        configMap:
          name: coredns
          items:
          - {key: Corefile, path: Corefile}
---
apiVersion: v1
kind: Service
metadata:
  name: kube-dns
  namespace: kube-system
  labels:
    k8s-app: kube-dns
    kubernetes.io/cluster-service: "true"
    kubernetes.io/name: CoreDNS
  annotations:
    prometheus.io/port: "9153"
    prometheus.io/scrape: "true"
spec:
  selector: {k8s-app: kube-dns}
  clusterIP: $DNS_IP
  ports:
  - {name: dns, port: 53, protocol: UDP}
  - {name: dns-tcp, port: 53, protocol: TCP}
  - {name: metrics, port: 9153, protocol: TCP}
YAML
kctl apply -f "$STATE/manifests/storageclass.yaml" -f "$STATE/manifests/coredns.yaml" >/dev/null

# --- env -----------------------------------------------------------------------
{
	for k in REALCLUSTER_DIR KUBECONFIG CONTAINERD_ADDRESS CONTAINERD_SOCKET CONTAINERD_NAMESPACE \
		REALCLUSTER_BIN NODE_NAME NODE_IP POD_CIDR SERVICE_CIDR DNS_IP CLUSTER_DOMAIN STORAGE_CLASS \
		APISERVER_URL APISERVER_PORT ETCD_PORT ETCD_PEER_PORT ETCD_METRICS_PORT KUBELET_PORT \
		KUBELET_HEALTHZ_PORT KCM_PORT SCHEDULER_PORT PROXY_HEALTHZ_PORT PROXY_METRICS_PORT \
		PAUSE_IMAGE COREDNS_IMAGE BUSYBOX_IMAGE METRICS_SERVER_IMAGE MODE LITEK8S_URLS LITEK8S_PORTS LITEK8S_RAFT_PORTS \
		BOOTSTRAP_TOKEN_ID SIMULATED_NODES SIMULATED_NODE_TAINTS; do
		case $k in
		LITEK8S_PORTS | LITEK8S_RAFT_PORTS)
			v=
			[[ $MODE == litek8s ]] && v=$(k=$k[*] && IFS=, && echo "${!k}")
			;;
		REALCLUSTER_DIR) v=$STATE ;;
		KUBECONFIG) v=$STATE/kubeconfig ;;
		CONTAINERD_ADDRESS | CONTAINERD_SOCKET) v=$CONTAINERD_SOCK ;;
		CONTAINERD_NAMESPACE) v=$CTR_NAMESPACE ;;
		REALCLUSTER_BIN) v=$BIN ;;
		STORAGE_CLASS) v=realcluster-local ;;
		*) v=${!k} ;;
		esac
		printf 'export %s=%q\n' "$k" "$v"
	done
} >"$STATE/env.tmp"

if [[ $MODE == litek8s ]]; then
	# TestRealNode checks the rest: what litek8s does not serve yet makes
	# the kubelet exit after minutes, which a test reports better.
	sleep 2
	alive kubelet && alive kube-proxy || exit 1
	mv "$STATE/env.tmp" "$STATE/env"
	log "up (litek8s) in $((SECONDS - T0))s"
	echo "kubeconfig: $STATE/kubeconfig"
	exit 0
fi

# --- wait: node Ready, CoreDNS Ready, smoke pod ------------------------------------
wait_for 90 "node $NODE_NAME to register" kctl get node "$NODE_NAME" || { alive kubelet; exit 1; }
kctl wait --for=condition=Ready "node/$NODE_NAME" --timeout=90s >/dev/null || { alive kubelet; exit 1; }
log "node $NODE_NAME Ready"
wait_for 60 "default service account" kctl -n default get serviceaccount default
kctl -n kube-system rollout status deployment/coredns --timeout=120s >/dev/null ||
	{ kctl -n kube-system get pods -o wide >&2; exit 1; }
log "CoreDNS Ready"

cat >"$STATE/manifests/smoke.yaml" <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: realcluster-smoke
  namespace: default
spec:
  restartPolicy: Never
  terminationGracePeriodSeconds: 0
  containers:
  - name: smoke
    image: $BUSYBOX_IMAGE
    imagePullPolicy: Never
    command:
    - sh
    - -c
    - |
      set -e
      nslookup kubernetes.default.svc.$CLUSTER_DOMAIN
      # (busybox 1.35's wget -T segfaults: use timeout instead)
      timeout 10 wget -q -O /dev/null http://kube-dns.kube-system.svc.$CLUSTER_DOMAIN:9153/metrics
      echo smoke-ok
YAML
wait_for 30 "the smoke pod to be created" kctl apply -f "$STATE/manifests/smoke.yaml"
smoke_done() {
	local phase
	phase=$(kctl get pod realcluster-smoke -o 'jsonpath={.status.phase}')
	[[ $phase == Succeeded || $phase == Failed ]]
}
wait_for 90 "the smoke pod to finish" smoke_done || true
if [[ $(kctl get pod realcluster-smoke -o 'jsonpath={.status.phase}') != Succeeded ]]; then
	kctl get pod realcluster-smoke -o wide >&2 || true
	kctl logs realcluster-smoke >&2 || true
	kctl describe pod realcluster-smoke | sed -n '/^Status:/p;/^Reason:/p;/^Message:/p;/^Events:/,$p' >&2 || true
	kctl get node "$NODE_NAME" -o 'jsonpath={range .status.conditions[*]}{.type}={.status} {.message}{"\n"}{end}' >&2 || true
	df -h "$STATE" >&2 || true
	die "smoke pod did not succeed"
fi
kctl logs realcluster-smoke | grep -q smoke-ok || die "smoke pod printed no smoke-ok"
kctl delete pod realcluster-smoke --wait=true >/dev/null
log "smoke pod resolved kubernetes.default.svc.$CLUSTER_DOMAIN and reached kube-dns's ClusterIP"

mv "$STATE/env.tmp" "$STATE/env"
log "up in $((SECONDS - T0))s"
echo "kubeconfig: $STATE/kubeconfig"
