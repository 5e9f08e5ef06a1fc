#!/usr/bin/env bash
# node.sh on its own, away from `make up`: a throwaway etcd, kube-apiserver
# and registry on ports of its own (176xx), one real node for them, and what
# a workload cluster must do for the hydration Jobs:
#
#   1. a pod runs (busybox, pulled through the registry mirror);
#   2. a pod reaches its API server through the `kubernetes` Service
#      (kube-proxy) with its ServiceAccount token and the root CA;
#   3. a ReadWriteMany claim binds by itself (local-path-provisioner), a Job
#      writes a file on it and completes, a second pod reads the file, and
#      the host sees it under the node's volumes/;
#   4. an image volume: the busybox image mounted read-only in a pod;
#   5. the Modelplane hydration image (images/hydration/), pushed under the
#      name the compositions use, runs: its huggingface_hub is the pinned one,
#      and hydrate.py is where the Job runs it;
#   6. a pod asking for one device of the DeviceClass gpu.example.com through
#      a ResourceClaimTemplate: the scheduler allocates it from the ResourceSlice
#      dra-example-driver publishes, the driver prepares it (CDI), and the pod
#      sees it in its env.
#
#   node-check.sh [run]    all of the above, then stop everything (KEEP=1: leave it up)
#   node-check.sh down     stop what a KEEP=1 run left
#
# CLUSTERS=3 runs three such clusters side by side on one etcd, as `make up`
# does (check-a, check-b, check-c), and the checks on each.
#
# Root, and `make tools` first. State in _output/node-check (MODELPLANE_NODE_CHECK_DIR).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
here="$repo/test/e2e/control-plane"
export MODELPLANE_UP_DIR="${MODELPLANE_NODE_CHECK_DIR:-$repo/_output/node-check}"
# shellcheck source=common.sh
source "$here/common.sh"
CHECK_ETCD_PORT=17679 CHECK_ETCD_PEER_PORT=17680 CHECK_API_PORT=17643 CHECK_REGISTRY_PORT=17650
export NODE_REGISTRY_PORT=$CHECK_REGISTRY_PORT NODE_CERTS="$state/certs"
# Indices 7 to 9: away from the plane's nodes (0 to 2), should both run.
CHECK_CLUSTERS=(check-a check-b check-c)
CHECK_INDICES=(7 8 9)
COUNT="${CLUSTERS:-1}"
[[ "$COUNT" =~ ^[123]$ ]] || { echo "CLUSTERS is 1, 2 or 3" >&2; exit 2; }
NAME="" # the cluster the checks are on
say() { printf '[node-check %s] %s\n' "$(date +%T)" "$*" >&2; }
k() { "$KUBECTL" --kubeconfig "$state/kubeconfigs/$NAME" "$@"; }

stop_all() {
	[[ -d "$state" ]] || return 0
	local i
	for i in 0 1 2; do
		[[ -d "$state/nodes/${CHECK_CLUSTERS[$i]}" ]] || continue
		NODE_API_PORT=$((CHECK_API_PORT + i)) bash "$here/node.sh" down "${CHECK_CLUSTERS[$i]}" "${CHECK_INDICES[$i]}" || true
	done
	if [[ -f "$state/pids" ]]; then
		stop_started say
		rm -f "$state/pids"
	fi
}

# What node.sh down must have removed: namespaces, mounts, processes, cgroups.
left_behind() {
	local left=""
	ls /run/netns/mp-check-* >/dev/null 2>&1 && left+=" network namespaces"
	grep -q " $state/" /proc/mounts && left+=" mounts"
	pgrep -f -- "$state/" >/dev/null && left+=" processes"
	ls -d /sys/fs/cgroup/*/modelplane-check-* >/dev/null 2>&1 && left+=" cgroups"
	ip -4 -o addr show dev lo | grep -q " $NODE_PLANE_ADDRESS/" && left+=" the plane's address on lo"
	[[ -z "$left" ]] || { say "node.sh down left behind:$left"; return 1; }
}

phase_is() { [[ "$(k get pod "$1" -o jsonpath='{.status.phase}')" == "$2" ]]; }

run() {
	stop_all
	rm -rf "$state" && mkdir -p -m 700 "$state/etcd" && mkdir -p "$state"/{logs,certs,kubeconfigs,registry}
	: >"$state/pids"
	trap 'status=$?; if ((status != 0)); then say "failed; logs in $state/logs"; tail_logs; [[ -n "${KEEP:-}" ]] || stop_all; fi' EXIT
	local t0=$SECONDS c="$state/certs"
	openssl_quiet req -x509 -newkey rsa:2048 -nodes -days 7 -subj /CN=node-check-ca -keyout "$c/ca.key" -out "$c/ca.crt"
	openssl_quiet req -newkey rsa:2048 -nodes -subj /CN=localhost -keyout "$c/serving.key" -out "$c/serving.csr"
	printf 'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=%s\n' \
		"DNS:localhost,IP:127.0.0.1,$(node_serving_sans)" >"$c/serving.ext"
	openssl_quiet x509 -req -in "$c/serving.csr" -CA "$c/ca.crt" -CAkey "$c/ca.key" -CAcreateserial -days 7 -extfile "$c/serving.ext" -out "$c/serving.crt"
	openssl_quiet req -newkey rsa:2048 -nodes -subj /O=system:masters/CN=admin -keyout "$c/admin.key" -out "$c/admin.csr"
	printf 'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n' >"$c/admin.ext"
	openssl_quiet x509 -req -in "$c/admin.csr" -CA "$c/ca.crt" -CAkey "$c/ca.key" -CAcreateserial -days 7 -extfile "$c/admin.ext" -out "$c/admin.crt"
	openssl_quiet genrsa -out "$c/sa.key" 2048
	openssl_quiet rsa -in "$c/sa.key" -pubout -out "$c/sa.pub"

	local i
	start etcd "$ETCD" --name check --data-dir "$state/etcd" \
		--listen-client-urls "http://127.0.0.1:$CHECK_ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$CHECK_ETCD_PORT" \
		--listen-peer-urls "http://127.0.0.1:$CHECK_ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$CHECK_ETCD_PEER_PORT" \
		--initial-cluster "check=http://127.0.0.1:$CHECK_ETCD_PEER_PORT" --log-level warn
	wait_for etcd 60 curl -fsS "http://127.0.0.1:$CHECK_ETCD_PORT/health"
	for ((i = 0; i < COUNT; i++)); do
		# shellcheck disable=SC2046 # the flags are words
		start "apiserver-${CHECK_CLUSTERS[$i]}" "$KUBE_APISERVER" --etcd-servers "http://127.0.0.1:$CHECK_ETCD_PORT" \
			--etcd-prefix "/${CHECK_CLUSTERS[$i]}" --secure-port $((CHECK_API_PORT + i)) \
			--tls-cert-file "$c/serving.crt" --tls-private-key-file "$c/serving.key" --client-ca-file "$c/ca.crt" \
			--service-account-issuer https://kubernetes.default.svc \
			--service-account-key-file "$c/sa.pub" --service-account-signing-key-file "$c/sa.key" \
			--service-cluster-ip-range 10.96.0.0/16 --allow-privileged=false $(node_apiserver_flags "$c")
		kubeconfig "${CHECK_CLUSTERS[$i]}" $((CHECK_API_PORT + i))
	done
	for ((i = 0; i < COUNT; i++)); do
		NAME="${CHECK_CLUSTERS[$i]}"
		wait_for "kube-apiserver $NAME" 180 k get --raw /readyz
	done
	start registry "$CRANE" registry serve --address ":$CHECK_REGISTRY_PORT" --disk "$state/registry"
	wait_for "the registry" 30 port_taken "$CHECK_REGISTRY_PORT"
	say "etcd, $COUNT kube-apiserver(s) (:$CHECK_API_PORT...) and the registry (:$CHECK_REGISTRY_PORT) up in $((SECONDS - t0)) s"

	t0=$SECONDS
	bash "$here/node.sh" images
	for ((i = 0; i < COUNT; i++)); do
		NODE_API_PORT=$((CHECK_API_PORT + i)) bash "$here/node.sh" up "${CHECK_CLUSTERS[$i]}" "${CHECK_INDICES[$i]}"
	done
	say "$COUNT node(s) up in $((SECONDS - t0)) s"
	# The image for check 2: kubectl in a pod (busybox's wget can't speak the
	# API server's TLS), on busybox; the OCI resolver Job's publisher image.
	bash "$repo/images/oci-tools/build.sh" "127.0.0.1:$CHECK_REGISTRY_PORT"
	bash "$repo/images/hydration/build.sh" "127.0.0.1:$CHECK_REGISTRY_PORT"
	for ((i = 0; i < COUNT; i++)); do
		NAME="${CHECK_CLUSTERS[$i]}"
		check
	done
	trap - EXIT
	if [[ -n "${KEEP:-}" ]]; then
		say "left up (KEEP=1): KUBECONFIG=$state/kubeconfigs/<${CHECK_CLUSTERS[*]:0:COUNT}>; \`$0 down\` stops it"
	else
		stop_all
		left_behind
		say "all checks passed on ${CHECK_CLUSTERS[*]:0:COUNT}; stopped, nothing left behind"
	fi
}

# The checks, on cluster NAME.
check() {
	local t0 node="$NAME-node"
	say "$NAME: $(k get node "$node" -o jsonpath='{.metadata.name} {.status.addresses[0].address} {.status.nodeInfo.kubeletVersion} {.status.nodeInfo.containerRuntimeVersion} Ready={.status.conditions[?(@.type=="Ready")].status}')"

	# 1. A pod, its image pulled through the mirror (IfNotPresent: not there yet).
	t0=$SECONDS
	k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: hello}
spec:
  restartPolicy: Never
  containers:
  - {name: c, image: busybox:1.35.0, command: [sh, -c, 'echo "hello from \$(hostname), \$(ip -4 -o addr show eth0 | awk "{print \\\$4}")"']}
YAML
	wait_for "pod hello Succeeded" 120 phase_is hello Succeeded
	say "$NAME 1. pod hello Succeeded in $((SECONDS - t0)) s: $(k logs hello)"

	# 2. The API server through the kubernetes Service, as an in-cluster
	# client: kubectl in a pod, with the pod's ServiceAccount token and the
	# published root CA.
	k create serviceaccount reader >/dev/null
	k create rolebinding reader-view --clusterrole view --serviceaccount default:reader >/dev/null
	t0=$SECONDS
	k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: in-cluster}
spec:
  restartPolicy: Never
  serviceAccountName: reader
  containers:
  - name: c
    image: registry.k8s.io/kubectl:$KUBERNETES_VERSION
    command: [sh, -c, 'set -e; echo "via \$KUBERNETES_SERVICE_HOST:\$KUBERNETES_SERVICE_PORT"; kubectl get serviceaccount reader -o name']
YAML
	wait_for "pod in-cluster Succeeded" 120 phase_is in-cluster Succeeded
	say "$NAME 2. pod in-cluster Succeeded in $((SECONDS - t0)) s: $(k logs in-cluster | tr '\n' ' ')"
	[[ "$(k logs in-cluster | tail -n 1)" == serviceaccount/reader ]]

	# 3. A ReadWriteMany claim, bound by the provisioner; a Job writes, a pod reads.
	t0=$SECONDS
	k apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: cache}
spec:
  storageClassName: modelplane-rwx
  accessModes: [ReadWriteMany]
  resources: {requests: {storage: 1Gi}}
YAML
	wait_for "claim cache Bound" 120 sh -c "[ \"\$($KUBECTL --kubeconfig $state/kubeconfigs/$NAME get pvc cache -o jsonpath='{.status.phase}')\" = Bound ]"
	say "$NAME 3. claim cache Bound in $((SECONDS - t0)) s to $(k get pvc cache -o jsonpath='{.spec.volumeName}')"
	t0=$SECONDS
	k apply -f - >/dev/null <<'YAML'
apiVersion: batch/v1
kind: Job
metadata: {name: writer}
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: w
        image: busybox:1.35.0
        command: [sh, -c, 'echo "written by $(hostname)" > /cache/marker && cat /cache/marker']
        volumeMounts: [{name: cache, mountPath: /cache}]
      volumes: [{name: cache, persistentVolumeClaim: {claimName: cache}}]
YAML
	wait_for "Job writer Complete" 120 k wait --for=condition=Complete job/writer --timeout=1s
	say "$NAME 3. Job writer Complete in $((SECONDS - t0)) s"
	t0=$SECONDS
	k apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: reader}
spec:
  restartPolicy: Never
  containers:
  - name: r
    image: busybox:1.35.0
    command: [sh, -c, 'cat /cache/marker']
    volumeMounts: [{name: cache, mountPath: /cache, readOnly: true}]
  volumes: [{name: cache, persistentVolumeClaim: {claimName: cache, readOnly: true}}]
YAML
	wait_for "pod reader Succeeded" 120 phase_is reader Succeeded
	local on_host
	on_host="$(cat "$state/nodes/$NAME/volumes/shared/"*/marker)"
	say "$NAME 3. pod reader Succeeded in $((SECONDS - t0)) s, read: $(k logs reader); on the host: $on_host"
	[[ "$(k logs reader)" == "$on_host" && "$on_host" == "written by writer-"* ]]

	# 4. An image volume (Kubernetes 1.35's ImageVolume, containerd >= 2.1).
	t0=$SECONDS
	k apply -f - >/dev/null <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: image-volume}
spec:
  restartPolicy: Never
  containers:
  - name: c
    image: busybox:1.35.0
    command: [sh, -c, 'test -x /model/bin/busybox && echo "image volume: /model/bin/busybox is there"']
    volumeMounts: [{name: model, mountPath: /model}]
  volumes:
  - name: model
    image: {reference: "busybox:1.35.0", pullPolicy: IfNotPresent}
YAML
	wait_for "pod image-volume Succeeded" 120 phase_is image-volume Succeeded
	say "$NAME 4. pod image-volume Succeeded in $((SECONDS - t0)) s: $(k logs image-volume)"

	# 5. The hydration image, by the name the compositions give it.
	local image hub
	image="$(sed -n "s/^export const HYDRATION_IMAGE = '\(.*\)';/\1/p" "$repo/functions/lib/src/constants.ts")"
	hub="$(sed -n "s/^export const HUGGINGFACE_HUB_VERSION = '\(.*\)';/\1/p" "$repo/functions/compose-model-cache-hydration/src/huggingface.ts")"
	t0=$SECONDS
	k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Pod
metadata: {name: hydration-image}
spec:
  restartPolicy: Never
  containers:
  - name: c
    image: $image
    command: [sh, -c, 'python3 -c "import huggingface_hub; print(huggingface_hub.__version__)" && python3 /opt/modelplane/hydrate.py --help >/dev/null && echo script']
YAML
	wait_for "pod hydration-image Succeeded" 120 phase_is hydration-image Succeeded
	say "$NAME 5. pod hydration-image ($image) Succeeded in $((SECONDS - t0)) s: huggingface_hub $(k logs hydration-image | head -n 1)"
	[[ "$(k logs hydration-image | tr '\n' ' ')" == "$hub script " ]]

	# 6. A DRA claim: one fake GPU from the node's driver, seen by the pod.
	t0=$SECONDS
	k apply -f - >/dev/null <<'YAML'
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu}
spec:
  spec:
    devices:
      requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com, count: 1}}]
---
apiVersion: v1
kind: Pod
metadata: {name: gpu}
spec:
  restartPolicy: Never
  resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]
  containers:
  - name: c
    image: busybox:1.35.0
    command: [sh, -c, 'echo "GPU_DEVICE_0=$GPU_DEVICE_0"; test -n "$GPU_DEVICE_0" && sleep 5']
    resources: {claims: [{name: gpu}]}
YAML
	# The claim made from the template goes when the pod ends (the resource
	# claim controller deletes it), so its allocation is read while it runs.
	wait_for "pod gpu Running" 120 phase_is gpu Running
	local claim allocation
	claim="$(k get pod gpu -o jsonpath='{.status.resourceClaimStatuses[0].resourceClaimName}')"
	allocation="$(k get resourceclaim "$claim" -o jsonpath='{.status.allocation.devices.results[0].driver}/{.status.allocation.devices.results[0].pool}/{.status.allocation.devices.results[0].device}')"
	wait_for "pod gpu Succeeded" 60 phase_is gpu Succeeded
	say "$NAME 6. pod gpu Succeeded in $((SECONDS - t0)) s: $(k logs gpu); its claim $claim: $allocation"
	[[ "$(k logs gpu)" == "GPU_DEVICE_0=gpu-"* ]]
}

case "${1:-run}" in
run) run ;;
down) stop_all ;;
*) sed -n '/^#   node-check.sh/,/^#   node-check.sh down/p' "${BASH_SOURCE[0]}" >&2 && exit 2 ;;
esac
