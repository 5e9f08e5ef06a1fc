#!/usr/bin/env bash
# The Modelplane hydration image (HYDRATION_IMAGE in functions/lib/src/constants.ts):
# Debian bookworm's Python (debootstrap, minbase, with ca-certificates), the
# pinned huggingface_hub (HUGGINGFACE_HUB_VERSION in the hydration function)
# and its dependencies from PyPI as wheels, and hydrate.py at
# /opt/modelplane/hydrate.py. No Docker, no base image to pull: crane writes
# the layers. A Job runs it as `python3 /opt/modelplane/hydrate.py ARGS` and
# installs nothing.
#
#   images/hydration/build.sh REGISTRY    build and push to REGISTRY (host:port) as
#                                          REGISTRY/<the image's name>, e.g.
#                                          127.0.0.1:15000/xpkg.upbound.io/modelplane/hydration:v0.1.0
#   images/hydration/build.sh --base      only the base, into the cache (`make tools` does this)
#
# The base (Debian and the wheels, 60 to 120 s, root for debootstrap) is built
# once per Debian suite and huggingface_hub version into the tools cache
# (~/.cache/modelplane-tools/hydration-base-...), as an image tarball whose
# layer is compressed once; each run pushes it and adds the script's layer.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
registry="${1:?usage: images/hydration/build.sh REGISTRY (host:port) | --base}"
eval "$(bash "$repo/tools/build.sh" env | grep -E '^(TOOLS_CACHE|CRANE)=' | sed 's/^/export /')"
image="$(sed -n "s/^export const HYDRATION_IMAGE = '\(.*\)';/\1/p" "$repo/functions/lib/src/constants.ts")"
hub="$(sed -n "s/^export const HUGGINGFACE_HUB_VERSION = '\(.*\)';/\1/p" "$repo/functions/compose-model-cache-hydration/src/huggingface.ts")"
script="$repo/functions/compose-model-cache-hydration/src/hydrate.py"
suite=bookworm python=3.11 # bookworm's python3 is 3.11: the wheels are chosen for it
[[ -n "$image" && -n "$hub" ]] || { echo "hydration image: can't read HYDRATION_IMAGE or HUGGINGFACE_HUB_VERSION" >&2; exit 1; }
base="$TOOLS_CACHE/hydration-base-$suite-huggingface_hub-$hub"
say() { printf '[%s] %s\n' "${SAY_AS:-hydration image}" "$*" >&2; }
arch="$(go env GOARCH 2>/dev/null || echo amd64)"
case "$arch" in amd64) wheel_arch=x86_64 ;; arm64) wheel_arch=aarch64 ;; *) say "no wheels for $arch"; exit 1 ;; esac

# shellcheck source=../debian-base.sh
source "$repo/images/debian-base.sh"

# What the hydration base adds to Debian's Python: huggingface_hub and its dependencies.
with_hub() {
	local rootfs="$1" log="$2"
	say "hydration-base: huggingface_hub==$hub and its dependencies, wheels for CPython $python on $wheel_arch"
	python3 -m pip install --quiet --disable-pip-version-check --no-cache-dir --no-compile --only-binary=:all: \
		--implementation cp --python-version "$python" --abi "cp${python/./}" \
		--platform "manylinux_2_28_$wheel_arch" --platform "manylinux2014_$wheel_arch" --platform "manylinux_2_17_$wheel_arch" \
		--target "$rootfs/usr/local/lib/python$python/dist-packages" "huggingface_hub==$hub" >>"$log" 2>&1 || return 1
	# The wheels' console scripts name this machine's Python; the image runs python3 -m.
	rm -rf "$rootfs/usr/local/lib/python$python/dist-packages/bin"
	mkdir -p "$rootfs/opt/modelplane"
}

if [[ -f "$base/.built" ]]; then
	[[ "$registry" != --base ]] || say "hydration-base: cached in $base"
else
	debootstrap_image "$base" "$suite" python3,ca-certificates "modelplane.local/hydration-base:$hub" with_hub
fi
[[ "$registry" != --base ]] || exit 0
# shellcheck source=../script-image.sh
source "$repo/images/script-image.sh"
push_script_image "$script" hydrate.py --cmd python3,/opt/modelplane/hydrate.py -l "org.opencontainers.image.title=modelplane-hydration"
