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

step "stopping the function servers of the old release"
for fn in "${FUNCTIONS[@]}"; do
	while read -r pid name; do
		[[ "$name" == "$fn" ]] && kill -- "-$pid" 2>/dev/null || true
	done <"$state/pids"
done
for i in "${!FUNCTIONS[@]}"; do
	for _ in $(seq 50); do port_taken "${FUNCTION_PORTS[$i]}" || break; sleep 0.2; done
done
step "this checkout's function servers"
start_functions
step "this checkout's packages as $version"
build_and_push_packages "$version"
prefix="$PACKAGE_REGISTRY/modelplane"
"$KUBECTL" patch configuration modelplane-model-cache --type merge \
	-p "{\"spec\":{\"package\":\"$prefix/modelplane-model-cache:$version\"}}" >/dev/null
for fn in "${FUNCTIONS[@]}"; do
	"$KUBECTL" patch function "modelplane-$fn" --type merge -p "{\"spec\":{\"package\":\"$prefix/$fn:$version\"}}" >/dev/null
done
for i in "${!FUNCTIONS[@]}"; do
	wait_for "a new active revision of modelplane-${FUNCTIONS[$i]}" 120 bash -c \
		"\"$KUBECTL\" get functionrevisions -l pkg.crossplane.io/package=modelplane-${FUNCTIONS[$i]} \
		-o jsonpath='{range .items[?(@.spec.desiredState==\"Active\")]}{.spec.image}{end}' | grep -q ':$version\$'"
	run_function "modelplane-${FUNCTIONS[$i]}" "dns:///localhost:${FUNCTION_PORTS[$i]}"
done
wait_for "the Configuration Healthy on $version" 180 bash -c \
	"\"$KUBECTL\" get configurationrevisions -o jsonpath='{range .items[?(@.spec.desiredState==\"Active\")]}{.spec.image}{end}' | grep -q ':$version\$' && \"$KUBECTL\" wait --for condition=Healthy --timeout 5s configuration/modelplane-model-cache"
wait_for "the ModelCacheShard XRD Established" 120 "$KUBECTL" wait --for condition=Established --timeout 5s xrd/modelcacheshards.modelplane.ai
step "upgraded to $version"
