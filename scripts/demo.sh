#!/usr/bin/env bash
# `make demo`: the product doing its job on a local control plane. Starts the
# plane (`make up`'s script, a real node per workload cluster: root) unless
# one is up already, applies examples/demo/demo.yaml (a ModelCache on two
# clusters, a ModelReplica on one), and shows it happen: each cluster's Job
# pod staging with its progress, the cache Ready, the replica's engine pod
# starting, serving, and saying what it read. Then what to try
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
if [[ "$NODES" != 1 ]]; then
	echo "[demo] The demo runs real pods, and MODELPLANE_UP_NODES=$NODES starts no node: run it without MODELPLANE_UP_NODES=0." >&2
	exit 1
fi
if [[ -f "$state/pids" ]] && any_running && cp_kubectl get --raw /readyz >/dev/null 2>&1; then
	if [[ ! -f "$state/nodes/cluster-a/pids" ]]; then
		echo "[demo] The local control plane up in $state has no nodes (MODELPLANE_UP_NODES=0), and the demo runs real pods: \`make down\`, then \`make demo\`." >&2
		exit 1
	fi
	say "1/4 A local control plane is up already ($state): using it."
else
	say "1/4 Starting the local control plane (make up, as root): etcd, the Kubernetes API servers, a real node for each workload cluster, Crossplane $CROSSPLANE_VERSION, provider-kubernetes $PROVIDER_KUBERNETES_VERSION, our three functions. About a minute."
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
# And what it does for the replica's node pool (nodePoolName a100): the node
# of demo-us-east's cluster carries the pool's label the engine's pods select.
"$KUBECTL" --kubeconfig "$state/kubeconfigs/cluster-a" label node cluster-a-node modelplane.ai/pool=a100 --overwrite

# The workload clusters run real nodes: each cluster's staging Job is a pod
# that downloads the weights from the plane's hub (test/e2e/hub/, the stand-in
# for huggingface.co: Qwen/Qwen3-0.6B there is a small repository of the same
# layout), and the replica's engine is a pod (a stand-in for vLLM, no GPU
# here) that reads them offline. The hub sends the weights file slowly (16 KiB
# every 80 ms: about a minute), so each cluster's progress can be watched.
curl -fsS -X PUT "http://127.0.0.1:$HUB_PORT/_hub/faults" \
	-d '{"slow":{"path":"model.safetensors","delayMs":80},"repo":"Qwen/Qwen3-0.6B"}' >/dev/null

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
curl -fsS -X PUT "http://127.0.0.1:$HUB_PORT/_hub/faults" -d '{}' >/dev/null # the hub at full speed again

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
# The engine's own words (a stand-in for vLLM, images/engine/): what it read, offline, through the mount.
engine="$("$KUBECTL" --kubeconfig "$state/kubeconfigs/cluster-a" -n default get deployments -o name | grep -m1 "/$REPLICA-main-" || true)"
if [[ -n "$engine" ]]; then
	echo "Its engine, a pod on cluster-a's node (kubectl --kubeconfig $state/kubeconfigs/cluster-a logs $engine):"
	"$KUBECTL" --kubeconfig "$state/kubeconfigs/cluster-a" -n default logs "$engine" | grep -m2 -E '^\[engine-standin\] (model|read) ' || true
fi

cat <<NEXT

[demo] Done: the cache is Ready on both clusters and the replica serves.

Try next (the plane stays up):
  export KUBECONFIG=$state/kubeconfigs/control-plane
  kubectl -n $NAMESPACE get modelcaches,modelcachehydrations,modelreplicas
  kubectl -n $NAMESPACE get modelcache $CACHE -o yaml            # status.clusters: each cluster's phase and progress
  kubectl --kubeconfig $state/kubeconfigs/cluster-a get pvc,jobs,deployments,pods   # what it composed on a workload cluster, and its pods
  kubectl -n $NAMESPACE delete modelreplica $REPLICA             # then the cache can go: kubectl -n $NAMESPACE delete modelcache $CACHE
The walkthrough (docs/walkthrough.md) tells the longer story: a cluster failing and recovering.

Stop it all with: make down
NEXT
