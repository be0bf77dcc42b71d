#!/usr/bin/env bash
# load-image.sh ARCHIVE...: imports image archives (docker-archive or OCI, e.g.
# from `podman save`) into the realcluster's containerd, namespace k8s.io, so
# pods can use them with imagePullPolicy Never or IfNotPresent.
set -euo pipefail
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib.sh"
(($#)) || die "usage: load-image.sh ARCHIVE..."
[[ -S $CONTAINERD_SOCK ]] || die "no containerd socket at $CONTAINERD_SOCK (is the cluster up?)"
for a in "$@"; do
	ctr_ images import "$a"
done
