#!/usr/bin/env bash
# `make e2e-upgrade`: upgrade in place on a fresh local control plane.
#
#   1. the release before the shard level (UPGRADE_FROM, a commit of this
#      repository), built in _output/upgrade/release from `git archive`;
#   2. `make up` on that release (its function bundles and packages, this
#      checkout's plane scripts and tools; no nodes: the stand-in kubelet
#      stages and serves, as in that release's e2e), and the `before` phase of
#      upgrade.e2e.ts: a Ready cache on two clusters and a replica serving;
#   3. the upgrade as a platform team does it: this checkout's Configuration and
#      Function packages pushed under a new tag and the packages pointed at it,
#      the function servers restarted on this checkout's bundles;
#   4. the `after` phase: handed over to a shard, nothing on a cluster deleted
#      or re-created, then a clean delete.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
cd "$repo"
# The last release before the shard level (docs/migration.md).
from="${UPGRADE_FROM:-d290b86d1a8de5c85e184d467117bbeb22d3d0d8}"
old="$repo/_output/upgrade/release"
state_dir="${MODELPLANE_UP_DIR:-$repo/_output/up}" # the plane's (common.sh's $state)
export MODELPLANE_UP_NODES=0 # the plane and the swap's packages both: no nodes
step() { printf '[upgrade] %s\n' "$*" >&2; }

step "the release before shards ($from) into $old"
if ! git cat-file -e "$from^{commit}" 2>/dev/null; then
	# A shallow clone (as CI checkouts often are): the release's commit from the remote.
	step "commit $from is not in this clone: fetching it"
	git fetch --quiet --unshallow 2>/dev/null || git fetch --quiet origin "$from" 2>/dev/null || true
	git cat-file -e "$from^{commit}" 2>/dev/null || {
		echo "commit $from is not in this clone and could not be fetched (a shallow clone? fetch its history first)" >&2
		exit 1
	}
fi
rm -rf "$old" && mkdir -p "$old"
git archive "$from" | tar -x -C "$old"
(cd "$old" && npm ci --no-audit --no-fund --loglevel=error >/dev/null && node scripts/build.mjs >/dev/null)

bash test/e2e/control-plane/down.sh >/dev/null
MODELPLANE_UP_RELEASE="$old" bash test/e2e/control-plane/up.sh >/dev/null
status=0
phase() { UPGRADE_PHASE="$1" npx vitest run --config vitest.e2e.config.ts test/e2e/upgrade/upgrade.e2e.ts || status=$?; }
phase before
if ((status == 0)); then
	step "upgrading: this checkout's packages and function servers (what a user reads sampled meanwhile)"
	# upgrade-swapped: the during phase samples until it appears (STOP in upgrade.e2e.ts).
	rm -f "$state_dir/upgrade-swapped"
	UPGRADE_PHASE=during npx vitest run --config vitest.e2e.config.ts test/e2e/upgrade/upgrade.e2e.ts >"$state_dir/logs/upgrade-during.log" 2>&1 &
	watcher=$!
	sleep 5 # its first samples before anything changes
	bash test/e2e/upgrade/swap.sh || status=$?
	touch "$state_dir/upgrade-swapped"
	wait "$watcher" || status=$?
fi
((status == 0)) && phase after
if ((status == 0)); then
	bash test/e2e/control-plane/down.sh
else
	bash test/e2e/control-plane/down.sh --keep-state
	echo "make e2e-upgrade failed; the control plane's logs are in $state_dir/logs" >&2
fi
exit "$status"
