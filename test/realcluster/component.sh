#!/usr/bin/env bash
# component.sh stop|kill|start NAME: stops (SIGTERM, SIGKILL after 10 s),
# kills (SIGKILL) or starts again one component up.sh started (kubelet,
# kube-proxy, litek8s-1, ...), with the command line up.sh recorded in
# $STATE/cmds/NAME; the log is appended to. Tests use it to take a node's
# kubelet away and bring it back. stop and kill wait until the process is
# gone; a component that is not running is not an error for them.
set -euo pipefail
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib.sh"
[[ $EUID -eq 0 ]] || die "must run as root"
(($# == 2)) || die "usage: component.sh stop|kill|start NAME"
op=$1 name=$2
[[ $name =~ ^[a-z0-9-]+$ && -f $STATE/cmds/$name ]] || die "no component $name in $STATE/cmds"
take_lock
pidfile=$STATE/pids/$name.pid

case $op in
stop | kill)
	[[ -f $pidfile ]] || exit 0
	pid=$(cat "$pidfile")
	if ours "$pid"; then
		sig=TERM
		[[ $op == kill ]] && sig=KILL
		kill -"$sig" "$pid" 2>/dev/null || true
		for ((i = 0; i < 100; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$pid" 2>/dev/null; then
			kill -KILL "$pid" 2>/dev/null || true
			sleep 0.2
		fi
	fi
	rm -f "$pidfile"
	log "$name (pid $pid): $op done"
	;;
start)
	if [[ -f $pidfile ]] && ours "$(cat "$pidfile")"; then
		die "$name already runs (pid $(cat "$pidfile"))"
	fi
	eval "args=($(cat "$STATE/cmds/$name"))"
	start "$name" "${args[@]}"
	log "$name started again (pid $(cat "$pidfile"))"
	;;
*) die "usage: component.sh stop|kill|start NAME" ;;
esac
