#!/usr/bin/env bash
# The endpoint picker stand-in (images/epp/README.md), pushed under the name
# the replica's routing composes (EPP_IMAGE), so the nodes' containerds find it
# through their mirror of its registry. The hydration base (Debian's Python)
# with epp_standin.py as its entrypoint; no Docker: crane writes it.
#
#   images/epp/build.sh REGISTRY   e.g. 127.0.0.1:15000/ghcr.io/llm-d/llm-d-router-endpoint-picker:v0.9.0
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
registry="${1:?usage: images/epp/build.sh REGISTRY (host:port)}"
say() { printf '[epp stand-in image] %s\n' "$*" >&2; }
image="$(sed -n "s/^export const EPP_IMAGE = '\(.*\)';/\1/p" "$repo/functions/compose-model-replica/src/routing.ts")"
[[ -n "$image" ]] || { say "can't read EPP_IMAGE (functions/compose-model-replica/src/routing.ts)"; exit 1; }
# shellcheck source=../script-image.sh
source "$repo/images/script-image.sh"
on_hydration_base "epp stand-in image"
push_script_image "$repo/images/epp/epp_standin.py" epp_standin.py --entrypoint python3,/opt/modelplane/epp_standin.py \
	--exposed-ports 9002/tcp --exposed-ports 9003/tcp \
	-l "org.opencontainers.image.title=modelplane-epp-standin" \
	-l "org.opencontainers.image.description=a stand-in for llm-d's endpoint picker: takes its flags, listens, picks nothing"
