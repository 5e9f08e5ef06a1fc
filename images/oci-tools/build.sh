#!/usr/bin/env bash
# The images an OCI ModelCache's resolver Job runs, made offline from what
# `make tools` builds (there is no registry to pull them from here):
#
#   gcr.io/go-containerregistry/crane/debug:<v>  RESOLVER_IMAGE's name and version
#       (functions/lib/src/settings.ts): crane built at that version, on the
#       busybox image with /busybox for its shell, as upstream's debug image
#       has them (the Job runs /busybox/sh; crane on PATH).
#   registry.k8s.io/kubectl:<KUBERNETES_VERSION>  the plane's kubectl on busybox:
#       the Job's publisher when the plane's HydrationSettings name it (the
#       default, PUBLISHER_IMAGE, is another kubectl release, not built here),
#       and node-check's in-cluster client.
#
#   images/oci-tools/build.sh REGISTRY   push both to REGISTRY (host:port) under
#                                        those names' paths; the busybox image
#                                        (node.sh images) must be there already.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
registry="${1:?usage: images/oci-tools/build.sh REGISTRY (host:port)}"
eval "$(bash "$repo/tools/build.sh" env | grep -E '^(CRANE|RESOLVER_CRANE|KUBECTL)=' | sed 's/^/export /')"
# shellcheck source=../../tools/versions.env
source "$repo/tools/versions.env"
resolver="$(sed -n "s/^export const RESOLVER_IMAGE = '\(.*\)';/\1/p" "$repo/functions/lib/src/settings.ts")"
say() { printf '[oci tools images] %s\n' "$*" >&2; }
[[ -x "$RESOLVER_CRANE" ]] || { say "$RESOLVER_CRANE is missing: \`make tools\` builds it"; exit 1; }
arch="$(go env GOARCH 2>/dev/null || echo amd64)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
layer() { tar -C "$1" --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -cf "$2" .; }
t0=$SECONDS

# On the busybox image node.sh pushes: /busybox is its /bin, as the debug image's shell path.
mkdir -p "$work/resolver/ko-app"
ln -s bin "$work/resolver/busybox"
cp "$RESOLVER_CRANE" "$work/resolver/ko-app/crane"
layer "$work/resolver" "$work/resolver.tar"

mkdir -p "$work/kubectl/usr/local/bin"
cp "$KUBECTL" "$work/kubectl/usr/local/bin/kubectl"
layer "$work/kubectl" "$work/kubectl.tar"

{
	"$CRANE" append -b "$registry/docker.io/library/busybox:1.35.0" -f "$work/resolver.tar" -t "$registry/$resolver"
	"$CRANE" mutate "$registry/$resolver" --set-platform "linux/$arch" -e PATH=/ko-app:/busybox \
		--entrypoint /ko-app/crane -t "$registry/$resolver"
	"$CRANE" append -b "$registry/docker.io/library/busybox:1.35.0" -f "$work/kubectl.tar" \
		-t "$registry/registry.k8s.io/kubectl:$KUBERNETES_VERSION"
} >"$work/push.log" 2>&1 || { say "pushing to $registry failed:"; tail -n 10 "$work/push.log" >&2; exit 1; }
say "$resolver (crane $("$RESOLVER_CRANE" version)) and registry.k8s.io/kubectl:$KUBERNETES_VERSION pushed to $registry in $((SECONDS - t0)) s"
