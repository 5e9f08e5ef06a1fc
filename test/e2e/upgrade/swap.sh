#!/usr/bin/env bash
# The upgrade itself, on a running local plane (`make up`, on whatever release):
# this checkout's Configuration and Function packages pushed under a new tag,
# the installed packages pointed at it (Crossplane installs the new XRDs and
# Compositions as new revisions), and the three function servers restarted on
# this checkout's bundles, as a Function's new revision replaces its pods.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
# shellcheck source=../control-plane/common.sh
source "$repo/test/e2e/control-plane/common.sh"
export KUBECONFIG="$state/kubeconfigs/control-plane"
version="$PACKAGE_VERSION-upgrade"

# As a Function's new revision does it: the new servers start beside the old
# ones (on ports of their own), the revisions switch over to them, and only
# then do the old ones stop. A reconcile that calls a function between the
# package patch and the new revision's endpoint still fails, as it does on a
# real cluster while the new revision's pods start: Crossplane then reports
# every custom condition Unknown (FatalError) until the next reconcile.
old_pids=()
while read -r pid name; do
	for fn in "${FUNCTIONS[@]}"; do [[ "$name" == "$fn" ]] && old_pids+=("$pid"); done
done <"$state/pids"
for fn in "${FUNCTIONS[@]}"; do
	# The old servers keep writing to the renamed file (their descriptor).
	mv "$state/logs/$fn.log" "$state/logs/$fn-before-upgrade.log"
done
FUNCTION_PORTS=("${UPGRADED_FUNCTION_PORTS[@]}")
step "this checkout's function servers, on ${FUNCTION_PORTS[*]}"
start_functions
step "this checkout's packages as $version"
build_and_push_packages "$version"
prefix="$PACKAGE_REGISTRY/modelplane"
"$KUBECTL" patch configuration modelplane-model-cache --type merge \
	-p "{\"spec\":{\"package\":\"$prefix/modelplane-model-cache:$version\"}}" >/dev/null
# One Function at a time, its new revision's endpoint published as soon as it is
# Active (as a runtime does), so a reconcile meets as short a switch as it can.
for i in "${!FUNCTIONS[@]}"; do
	"$KUBECTL" patch function "modelplane-${FUNCTIONS[$i]}" --type merge -p "{\"spec\":{\"package\":\"$prefix/${FUNCTIONS[$i]}:$version\"}}" >/dev/null
	wait_for "a new active revision of modelplane-${FUNCTIONS[$i]}" 120 bash -c \
		"\"$KUBECTL\" get functionrevisions -l pkg.crossplane.io/package=modelplane-${FUNCTIONS[$i]} \
		-o jsonpath='{range .items[?(@.spec.desiredState==\"Active\")]}{.spec.image}{end}' | grep -q ':$version\$'"
	run_function "modelplane-${FUNCTIONS[$i]}" "dns:///localhost:${FUNCTION_PORTS[$i]}"
done
wait_for "the Configuration Healthy on $version" 180 bash -c \
	"\"$KUBECTL\" get configurationrevisions -o jsonpath='{range .items[?(@.spec.desiredState==\"Active\")]}{.spec.image}{end}' | grep -q ':$version\$' && \"$KUBECTL\" wait --for condition=Healthy --timeout 5s configuration/modelplane-model-cache"
wait_for "the ModelCacheShard XRD Established" 120 "$KUBECTL" wait --for condition=Established --timeout 5s xrd/modelcacheshards.modelplane.ai
step "stopping the function servers of the old release"
for pid in "${old_pids[@]}"; do kill -- "-$pid" 2>/dev/null || true; done
step "upgraded to $version"
