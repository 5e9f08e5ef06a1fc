#!/usr/bin/env bash
# The plane's package index (for its nodes): pypiserver, from PyPI
# (tools/build.sh pypiserver), serving the pinned huggingface_hub and its
# dependencies as wheels for the stock Python image, on PORT and every
# address, so pods reach it at http://NODE_PLANE_ADDRESS:PORT/simple/. up.sh
# starts it (logs/pypiserver.log: one line per request, the wheels by name).
#
#   pypiserver.sh PORT
#
# PYPISERVER and PYPISERVER_PACKAGES (tools/build.sh env) say which
# pypiserver and which wheels; set, they are taken as they are.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
port="${1:?usage: pypiserver.sh PORT}"
if [[ -z "${PYPISERVER:-}" || -z "${PYPISERVER_PACKAGES:-}" ]]; then
	eval "$(bash "$repo/tools/build.sh" env | grep -E '^PYPISERVER(_PACKAGES)?=' | sed 's/^/export /')"
fi
[[ -x "$PYPISERVER" ]] || { echo "pypiserver is missing ($PYPISERVER): \`make tools\` builds it" >&2; exit 1; }
# No fallback: pypiserver would send a name it doesn't hold to pypi.org, and
# a download from there would pass for one from here. --verbose logs every
# request with its path.
exec "$PYPISERVER" run --verbose --port "$port" --host 0.0.0.0 --disable-fallback --health-endpoint /health "$PYPISERVER_PACKAGES"
