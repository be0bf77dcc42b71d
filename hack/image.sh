#!/usr/bin/env bash
# Builds the litek8s image offline: the static node and ctl binaries
# (CGO_ENABLED=0, version, commit and date stamped with -ldflags -X), then
# the image from Containerfile with podman (Debian's package), tagged
# REPOSITORY/litek8s:VERSION in the local image store, and saved as a
# docker archive that `ctr images import`, `podman load`, `docker load`
# and `kind load image-archive` all accept.
#
#   hack/image.sh                  binaries, image and archive
#   hack/image.sh --binaries-only  binaries and build context only; then
#                                  `docker build -f Containerfile _output/image`
#
# Settings (environment):
#   VERSION     default: the chart's appVersion (charts/litek8s/Chart.yaml)
#   REPOSITORY  default: ghcr.io/litek8s (the chart's image.repository without /litek8s)
#   IMAGE       default: $REPOSITORY/litek8s:$VERSION
#   OUT         default: _output (context in $OUT/image, archive $OUT/litek8s-$VERSION.tar)
#   COMMIT, DATE  default: the checkout's HEAD and its commit date (reproducible)
set -euo pipefail
cd "$(dirname "$0")/.."

binaries_only=false
case "${1:-}" in
  --binaries-only) binaries_only=true ;;
  "") ;;
  *) echo "usage: $0 [--binaries-only]" >&2; exit 2 ;;
esac

VERSION=${VERSION:-$(sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\} *$/\1/p' charts/litek8s/Chart.yaml)}
[ -n "$VERSION" ] || { echo "no VERSION and no appVersion in charts/litek8s/Chart.yaml" >&2; exit 1; }
REPOSITORY=${REPOSITORY:-ghcr.io/litek8s}
IMAGE=${IMAGE:-$REPOSITORY/litek8s:$VERSION}
OUT=${OUT:-_output}
COMMIT=${COMMIT:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}
DATE=${DATE:-$(git log -1 --format=%cd --date=format-local:%Y-%m-%dT%H:%M:%SZ 2>/dev/null || TZ=UTC date +%Y-%m-%dT%H:%M:%SZ)}

ctx=$OUT/image
rm -rf "$ctx"
mkdir -p "$ctx/data"
pkg=github.com/litek8s/litek8s/internal/version
ldflags="-s -w -X $pkg.Version=$VERSION -X $pkg.Commit=$COMMIT -X $pkg.Date=$DATE"
for cmd in node ctl; do
  CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$ctx/$cmd" "./cmd/$cmd"
done
echo "binaries: $ctx/node $ctx/ctl ($("$ctx/node" --version))"
if $binaries_only; then
  echo "context: $ctx (docker build -f Containerfile $ctx -t $IMAGE)"
  exit 0
fi

if ! command -v podman >/dev/null; then
  sudo=; [ "$(id -u)" -eq 0 ] || sudo=sudo
  install() { $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends podman; }
  install || { $sudo apt-get update && install; }
fi
podman build --quiet -f Containerfile -t "$IMAGE" \
  --build-arg "VERSION=$VERSION" --build-arg "COMMIT=$COMMIT" --build-arg "CREATED=$DATE" "$ctx" >/dev/null
archive=$OUT/litek8s-$VERSION.tar
rm -f "$archive"
podman save --quiet --format docker-archive -o "$archive" "$IMAGE"
size=$(podman image inspect --format '{{.Size}}' "$IMAGE")
echo "image: $IMAGE ($((size / 1000000)) MB)"
echo "archive: $archive"
