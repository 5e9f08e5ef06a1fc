#!/usr/bin/env bash
# The serving stand-in for vLLM (ENGINE_STANDIN_IMAGE in test/e2e/plane.ts,
# images/engine/README.md): the hydration image's base (Debian bookworm's
# Python and the pinned huggingface_hub, images/hydration/build.sh) with
# engine_standin.py at /opt/modelplane/engine_standin.py as its entrypoint, so a
# ModelReplica's engine `args` (`--model=$(MODELPLANE_MODEL)`, ...) are appended
# as they would be to vLLM's OpenAI server image. No Docker: crane writes it.
#
#   images/engine/build.sh REGISTRY   build and push to REGISTRY (host:port) as
#                                     REGISTRY/<the image's name>, e.g.
#                                     127.0.0.1:15000/xpkg.upbound.io/modelplane/engine-standin:v0.1.0
#
# The base is the tools cache's hydration-base (`make tools`, or
# images/hydration/build.sh --base as root); this script builds it the same way
# when it is missing.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
registry="${1:?usage: images/engine/build.sh REGISTRY (host:port)}"
say() { printf '[engine stand-in image] %s\n' "$*" >&2; }
image="$(sed -n "s/^export const ENGINE_STANDIN_IMAGE = '\(.*\)';/\1/p" "$repo/test/e2e/plane.ts")"
[[ -n "$image" ]] || { say "can't read ENGINE_STANDIN_IMAGE (test/e2e/plane.ts)"; exit 1; }
# shellcheck source=../script-image.sh
source "$repo/images/script-image.sh"
on_hydration_base "engine stand-in image"
script="$repo/images/engine/engine_standin.py"

# An entrypoint, not a command: the pod's args are appended to it, as with vLLM's image.
push_script_image "$script" engine_standin.py --entrypoint python3,/opt/modelplane/engine_standin.py --exposed-ports 8000/tcp \
	-l "org.opencontainers.image.title=modelplane-engine-standin" \
	-l "org.opencontainers.image.description=a stand-in for vLLM: loads the model offline, reads every file, serves /health, /v1/models, /files"
# Also under the name the examples' replicas give their engine (vLLM's image,
# examples/model-replica/cache-ready, the walkthrough's replica): the nodes'
# containerds resolve docker.io through the plane's registry (node.sh).
vllm="$(sed -n 's|^ *image: \(vllm/vllm-openai:[^ ]*\)$|\1|p' "$repo/examples/model-replica/cache-ready/xr.yaml")"
[[ -n "$vllm" ]] || { say "can't read the vLLM image of examples/model-replica/cache-ready/xr.yaml"; exit 1; }
"$CRANE" copy "$registry/$image" "$registry/docker.io/$vllm" 2>/dev/null
say "$image also pushed as $registry/docker.io/$vllm"
