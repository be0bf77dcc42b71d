#!/usr/bin/env bash
# down.sh removes everything up.sh made: processes (by pid file, then any
# left-over containerd shim or pod process of our containerd), pod sandboxes,
# iptables chains (kube-proxy --cleanup, then every KUBE-* chain, the CNI
# chains of our network and our own), the bridge, the dummy interface and
# veths, every mount under the state dir, the kubepods cgroups, the sysctls
# up.sh recorded, and the state dir. The build cache is kept.
# It never stops at the first error: every step runs.
set -uo pipefail
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib.sh"
[[ $EUID -eq 0 ]] || die "must run as root"
take_lock
# Keep going if whoever reads our output goes away (e.g. `| head`).
trap '' PIPE
T0=$SECONDS

# stop GRACE NAME...: SIGTERM the components from their pid files, all at
# once, and SIGKILL whatever still runs after GRACE seconds.
stop() {
	local grace=$1 name pid pids=() i
	shift
	for name in "$@"; do
		[[ -f $STATE/pids/$name.pid ]] || continue
		pid=$(cat "$STATE/pids/$name.pid")
		if ours "$pid"; then
			kill -TERM "$pid" 2>/dev/null && pids+=("$pid")
		fi
		rm -f "$STATE/pids/$name.pid"
	done
	for ((i = 0; i < grace * 10; i++)); do
		local left=()
		for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && left+=("$pid"); done
		pids=("${left[@]}")
		((${#pids[@]})) || return 0
		sleep 0.1
	done
	for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null; done
	sleep 0.2
}

# pids_matching STRING: pids whose command line contains STRING.
pids_matching() {
	local d
	for d in /proc/[0-9]*; do
		[[ ${d#/proc/} == "$$" ]] && continue
		tr '\0' ' ' 2>/dev/null <"$d/cmdline" | grep -qF -- "$1" && echo "${d#/proc/}"
	done
}

# kubepods_pids: every process in a kubepods cgroup (containers and pause).
kubepods_pids() {
	cat /sys/fs/cgroup/*/kubepods/cgroup.procs /sys/fs/cgroup/*/kubepods/**/cgroup.procs 2>/dev/null | sort -u
}

shopt -s globstar nullglob

log "step 1 ($((SECONDS - T0))s)"
# 1. Controllers first so nothing recreates pods, then the kubelet.
stop 10 provisioner kube-controller-manager kube-scheduler kubelet

log "step 2 ($((SECONDS - T0))s)"
# 2. Pod sandboxes, through CRI while containerd runs: this tears down their
#    CNI networking (veths, IPs, portmap rules) and netns mounts properly.
if [[ -S $CONTAINERD_SOCK && -x $BIN/crictl ]] && [[ -f $STATE/pids/containerd.pid ]] &&
	ours "$(cat "$STATE/pids/containerd.pid")"; then
	timeout 60 "$BIN/crictl" --runtime-endpoint "unix://$CONTAINERD_SOCK" --timeout 30s rmp --all --force >/dev/null 2>&1 ||
		log "crictl rmp failed; continuing"
fi

log "step 3 ($((SECONDS - T0))s)"
# 3. kube-proxy and its rules.
stop 5 kube-proxy
if [[ -x $BIN/kube-proxy ]]; then
	"$BIN/kube-proxy" --cleanup >/dev/null 2>&1 || true
fi

log "step 4 ($((SECONDS - T0))s)"
# 4. containerd, its shims and anything still in a kubepods cgroup.
stop 10 containerd
for pid in $(pids_matching "$CONTAINERD_SOCK"); do kill -KILL "$pid" 2>/dev/null; done
for pid in $(kubepods_pids); do kill -KILL "$pid" 2>/dev/null; done

log "step 5 ($((SECONDS - T0))s)"
# 5. The control plane (kube-apiserver and etcd, or the litek8s members).
stop 3 kube-apiserver etcd litek8s-0 litek8s-1 litek8s-2 # everything is deleted: no need for a graceful drain

log "step 6 ($((SECONDS - T0))s)"
# 6. Anything else whose command line names our state dir.
if [[ -d $STATE ]]; then
	for pid in $(pids_matching "$STATE"); do kill -KILL "$pid" 2>/dev/null; done
fi
sleep 0.3

log "step 7 ($((SECONDS - T0))s)"
# 7. Mounts under the state dir, deepest first (rootfs overlays, shm, netns
#    bind mounts, kubelet volume mounts).
for ((round = 0; round < 5; round++)); do
	mapfile -t mounts < <(awk -v s="$STATE/" 'index($5, s) == 1 || $5 == substr(s, 1, length(s) - 1) {print $5}' /proc/self/mountinfo | sort -r)
	((${#mounts[@]})) || break
	for m in "${mounts[@]}"; do
		m=$(printf '%b' "$m") # mountinfo escapes spaces as \040
		umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
	done
done

log "step 8 ($((SECONDS - T0))s)"
# 8. Links: veths on our bridge, the bridge, the dummy interface.
for v in $(ip -o link show master "$BRIDGE" 2>/dev/null | awk -F': ' '{print $2}' | cut -d@ -f1); do
	ip link del "$v" 2>/dev/null
done
ip link del "$BRIDGE" 2>/dev/null
ip link del "$DUMMY" 2>/dev/null

log "step 9 ($((SECONDS - T0))s)"
# 9. iptables: for each family and table, delete every rule that jumps to a
#    chain of ours, then flush and delete those chains. Ours: KUBE-*, our
#    forward guard, CNI chains whose rules name our CNI network, and shared
#    CNI-HOSTPORT-* chains once nothing is left in them.
clean_table() {
	local ipt=$1 t=$2 rules chains=() line c
	rules=$($ipt -w -t "$t" -S 2>/dev/null) || return 0
	for ((round = 0; round < 4; round++)); do
		chains=()
		while read -r c; do chains+=("$c"); done < <(
			awk '$1 == "-N" && ($2 ~ /^KUBE-/ || $2 == "'"$FWD_CHAIN"'") {print $2}' <<<"$rules"
			grep -F "\"$CNI_NETWORK\"" <<<"$rules" | awk '{
				if ($2 ~ /^CNI-/ && $2 !~ /^CNI-HOSTPORT-/) print $2
				for (i = 1; i < NF; i++) if ($i == "-j" && $(i+1) ~ /^CNI-/ && $(i+1) !~ /^CNI-HOSTPORT-/) print $(i+1)
			}'
			for c in $(awk '$1 == "-N" && $2 ~ /^CNI-HOSTPORT-/ {print $2}' <<<"$rules"); do
				grep -q -- "^-A $c " <<<"$rules" || echo "$c"
			done
		)
		mapfile -t chains < <(printf '%s\n' "${chains[@]}" | grep . | sort -u)
		((${#chains[@]})) || return 0
		# Rules (in any chain) that jump to one of them.
		while read -r line; do
			local target=${line##* -j }
			target=${target%% *}
			printf '%s\n' "${chains[@]}" | grep -qxF -- "$target" || continue
			eval "local args=($line)"
			$ipt -w -t "$t" -D "${args[@]:1}" 2>/dev/null
		done < <(grep -- '^-A .* -j ' <<<"$rules")
		for c in "${chains[@]}"; do $ipt -w -t "$t" -F "$c" 2>/dev/null; done
		for c in "${chains[@]}"; do $ipt -w -t "$t" -X "$c" 2>/dev/null; done
		rules=$($ipt -w -t "$t" -S 2>/dev/null)
	done
}
for ipt in iptables ip6tables; do
	for t in mangle nat filter raw; do clean_table "$ipt" "$t"; done
done

log "step 10 ($((SECONDS - T0))s)"
# 10. Cgroups the kubelet made (cgroupfs driver): /kubepods/... in every
#     hierarchy, deepest first.
for root in /sys/fs/cgroup/*/kubepods; do
	for pid in $(cat "$root"/**/cgroup.procs 2>/dev/null); do kill -KILL "$pid" 2>/dev/null; done
	find "$root" -depth -type d -exec rmdir {} \; 2>/dev/null
done

log "step 11 ($((SECONDS - T0))s)"
# 11. Sysctls back to what up.sh found.
if [[ -f $STATE/sysctl.saved ]]; then
	while IFS='=' read -r k v; do
		sysctl -q -w "$k=$v" >/dev/null 2>&1 || log "could not restore $k=$v"
	done <"$STATE/sysctl.saved"
fi

log "step 12 ($((SECONDS - T0))s)"
# 12. Files outside the state dir: container log symlinks, CNI result cache,
#     shim sockets of our containerd, /run/containerd if we created it.
for l in /var/log/containers/*.log; do
	[[ -L $l && $(readlink "$l") == "$STATE/"* ]] && rm -f "$l"
done
rm -f /var/lib/cni/results/"$CNI_NETWORK"-*
# containerd's loopback network caches results as cni-loopback-<sandbox>-lo;
# CNI DEL removes them, a crashed containerd leaves them.
for d in "$STATE"/containerd/root/io.containerd.grpc.v1.cri/sandboxes/*/; do
	d=${d%/}
	rm -f /var/lib/cni/results/*-"${d##*/}"-*
done
if [[ -f $STATE/started ]]; then
	find /run/containerd/s -maxdepth 1 -type s -newer "$STATE/started" -delete 2>/dev/null
fi
# Directories the components create outside $STATE whatever their flags say
# (the kubelet's device-plugins socket dir, /var/log/containers, containerd's
# shim socket dir), removed if up.sh found them absent.
if [[ -f $STATE/created-paths ]]; then
	while read -r p; do
		case $p in
		/var/lib/kubelet) rm -rf /var/lib/kubelet/device-plugins && rmdir /var/lib/kubelet ;;
		*) rmdir "$p/s" 2>/dev/null; rmdir "$p" ;;
		esac 2>/dev/null
	done <"$STATE/created-paths"
fi

log "step 13 ($((SECONDS - T0))s)"
# 13. The state dir (volumes included).
if [[ -d $STATE ]]; then
	if awk -v s="$STATE/" 'index($5, s) == 1 {found=1} END {exit !found}' /proc/self/mountinfo; then
		log "mounts remain under $STATE; not removing it"
		exit 1
	fi
	rm -rf "$STATE"
fi
log "down in $((SECONDS - T0))s"
