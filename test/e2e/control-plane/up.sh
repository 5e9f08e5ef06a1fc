#!/usr/bin/env bash
# `make up`: a real Crossplane control plane on localhost, without Docker.
#
#   etcd ─┬─ kube-apiserver "control plane" (:16443) ── kube-controller-manager (GC, namespaces)
#         │      ├── Crossplane core (webhooks on: Usages are enforced)
#         │      ├── provider-kubernetes (one ClusterProviderConfig per workload cluster)
#         │      └── our three function servers (mutual TLS, one CA made here)
#         ├─ kube-apiserver "cluster-a" (:16444) ─┐ workload clusters, each
#         ├─ kube-apiserver "cluster-b" (:16445)  ├ a one-node cluster
#         └─ kube-apiserver "cluster-c" (:16446) ─┘ (node.sh)
#
# Each workload cluster gets a real node (node.sh: kube-scheduler,
# kube-controller-manager with its default controllers, containerd, the
# kubelet, kube-proxy, CNI, local-path-provisioner, a DRA driver, the
# LeaderWorkerSet controller); its API server and the registry listen where
# the nodes' namespaces reach them (NODE_PLANE_ADDRESS), and pods run. That
# needs root (docs/nodes.md says what it changes on the machine).
# MODELPLANE_UP_NODES=0: no nodes (no root needed), each workload cluster a
# bare API server with a kube-controller-manager (Job TTL, GC, claim
# protection), whose pods nothing runs: the stories that play the stand-in
# kubelet (test/e2e/workload-kubelet.sh) run there, and make bench-fleet.
#
# Every binary is a pinned upstream build from `make tools`; the stand-ins are
# named in the README ("What is real and what is simulated").
# Everything it starts keeps running until `make down`. State, logs and
# kubeconfigs live in $MODELPLANE_UP_DIR (default: _output/up in the clone).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
here="$repo/test/e2e/control-plane"
# shellcheck source=common.sh
source "$here/common.sh"

if [[ -f "$state/pids" ]] && any_running; then
	echo "The local control plane is already up (state in $state). \`make down\` stops it." >&2
	print_usage
	exit 0
fi
if [[ "$NODES" == 1 ]] && ((EUID != 0)); then
	echo "make up runs a real node on each workload cluster, and that needs root (network namespaces, mounts, cgroups;" \
		"docs/nodes.md). Run it as root, or MODELPLANE_UP_NODES=0 make up for a plane without nodes." >&2
	exit 1
fi
rm -rf "$state" && mkdir -p -m 700 "$state"/etcd && mkdir -p "$state"/{logs,certs,kubeconfigs,cache,crossplane-server,crossplane-client,function-server,provider-server,registry,packages}
: >"$state/pids"
# What this plane runs with, for whoever measures it (make bench-fleet).
printf 'clocks=%s\npoll=%s\ncrossplane-flags=%s\nworkload-namespace=%s\n' "$CLOCKS" "$POLL_INTERVAL" \
	"${CROSSPLANE_CLOCK_FLAGS[*]}" "$UP_NAMESPACE_MODE" >"$state/clocks"
trap 'status=$?; if ((status != 0)); then step "failed; the logs are in $state/logs"; tail_logs; bash "$here/down.sh" --keep-state >/dev/null 2>&1 || true; fi' EXIT

for port in "${ALL_PORTS[@]}"; do
	if port_taken "$port"; then
		echo "port $port is in use (is \`make run\` or another control plane running?); the local control plane needs ${ALL_PORTS[*]}" >&2
		exit 1
	fi
done

step "certificates: one CA for the API servers, Crossplane, the provider and the functions"
certs="$state/certs"
openssl_quiet req -x509 -newkey rsa:2048 -nodes -days 30 -subj "/CN=modelplane-local-ca" \
	-keyout "$certs/ca.key" -out "$certs/ca.crt"
issue() { # NAME CN [O] [SANS] [EXTENDED_KEY_USAGE]
	local name="$1" cn="$2" org="${3:-}" sans="${4:-}" eku="${5:-serverAuth,clientAuth}" subject="/CN=$2"
	[[ -n "$org" ]] && subject="/O=$org/CN=$cn"
	openssl_quiet req -newkey rsa:2048 -nodes -subj "$subject" -keyout "$certs/$name.key" -out "$certs/$name.csr"
	{
		echo "basicConstraints=CA:FALSE"
		echo "keyUsage=digitalSignature,keyEncipherment"
		echo "extendedKeyUsage=$eku"
		[[ -n "$sans" ]] && echo "subjectAltName=$sans"
	} >"$certs/$name.ext"
	openssl_quiet x509 -req -in "$certs/$name.csr" -CA "$certs/ca.crt" -CAkey "$certs/ca.key" -CAcreateserial \
		-days 30 -extfile "$certs/$name.ext" -out "$certs/$name.crt"
}
serving_sans="DNS:localhost,IP:127.0.0.1"
[[ "$NODES" != 1 ]] || serving_sans+=",$(node_serving_sans)"
issue serving localhost "" "$serving_sans" serverAuth
issue admin admin system:masters "" clientAuth
issue crossplane-client crossplane "" "DNS:crossplane.crossplane-system" clientAuth
openssl_quiet genrsa -out "$certs/sa.key" 2048
openssl_quiet rsa -in "$certs/sa.key" -pubout -out "$certs/sa.pub"
# The three certificate directories the way each server reads them: tls.crt, tls.key, ca.crt.
for dir in crossplane-server function-server provider-server; do
	cp "$certs/serving.crt" "$state/$dir/tls.crt" && cp "$certs/serving.key" "$state/$dir/tls.key" && cp "$certs/ca.crt" "$state/$dir/ca.crt"
done
cp "$certs/crossplane-client.crt" "$state/crossplane-client/tls.crt"
cp "$certs/crossplane-client.key" "$state/crossplane-client/tls.key"
cp "$certs/ca.crt" "$state/crossplane-client/ca.crt"

step "etcd $ETCD_VERSION on :$ETCD_PORT (one store; each API server has its own prefix)"
start etcd "$ETCD" --name local --data-dir "$state/etcd" \
	--listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
	--listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
	--initial-cluster "local=http://127.0.0.1:$ETCD_PEER_PORT" --log-level warn --quota-backend-bytes 2147483648
wait_for "etcd" 60 curl -fsS "http://127.0.0.1:$ETCD_PORT/health"

step "kube-apiserver $KUBERNETES_VERSION: the control plane on :$CONTROL_PLANE_PORT, workload clusters ${WORKLOAD_CLUSTERS[*]}"
apiserver() { # NAME PORT [--node]: --node, a workload cluster with a node (common.sh's node_apiserver_flags)
	local name="$1" port="$2" access=(--bind-address 127.0.0.1 --advertise-address 127.0.0.1 --authorization-mode RBAC)
	# shellcheck disable=SC2207 # the flags are words
	[[ "${3:-}" != --node ]] || access=($(node_apiserver_flags "$certs"))
	start "apiserver-$name" "$KUBE_APISERVER" \
		--etcd-servers "http://127.0.0.1:$ETCD_PORT" --etcd-prefix "/$name" --secure-port "$port" "${access[@]}" \
		--tls-cert-file "$certs/serving.crt" --tls-private-key-file "$certs/serving.key" \
		--client-ca-file "$certs/ca.crt" \
		--service-account-issuer "https://kubernetes.default.svc" \
		--service-account-key-file "$certs/sa.pub" --service-account-signing-key-file "$certs/sa.key" \
		--service-cluster-ip-range 10.96.0.0/16 --allow-privileged=false
	kubeconfig "$name" "$port"
}
apiserver control-plane "$CONTROL_PLANE_PORT"
for i in "${!WORKLOAD_CLUSTERS[@]}"; do
	apiserver "${WORKLOAD_CLUSTERS[$i]}" "${WORKLOAD_PORTS[$i]}" "$([[ "$NODES" == 1 ]] && echo --node)"
done
for name in control-plane "${WORKLOAD_CLUSTERS[@]}"; do
	wait_for "kube-apiserver $name" 180 kubectl_as "$name" get --raw /readyz
done
wait_for "namespace default on the control plane" 60 kubectl_as control-plane get namespace default
for name in "${WORKLOAD_CLUSTERS[@]}"; do
	# What a replica composes there besides core kinds: HTTPRoute, InferencePool.
	wait_for "namespace default on $name" 60 kubectl_as "$name" get namespace default
	kubectl_as "$name" apply --server-side -f "$WORKLOAD_CRDS" >/dev/null
done

step "kube-controller-manager: garbage collection and namespaces on the control plane; Job TTLs and claim protection on the workload clusters"
controller_manager() { # NAME CONTROLLERS
	start "controller-manager-$1" "$KUBE_CONTROLLER_MANAGER" \
		--kubeconfig "$state/kubeconfigs/$1" --authentication-kubeconfig "$state/kubeconfigs/$1" \
		--authorization-kubeconfig "$state/kubeconfigs/$1" --leader-elect=false \
		--controllers "$2" --secure-port 0 \
		--root-ca-file "$certs/ca.crt" --service-account-private-key-file "$certs/sa.key"
}
controller_manager control-plane garbage-collector-controller,namespace-controller
# With nodes, each node runs its cluster's kube-controller-manager (node.sh), with every default controller.
[[ "$NODES" == 1 ]] || for name in "${WORKLOAD_CLUSTERS[@]}"; do
	# The controllers that act on what our functions compose there without
	# pods: a finished Job's TTL, owner references, a claim's protection
	# finalizer. No job, deployment or volume controllers: with no nodes they
	# could do nothing, and the workload kubelet stand-in plays them.
	controller_manager "$name" ttl-after-finished-controller,garbage-collector-controller,persistentvolumeclaim-protection-controller
done

export KUBECONFIG="$state/kubeconfigs/control-plane"

step "Crossplane $CROSSPLANE_VERSION: its CRDs, the Usage webhook (on 127.0.0.1:$CROSSPLANE_WEBHOOK_PORT), core (clocks: $CLOCKS${CROSSPLANE_CLOCK_FLAGS:+, ${CROSSPLANE_CLOCK_FLAGS[*]}})"
"$KUBECTL" apply --server-side --force-conflicts -f "$CROSSPLANE_CRDS" >/dev/null
wait_for "the CRDs Established" 120 "$KUBECTL" wait --for condition=Established --timeout 5s crd --all
"$KUBECTL" create namespace crossplane-system >/dev/null
ca_bundle="$(base64 -w0 <"$certs/ca.crt")"
sed -e "s|@CA_BUNDLE@|$ca_bundle|" -e "s|@PORT@|$CROSSPLANE_WEBHOOK_PORT|" "$here/usage-webhook.yaml" | "$KUBECTL" apply -f - >/dev/null
# Functions run as our own processes (External runtime): Crossplane starts no
# Deployments for them; their revisions are registered below.
start crossplane env POD_NAMESPACE=crossplane-system TLS_SERVER_CERTS_DIR="$state/crossplane-server" \
	TLS_CLIENT_CERTS_DIR="$state/crossplane-client" \
	"$CROSSPLANE_CORE" core start --namespace crossplane-system --cache-dir "$state/cache" \
	--package-runtime External --webhook-port "$CROSSPLANE_WEBHOOK_PORT" --metrics-port "$CROSSPLANE_METRICS_PORT" \
	--health-probe-port "$CROSSPLANE_HEALTH_PORT" "${CROSSPLANE_CLOCK_FLAGS[@]}"
wait_for "Crossplane core (its webhook answering)" 120 curl -fsS "http://127.0.0.1:$CROSSPLANE_HEALTH_PORT/readyz"

step "provider-kubernetes $PROVIDER_KUBERNETES_VERSION: its CRDs, a ClusterProviderConfig per workload cluster"
for crd in "$PROVIDER_KUBERNETES_CRDS"/*.yaml; do
	# The legacy cluster-scoped Object converts through the provider's webhook
	# Service, which doesn't exist here; nothing of ours uses that kind.
	if grep -q '^  conversion:' "$crd"; then
		sed -e '/^  conversion:/,/^  group:/{/^  group:/!d}' "$crd"
	else
		cat "$crd"
	fi
	echo '---'
done | "$KUBECTL" apply --server-side --force-conflicts -f - >/dev/null
wait_for "the CRDs Established" 120 "$KUBECTL" wait --for condition=Established --timeout 5s crd --all
for name in "${WORKLOAD_CLUSTERS[@]}"; do
	"$KUBECTL" -n crossplane-system create secret generic "kubeconfig-$name" \
		--from-file=kubeconfig="$state/kubeconfigs/$name" >/dev/null
	sed -e "s|@NAME@|$name|g" "$here/cluster-provider-config.yaml" | "$KUBECTL" apply -f - >/dev/null
done
start provider-kubernetes env TLS_SERVER_CERTS_DIR="$state/provider-server" "$PROVIDER_KUBERNETES" \
	--poll "$POLL_INTERVAL" --health-probe-bind-addr "127.0.0.1:$PROVIDER_HEALTH_PORT"
wait_for "provider-kubernetes" 120 curl -fsS "http://127.0.0.1:$PROVIDER_HEALTH_PORT/readyz"

step "our three functions over mutual TLS"
start_functions

step "our packages, built with crossplane xpkg build and pushed to a local registry (:$REGISTRY_PORT)"
registry_address="127.0.0.1:$REGISTRY_PORT"
[[ "$NODES" != 1 ]] || registry_address=":$REGISTRY_PORT" # the nodes' containerds pull from it
start registry "$CRANE" registry serve --address "$registry_address" --disk "$state/registry"
wait_for "the registry" 30 port_taken "$REGISTRY_PORT"
build_and_push_packages

if [[ "$NODES" == 1 ]]; then
	step "a real node for each workload cluster (node.sh): containerd $CONTAINERD_VERSION, kubelet, kube-proxy, scheduler, controllers, local-path-provisioner $LOCAL_PATH_PROVISIONER_VERSION"
	export NODE_CERTS="$certs" NODE_REGISTRY_PORT="$REGISTRY_PORT"
	step "the hub (test/e2e/hub/, the stand-in for huggingface.co) on :$HUB_PORT, for the pods at $HUB_ENDPOINT"
	mkdir -p "$state/hub"
	"$repo/node_modules/.bin/esbuild" "$repo/test/e2e/hub/main.ts" --bundle --platform=node --format=esm \
		--log-level=warning --outfile="$state/hub/hub.mjs"
	start hub node "$state/hub/hub.mjs" --address "0.0.0.0:$HUB_PORT"
	wait_for "the hub" 30 curl -fsS "http://127.0.0.1:$HUB_PORT/_hub/healthz"
	step "the package index (pypiserver $PYPISERVER_VERSION, the pinned huggingface_hub's wheels) on :$PYPI_PORT, for the pods at $PYPI_INDEX_URL"
	start pypiserver bash "$here/pypiserver.sh" "$PYPI_PORT"
	wait_for "pypiserver" 30 curl -fsS "http://127.0.0.1:$PYPI_PORT/health"
	bash "$here/node.sh" images
	# The hydration Jobs' default image, as the compositions name it.
	bash "$repo/images/hydration/build.sh" "127.0.0.1:$REGISTRY_PORT"
	# The stock Python image (STOCK_PYTHON_IMAGE) of the pip path, a stand-in built from Debian.
	bash "$repo/images/python/build.sh" "127.0.0.1:$REGISTRY_PORT"
	# The serving stand-in for vLLM (ENGINE_STANDIN_IMAGE in test/e2e/plane.ts) the e2e replicas run.
	bash "$repo/images/engine/build.sh" "127.0.0.1:$REGISTRY_PORT"
	# The endpoint picker's stand-in (images/epp/), under the name a replica's routing composes.
	bash "$repo/images/epp/build.sh" "127.0.0.1:$REGISTRY_PORT"
	# The OCI resolver Job's images (crane at RESOLVER_IMAGE's version; kubectl).
	bash "$repo/images/oci-tools/build.sh" "127.0.0.1:$REGISTRY_PORT"
	# Side by side: a node's start is mostly waiting (containerd, its
	# registration, Ready, its webhooks), 11 to 16 s each one after another.
	node_pids=()
	for i in "${!WORKLOAD_CLUSTERS[@]}"; do
		NODE_API_PORT="${WORKLOAD_PORTS[$i]}" bash "$here/node.sh" up "${WORKLOAD_CLUSTERS[$i]}" "$i" &
		node_pids+=("$!")
	done
	nodes_failed=0
	for pid in "${node_pids[@]}"; do wait "$pid" || nodes_failed=1; done
	((nodes_failed == 0)) || { step "a node did not come up (its own lines above say why)"; exit 1; }
fi

step "the Configuration and the three Functions, installed by Crossplane from the registry"
"$KUBECTL" apply -f "$repo/test/e2e/manifests/inferencecluster-crd.yaml" >/dev/null
# The packages keep their published names; an ImageConfig sends Crossplane
# to the local registry for them.
sed -e "s|@REGISTRY@|127.0.0.1:$REGISTRY_PORT/$PACKAGE_PATH|" "$here/packages.yaml" |
	sed -e "s|@PUBLISHED@|$PACKAGE_REGISTRY|g" -e "s|@VERSION@|$PACKAGE_VERSION|g" | "$KUBECTL" apply -f - >/dev/null
for i in "${!FUNCTIONS[@]}"; do
	run_function "modelplane-${FUNCTIONS[$i]}" "dns:///localhost:${FUNCTION_PORTS[$i]}"
done
wait_for "the Configuration Healthy" 120 "$KUBECTL" wait --for condition=Healthy --timeout 5s configuration/modelplane-model-cache
wait_for "the Functions Healthy" 120 "$KUBECTL" wait --for condition=Healthy --timeout 5s functions --all
wait_for "the XRDs Established" 120 "$KUBECTL" wait --for condition=Established --timeout 5s compositeresourcedefinitions --all
wait_for "the InferenceCluster CRD Established" 60 "$KUBECTL" wait --for condition=Established --timeout 5s crd/inferenceclusters.modelplane.ai
wait_for "the XRDs' CRDs" 120 "$KUBECTL" get modelcaches,modelcachehydrations,modelreplicas -A
wait_for "the Compositions" 120 "$KUBECTL" get composition modelcaches.modelplane.ai modelcachehydrations.modelplane.ai modelreplicas.modelplane.ai

trap - EXIT
step "up in $((SECONDS)) s"
print_usage
