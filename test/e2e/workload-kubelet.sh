#!/usr/bin/env bash
# THE STAND-IN, for a local control plane without nodes
# (`MODELPLANE_UP_NODES=0 make up`: `make e2e-standin`, `make e2e-upgrade`).
# A workload cluster there is a bare kube-apiserver: no kubelet, no
# scheduler, no controllers, so nothing binds a claim or runs a Job's pod.
# (`make up` gives each a real node, docs/nodes.md, and this is not used.)
# This plays those parts, on request, by writing the status the real ones
# would write, through the real API server (which validates it):
#
#   workload-kubelet.sh CLUSTER bind-claims
#       every Pending PersistentVolumeClaim in `default` becomes Bound
#   workload-kubelet.sh CLUSTER complete-job JOB
#       the Job succeeded (SuccessCriteriaMet, then Complete)
#   workload-kubelet.sh CLUSTER fail-job JOB [REASON]
#       the Job ran out of retries (FailureTarget, then Failed; BackoffLimitExceeded)
#   workload-kubelet.sh CLUSTER expire-job JOB
#       the Job's ttlSecondsAfterFinished has passed: delete it now, as the
#       TTL controller would then (it runs there too, on the real clock)
#   workload-kubelet.sh CLUSTER resolve-oci JOB CONFIGMAP REF MANIFEST_FILE
#       what the OCI resolver's pod does: write REF, the manifest and its
#       sha256 into CONFIGMAP, then the Job completes
#   workload-kubelet.sh CLUSTER available DEPLOYMENT
#       a Deployment's pods are all ready (Available)
#   workload-kubelet.sh CLUSTER report-progress JOB REPORT_JSON
#       what the hydration script (hydrate.py) does while it stages: write its
#       report as the annotation modelplane.ai/progress on its own Job, with a
#       JSON merge patch, as the Job's ServiceAccount (named like the Job): the
#       Role the function composed must allow exactly that, or this fails
#
# CLUSTER is a workload cluster of `make up` (cluster-a, cluster-b, cluster-c).
# Every action works in `default`, or in the namespace WORKLOAD_NAMESPACE names.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
# shellcheck source=control-plane/common.sh
source "$repo/test/e2e/control-plane/common.sh"

usage() {
	sed -n '/^#   workload-kubelet/,/^# CLUSTER/p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
	exit 2
}
(($# >= 2)) || usage
cluster="$1" action="$2"
shift 2
[[ -f "$state/kubeconfigs/$cluster" ]] || {
	echo "no workload cluster $cluster in $state (is \`make up\` running?)" >&2
	exit 1
}
if [[ -f "$state/nodes/$cluster/pids" ]]; then
	echo "$cluster runs a real node: its kubelet and controllers do this (the stand-in is for a plane started with MODELPLANE_UP_NODES=0)" >&2
	exit 1
fi
# The workload namespace: `default`, or a team's (per-team workload namespaces) from WORKLOAD_NAMESPACE.
k() { "$KUBECTL" --kubeconfig "$state/kubeconfigs/$cluster" --namespace "${WORKLOAD_NAMESPACE:-default}" "$@"; }
# A timestamp as the API server stores it. (A real controller's clock too.)
now() { date -u +%Y-%m-%dT%H:%M:%SZ; }

status_patch() { # KIND NAME JSON
	k patch "$1" "$2" --subresource status --type merge -p "$3" >/dev/null
}

case "$action" in
bind-claims)
	for claim in $(k get pvc -o jsonpath='{range .items[?(@.status.phase!="Bound")]}{.metadata.name}{"\n"}{end}'); do
		# The volume grants what the claim asked for, as a provisioner's would.
		modes="$(k get pvc "$claim" -o jsonpath='{.spec.accessModes}')"
		status_patch pvc "$claim" "{\"status\":{\"phase\":\"Bound\",\"accessModes\":${modes:-[]}}}"
		echo "bound pvc/$claim on $cluster"
	done
	;;
complete-job)
	job="${1:?complete-job needs a Job name}" t="$(now)"
	status_patch job "$job" "{\"status\":{\"startTime\":\"$t\",\"active\":0,\"ready\":0,\"succeeded\":1,\"completionTime\":\"$t\",\"conditions\":[
		{\"type\":\"SuccessCriteriaMet\",\"status\":\"True\",\"reason\":\"CompletionsReached\",\"message\":\"Reached expected number of succeeded pods\",\"lastProbeTime\":\"$t\",\"lastTransitionTime\":\"$t\"},
		{\"type\":\"Complete\",\"status\":\"True\",\"reason\":\"CompletionsReached\",\"message\":\"Reached expected number of succeeded pods\",\"lastProbeTime\":\"$t\",\"lastTransitionTime\":\"$t\"}]}}"
	echo "completed job/$job on $cluster"
	;;
fail-job)
	job="${1:?fail-job needs a Job name}" reason="${2:-BackoffLimitExceeded}" t="$(now)"
	message="Job has reached the specified backoff limit"
	status_patch job "$job" "{\"status\":{\"startTime\":\"$t\",\"active\":0,\"ready\":0,\"failed\":4,\"conditions\":[
		{\"type\":\"FailureTarget\",\"status\":\"True\",\"reason\":\"$reason\",\"message\":\"$message\",\"lastProbeTime\":\"$t\",\"lastTransitionTime\":\"$t\"},
		{\"type\":\"Failed\",\"status\":\"True\",\"reason\":\"$reason\",\"message\":\"$message\",\"lastProbeTime\":\"$t\",\"lastTransitionTime\":\"$t\"}]}}"
	echo "failed job/$job on $cluster ($reason)"
	;;
expire-job)
	job="${1:?expire-job needs a Job name}"
	[[ -n "$(k get job "$job" -o jsonpath='{.status.completionTime}{.status.conditions[?(@.type=="Failed")].status}')" ]] ||
		{ echo "job/$job on $cluster has not finished: a TTL starts when a Job finishes" >&2; exit 1; }
	k delete job "$job" --cascade=background >/dev/null
	echo "expired job/$job on $cluster"
	;;
resolve-oci)
	job="${1:?}" configmap="${2:?}" ref="${3:?}" manifest="${4:?resolve-oci needs JOB CONFIGMAP REF MANIFEST_FILE}"
	digest="sha256:$(sha256sum "$manifest" | cut -d' ' -f1)"
	dir="$(mktemp -d)"
	printf '%s' "$ref" >"$dir/ref" && printf '%s' "$digest" >"$dir/digest" && cp "$manifest" "$dir/manifest"
	k create configmap "$configmap" --from-file="$dir" --dry-run=client -o yaml |
		k apply --server-side --force-conflicts --field-manager=modelplane-oci-resolver -f - >/dev/null
	rm -rf "$dir"
	echo "resolved $ref to $digest into configmap/$configmap on $cluster"
	"${BASH_SOURCE[0]}" "$cluster" complete-job "$job"
	;;
available)
	deployment="${1:?available needs a Deployment name}" t="$(now)"
	replicas="$(k get deployment "$deployment" -o jsonpath='{.spec.replicas}')"
	status_patch deployment "$deployment" "{\"status\":{\"observedGeneration\":$(k get deployment "$deployment" -o jsonpath='{.metadata.generation}'),\"replicas\":${replicas:-1},\"readyReplicas\":${replicas:-1},\"availableReplicas\":${replicas:-1},\"updatedReplicas\":${replicas:-1},\"conditions\":[
		{\"type\":\"Available\",\"status\":\"True\",\"reason\":\"MinimumReplicasAvailable\",\"message\":\"Deployment has minimum availability.\",\"lastUpdateTime\":\"$t\",\"lastTransitionTime\":\"$t\"}]}}"
	echo "deployment/$deployment available on $cluster"
	;;
report-progress)
	# A stand-in for hydrate.py's reporter (no pod runs here): the same patch, as the same identity.
	job="${1:?}" report="${2:?report-progress needs JOB REPORT_JSON}"
	patch="$(node -e 'console.log(JSON.stringify({ metadata: { annotations: { "modelplane.ai/progress": process.argv[1] } } }))' "$report")"
	k --as "system:serviceaccount:${WORKLOAD_NAMESPACE:-default}:$job" patch job "$job" --type merge -p "$patch" >/dev/null
	echo "reported $report on job/$job on $cluster"
	;;
*) usage ;;
esac
