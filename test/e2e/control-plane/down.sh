#!/usr/bin/env bash
# `make down`: stop everything `make up` started and remove its state
# (`--keep-state` keeps the logs and kubeconfigs, for reading after a failure).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
if [[ ! -f "$state/pids" ]]; then
	echo "Nothing to stop: no local control plane state in $state."
	exit 0
fi
# The nodes first (when it has them), while their API servers answer:
# pods, containers, mounts, network namespaces, cgroups, then their processes.
for i in "${!WORKLOAD_CLUSTERS[@]}"; do
	[[ -d "$state/nodes/${WORKLOAD_CLUSTERS[$i]}" ]] || continue
	NODE_API_PORT="${WORKLOAD_PORTS[$i]}" NODE_CERTS="$state/certs" NODE_REGISTRY_PORT="$REGISTRY_PORT" \
		bash "$(dirname "${BASH_SOURCE[0]}")/node.sh" down "${WORKLOAD_CLUSTERS[$i]}" "$i" || true
done
stop_started echo
if [[ "${1:-}" == --keep-state ]]; then
	rm -f "$state/pids"
	echo "Kept $state (logs and kubeconfigs)."
else
	rm -rf "$state"
	echo "Removed $state."
fi
