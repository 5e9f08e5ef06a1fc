#!/usr/bin/env bash
# `make e2e`: start a fresh local control plane, play the lifecycle on it
# (test/e2e/*.e2e.ts, asserted on what the API servers hold), stop it. On a
# failure the plane is stopped but its logs and kubeconfigs are kept in
# _output/up for reading.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$repo"
bash test/e2e/control-plane/down.sh >/dev/null
bash test/e2e/control-plane/up.sh
status=0
npx vitest run --config vitest.e2e.config.ts "$@" || status=$? # "$@": only these files (make e2e E2E=...)
if ((status == 0)); then
	bash test/e2e/control-plane/down.sh
else
	bash test/e2e/control-plane/down.sh --keep-state
fi
# Last, so the tail of the run's output (all CI keeps) names what failed.
node scripts/test-summary.mjs .test-results/e2e.json || true
if ((status != 0)); then
	echo "make e2e failed; the control plane's logs are in ${MODELPLANE_UP_DIR:-$repo/_output/up}/logs" >&2
fi
exit "$status"
