#!/usr/bin/env bash
# `make demo`: the product doing its job on a local control plane. Starts the
# plane (`make up`'s script) unless one is up already, applies
# examples/demo/demo.yaml (a ModelCache on two clusters, a ModelReplica on
# one), and shows it happen: each cluster staging with its progress, the
# cache Ready, the replica's engine starting and serving. Then what to try
# next, and how to stop it. Every wait says what it waits for, and gives up
# (exit 1, naming what did not happen) after DEMO_TIMEOUT seconds per step.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
# shellcheck source=../test/e2e/control-plane/common.sh
source "$repo/test/e2e/control-plane/common.sh"

NAMESPACE=demo CACHE=qwen REPLICA=qwen-chat-demo
CLUSTERS=(demo-us-east demo-eu-west)
TIMEOUT="${DEMO_TIMEOUT:-300}"
say() { printf '\n[demo] %s\n' "$*"; }
cp_kubectl() { "$KUBECTL" --kubeconfig "$state/kubeconfigs/control-plane" "$@"; }
# condition KIND/NAME TYPE FIELD: a condition's status, reason or message.
condition() { cp_kubectl -n "$NAMESPACE" get "$1" -o jsonpath="{.status.conditions[?(@.type==\"$2\")].$3}" 2>/dev/null || true; }

# --- 1. the plane ---------------------------------------------------------------
if [[ -f "$state/pids" ]] && any_running && cp_kubectl get --raw /readyz >/dev/null 2>&1; then
	say "1/4 A local control plane is up already ($state): using it."
else
	say "1/4 Starting the local control plane (make up): etcd, the Kubernetes API servers, Crossplane $CROSSPLANE_VERSION, provider-kubernetes $PROVIDER_KUBERNETES_VERSION, our three functions. About a minute."
	bash "$repo/test/e2e/control-plane/up.sh"
fi

# --- 2. the demo ----------------------------------------------------------------
say "2/4 Applying examples/demo/demo.yaml: namespace $NAMESPACE, InferenceClusters ${CLUSTERS[*]}, ModelCache $CACHE, ModelReplica $REPLICA"
cp_kubectl apply -f examples/demo/demo.yaml
# What upstream Modelplane writes on each InferenceCluster once its cluster
# exists (examples/demo/clusters.status.yaml): which workload cluster it is.
node --input-type=module -e '
import { readFileSync } from "node:fs";
import { parse } from "yaml";
for (const [name, status] of Object.entries(parse(readFileSync("examples/demo/clusters.status.yaml", "utf8"))))
  console.log(name + " " + JSON.stringify({ status }));
' | while read -r name patch; do
	cp_kubectl patch inferencecluster "$name" --subresource status --type merge -p "$patch" >/dev/null
	echo "inferencecluster.modelplane.ai/$name status: on workload cluster $(cp_kubectl get inferencecluster "$name" -o jsonpath='{.status.providerConfigRef.name}')"
done

# --- STAND-IN: remove this block once the workload clusters have real nodes ---
# The workload clusters of `make up` have no kubelet yet, so nothing runs the
# staging Jobs or the engine's pods. test/e2e/workload-kubelet.sh plays the
# kubelet and the controllers: it binds each claim, writes the progress the
# staging script would report, completes the Job, and makes the engine's
# Deployments Available. Everything below this block only waits on the
# conditions our functions and Crossplane write, and works the same with real
# nodes.
stand_in() {
	local kubelet="$repo/test/e2e/workload-kubelet.sh" job="" cluster step deadline=$((SECONDS + TIMEOUT))
	local commit=0123456789abcdef0123456789abcdef01234567 total=1509552128
	for cluster in cluster-a cluster-b; do
		until job="$("$KUBECTL" --kubeconfig "$state/kubeconfigs/$cluster" -n default get jobs -o name 2>/dev/null | grep -m1 "modelcache-$NAMESPACE-$CACHE-hydrate")"; do
			((SECONDS < deadline)) || return 1
			sleep 1
		done
		bash "$kubelet" "$cluster" bind-claims
	done
	for step in 1 2 3 4; do
		for cluster in cluster-a cluster-b; do
			local report="{\"state\":\"Downloading\",\"commit\":\"$commit\",\"requiredGiB\":2,\"filesTotal\":8,\"filesDone\":$((step * 2)),\"bytesTotal\":$total,\"bytesDone\":$((total / 4 * step))}"
			# Retried until provider-kubernetes has created the Job's Role and binding.
			until bash "$kubelet" "$cluster" report-progress "${job#job.batch/}" "$report" >/dev/null 2>&1; do
				((SECONDS < deadline)) || return 1
				sleep 1
			done
		done
		# Until the cache shows this step on both clusters (the report travels: provider-kubernetes observes the
		# Job, the child reads it, the cache rolls it up), so each step is seen.
		local seen=0 wait_until=$((SECONDS + 60))
		while ((seen < 2 && SECONDS < wait_until)); do
			seen=0
			for percent in $(cp_kubectl -n "$NAMESPACE" get modelcache "$CACHE" -o jsonpath='{.status.clusters[*].progress.percent}' 2>/dev/null); do
				((percent >= step * 25)) && seen=$((seen + 1))
			done
			sleep 1
		done
	done
	for cluster in cluster-a cluster-b; do bash "$kubelet" "$cluster" complete-job "${job#job.batch/}"; done
	# The engine: make each of the replica's Deployments on cluster-a Available, as they appear.
	while ((SECONDS < deadline)); do
		for deployment in $("$KUBECTL" --kubeconfig "$state/kubeconfigs/cluster-a" -n default get deployments -o name 2>/dev/null | grep "/$REPLICA"); do
			bash "$kubelet" cluster-a available "${deployment#deployment.apps/}" >/dev/null 2>&1 || true
		done
		sleep 3
	done
}
stand_in >"$state/logs/demo-stand-in.log" 2>&1 &
stand_in_pid=$!
trap 'kill "$stand_in_pid" 2>/dev/null || true' EXIT
echo "(stand-in: test/e2e/workload-kubelet.sh plays the workload clusters' kubelet; log: $state/logs/demo-stand-in.log)"
# --- END STAND-IN ---------------------------------------------------------------

# --- 3. the cache, staging on both clusters -------------------------------------
say "3/4 Waiting for ModelCache $NAMESPACE/$CACHE to be Ready on both clusters (each stages the weights; up to $TIMEOUT s):"
deadline=$((SECONDS + TIMEOUT)) last="" quiet=$SECONDS
while :; do
	now="$(cp_kubectl -n "$NAMESPACE" get modelcache "$CACHE" -o jsonpath='{range .status.clusters[*]}  {.name}: {.phase}  {.progress.summary}{"  "}{.message}{"\n"}{end}' 2>/dev/null || true)"
	ready="$(condition "modelcache/$CACHE" Ready status)"
	summary="$(cp_kubectl -n "$NAMESPACE" get modelcache "$CACHE" -o jsonpath='{.status.summary.ready}' 2>/dev/null || true)"
	# The replica meanwhile: it waits for its cluster's cache (its engine starts
	# the moment demo-us-east is Ready, often before the cache's own rollup is).
	replica="$(condition "modelreplica/$REPLICA" ModelAccepted reason)"
	[[ -n "$now" ]] && now+=$'\n'"  $REPLICA (replica): ModelAccepted: ${replica:-not yet}"
	if [[ "$now" != "$last" && -n "$now" ]]; then
		printf '%s  ready %s\n%s\n' "$(date +%T)" "${summary:-?}" "$now"
		last="$now" quiet=$SECONDS
	elif ((SECONDS - quiet >= 20)); then
		echo "  (still waiting for the cache: ${summary:-0/2} clusters ready; $(condition "modelcache/$CACHE" Ready reason) $(condition "modelcache/$CACHE" Ready message))"
		quiet=$SECONDS
	fi
	[[ "$ready" == True ]] && break
	if ((SECONDS >= deadline)); then
		echo "[demo] ModelCache $CACHE was not Ready within $TIMEOUT s: Ready is ${ready:-unset} ($(condition "modelcache/$CACHE" Ready message))" >&2
		exit 1
	fi
	sleep 2
done
echo "ModelCache $CACHE Ready on $(cp_kubectl -n "$NAMESPACE" get modelcache "$CACHE" -o jsonpath='{.status.summary.ready}') clusters."

# --- 4. the replica, starting its engine ----------------------------------------
say "4/4 Waiting for ModelReplica $NAMESPACE/$REPLICA to serve (its engine starts once the cache is Ready on demo-us-east; up to $TIMEOUT s):"
deadline=$((SECONDS + TIMEOUT)) last="" quiet=$SECONDS
while :; do
	reason="$(condition "modelreplica/$REPLICA" ModelReady reason)"
	now="  ModelReady: ${reason:-not yet} $(condition "modelreplica/$REPLICA" ModelReady message)"
	if [[ "$now" != "$last" ]]; then
		printf '%s\n%s\n' "$(date +%T)" "$now"
		last="$now" quiet=$SECONDS
	elif ((SECONDS - quiet >= 20)); then
		echo "  (still waiting for the replica: Ready $(condition "modelreplica/$REPLICA" Ready reason) $(condition "modelreplica/$REPLICA" Ready message))"
		quiet=$SECONDS
	fi
	[[ "$reason" == Serving ]] && break
	if ((SECONDS >= deadline)); then
		echo "[demo] ModelReplica $REPLICA was not serving within $TIMEOUT s (ModelReady: ${reason:-unset})" >&2
		exit 1
	fi
	sleep 2
done
echo "ModelReplica $REPLICA serving on demo-us-east."

cat <<NEXT

[demo] Done: the cache is Ready on both clusters and the replica serves.

Try next (the plane stays up):
  export KUBECONFIG=$state/kubeconfigs/control-plane
  kubectl -n $NAMESPACE get modelcaches,modelcachehydrations,modelreplicas
  kubectl -n $NAMESPACE get modelcache $CACHE -o yaml            # status.clusters: each cluster's phase and progress
  kubectl --kubeconfig $state/kubeconfigs/cluster-a get pvc,jobs,deployments   # what it composed on a workload cluster
  kubectl -n $NAMESPACE delete modelreplica $REPLICA             # then the cache can go: kubectl -n $NAMESPACE delete modelcache $CACHE
The walkthrough (docs/walkthrough.md) tells the longer story: a cluster failing and recovering.

Stop it all with: make down
NEXT
