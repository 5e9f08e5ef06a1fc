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
# Two lanes (docs/nodes.md): the stories named in E2E_BESIDE play one after
# another beside the others, which play one after another too; each lane's
# report is its own (.test-results/e2e.json, e2e-beside.json), its lines on
# the terminal marked. One lane when either is empty.
first=() beside=()
for file in "$@"; do # "$@": only these files (make e2e E2E=...)
	name="$(basename "$file" .e2e.ts)"
	if [[ " ${E2E_BESIDE:-} " == *" $name "* ]]; then beside+=("$file"); else first+=("$file"); fi
done
rm -f .test-results/e2e-beside.json
if ((${#first[@]} == 0 || ${#beside[@]} == 0)); then
	npx vitest run --config vitest.e2e.config.ts "$@" || status=$?
else
	echo "make e2e: two lanes: ${first[*]##*/} | beside: ${beside[*]##*/}"
	(
		set +e
		E2E_REPORT=.test-results/e2e-beside.json npx vitest run --config vitest.e2e.config.ts "${beside[@]}" 2>&1 |
			sed -u 's/^/[beside] /'
		exit "${PIPESTATUS[0]}"
	) &
	lane=$!
	npx vitest run --config vitest.e2e.config.ts "${first[@]}" || status=$?
	wait "$lane" || status=$?
fi
if ((status == 0)); then
	bash test/e2e/control-plane/down.sh
else
	bash test/e2e/control-plane/down.sh --keep-state
fi
# Last, so the tail of the run's output (all CI keeps) names what failed.
reports=(.test-results/e2e.json)
if [[ -f .test-results/e2e-beside.json ]]; then reports+=(.test-results/e2e-beside.json); fi
node scripts/test-summary.mjs "${reports[@]}" || true
if ((status != 0)); then
	echo "make e2e failed; the control plane's logs are in ${MODELPLANE_UP_DIR:-$repo/_output/up}/logs" >&2
fi
exit "$status"
