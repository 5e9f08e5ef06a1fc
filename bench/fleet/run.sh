#!/usr/bin/env bash
# `make bench-fleet`: a fresh local control plane on production clocks
# (MODELPLANE_UP_CLOCKS=production: Crossplane's own poll, sync and circuit
# breaker defaults; provider-kubernetes polling every minute) with one
# workload namespace per simulated cluster (PerCluster) and no nodes (its
# simulated clusters' Jobs are completed by bench/fleet/standin.ts), the
# fleet benchmark on it (bench/fleet/run.ts), then `make down`. On a failure the plane's
# logs are kept in _output/up/logs. The plane's ports are fixed: take
# `flock /tmp/modelplane-plane.lock` around it when others share the machine.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$repo"
bash test/e2e/control-plane/down.sh >/dev/null
MODELPLANE_UP_NODES=0 MODELPLANE_UP_CLOCKS=production MODELPLANE_UP_WORKLOAD_NAMESPACE=PerCluster bash test/e2e/control-plane/up.sh
status=0
node bench/dist/fleet/run.js || status=$?
if ((status == 0)); then
	bash test/e2e/control-plane/down.sh
	npx prettier --log-level warn --write docs/fleet-benchmark.md bench/fleet/results
else
	bash test/e2e/control-plane/down.sh --keep-state
	echo "make bench-fleet failed; the control plane's logs are in ${MODELPLANE_UP_DIR:-$repo/_output/up}/logs" >&2
fi
exit "$status"
