#!/usr/bin/env bash
# A STAND-IN for docker.io/library/python:3.11-slim (STOCK_PYTHON_IMAGE in
# functions/lib/src/constants.ts), which can't be pulled here: Debian
# bookworm's Python 3.11 and pip from `debootstrap --variant=minbase`
# (python3, python3-pip, ca-certificates), nothing else. It is what a
# hydration Job with `install: {pip: true}` runs: pip installs the pinned
# huggingface_hub at start, then python3 runs the inline script. README.md
# says how it differs from the official image.
#
#   images/python/build.sh REGISTRY   build (once) and push to REGISTRY (host:port) as
#                                     REGISTRY/docker.io/library/python:3.11-slim, the path
#                                     the nodes' containerd asks the plane's registry for
#   images/python/build.sh --base     only the image tarball, into the tools cache
#
# The image (60 to 120 s, root for debootstrap) is built once per Debian suite
# into the tools cache (~/.cache/modelplane-tools/python-standin-...), as an
# image tarball; each run only pushes it.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
registry="${1:?usage: images/python/build.sh REGISTRY (host:port) | --base}"
eval "$(bash "$repo/tools/build.sh" env | grep -E '^(TOOLS_CACHE|CRANE)=' | sed 's/^/export /')"
stock="$(sed -n "s/^export const STOCK_PYTHON_IMAGE = '\(.*\)';/\1/p" "$repo/functions/lib/src/constants.ts")"
[[ "$stock" == python:3.11-slim ]] || { echo "python stand-in: STOCK_PYTHON_IMAGE is '$stock', this stand-in is python:3.11-slim" >&2; exit 1; }
# An image named without a registry is Docker Hub's library (containerd's reading of it).
image="docker.io/library/$stock"
suite=bookworm # bookworm's python3 is 3.11, the official image's minor version
dir="$TOOLS_CACHE/python-standin-$suite-3.11-slim"
say() { printf '[%s] %s\n' "${SAY_AS:-python stand-in image}" "$*" >&2; }
arch="$(go env GOARCH 2>/dev/null || echo amd64)"
# shellcheck source=../debian-base.sh
source "$repo/images/debian-base.sh"

# What makes Debian's Python behave as the official image's for the Job.
official_like() {
	local rootfs="$1"
	# Debian marks its Python EXTERNALLY-MANAGED (PEP 668): pip then refuses a
	# root install outside a venv. The official image's Python is built from
	# source into /usr/local and has no such marker, so the Job's plain
	# `pip install` works there: without the marker it works here too.
	rm -f "$rootfs"/usr/lib/python3*/EXTERNALLY-MANAGED || return 1
	# The official image has `python` and `pip` besides python3 and pip3.
	[[ -e "$rootfs/usr/bin/pip" ]] || ln -s pip3 "$rootfs/usr/bin/pip" || return 1
	[[ -e "$rootfs/usr/bin/python" ]] || ln -s python3 "$rootfs/usr/bin/python" || return 1
	# No huggingface_hub, as in the official image: the Job's pip installs it.
	! chroot "$rootfs" python3 -c 'import huggingface_hub' 2>/dev/null
}

if [[ -f "$dir/.built" ]]; then
	[[ "$registry" != --base ]] || say "python-standin: cached in $dir"
else
	debootstrap_image "$dir" "$suite" python3,python3-pip,ca-certificates "modelplane.local/python-standin:3.11-slim" official_like
fi
[[ "$registry" != --base ]] || exit 0
t0=$SECONDS
push_image_tarball "$dir/base-image.tar" "$registry/$image" -e LANG=C.UTF-8 --cmd python3 \
	-l "org.opencontainers.image.title=modelplane-python-standin" \
	-l "org.opencontainers.image.description=a stand-in for python:3.11-slim: Debian bookworm's python3 and pip, no huggingface_hub"
say "$image pushed as $registry/$image ($("$CRANE" digest "$registry/$image")) in $((SECONDS - t0)) s"
