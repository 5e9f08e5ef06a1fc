# Shared by up.sh, down.sh and the e2e tests' launcher: the tools, the ports
# and the small helpers. Sourced, never run.
# shellcheck disable=SC2034 # the variables are read by the scripts that source this
# shellcheck source=../../../tools/versions.env
source "$repo/tools/versions.env"
# After the pins: under CROSSPLANE=newest (MODELPLANE_CROSSPLANE) the env
# names the newest versions and their tools.
eval "$(bash "$repo/tools/build.sh" env | sed 's/^/export /')"
state="${MODELPLANE_UP_DIR:-$repo/_output/up}"
# The release the plane runs: this checkout, or another release's tree, built
# (the upgrade test starts the plane on the release before it): its function
# bundles and its packages are used instead of this checkout's.
release="${MODELPLANE_UP_RELEASE:-$repo}"

WORKLOAD_CLUSTERS=(cluster-a cluster-b cluster-c)
FUNCTIONS=(compose-model-cache compose-model-cache-hydration compose-model-replica)
ETCD_PORT=23790
ETCD_PEER_PORT=23800
CONTROL_PLANE_PORT=16443
WORKLOAD_PORTS=(16444 16445 16446)
# Crossplane's own defaults (9443, 8080, 8081) collide with provider-kubernetes,
# whose webhook port is fixed at 9443 and metrics at 8080.
CROSSPLANE_WEBHOOK_PORT=17443
CROSSPLANE_METRICS_PORT=17080
CROSSPLANE_HEALTH_PORT=17081
PROVIDER_WEBHOOK_PORT=9443
PROVIDER_METRICS_PORT=8080
PROVIDER_HEALTH_PORT=18081
# Not 9443 to 9445: those are `make run`'s, and 9443 is the provider's webhook.
FUNCTION_PORTS=(19443 19444 19445)
# make e2e-upgrade: the new release's servers, started beside the old ones.
UPGRADED_FUNCTION_PORTS=(19453 19454 19455)
REGISTRY_PORT=15000
# A real node per workload cluster (node.sh; root): each in a network
# namespace of its own, where the host is NODE_PLANE_ADDRESS (the API servers,
# the registry, anything the plane serves to pods). MODELPLANE_UP_NODES=0: a
# plane without nodes, whose pods nothing runs (the stand-in kubelet's,
# test/e2e/workload-kubelet.sh).
NODES="${MODELPLANE_UP_NODES:-1}"
NODE_PLANE_ADDRESS=10.209.255.1
# With nodes, the stand-in for huggingface.co (test/e2e/hub/): the hydration
# Jobs' hfEndpoint, in the packaged Composition's HydrationSettings.
HUB_PORT=15080
HUB_ENDPOINT="http://$NODE_PLANE_ADDRESS:$HUB_PORT"
# With nodes, the package index (pypiserver.sh): the pip path's index. The
# HydrationSettings send the InferenceClusters labelled
# PIP_CLUSTER_LABEL_KEY=PIP_CLUSTER_LABEL_VALUE to it, on the stock Python
# image (its stand-in, images/python/).
PYPI_PORT=15081
PYPI_INDEX_URL="http://$NODE_PLANE_ADDRESS:$PYPI_PORT/simple/"
PIP_CLUSTER_LABEL_KEY=modelplane.ai/e2e-install
PIP_CLUSTER_LABEL_VALUE=pip

# What a workload API server needs for a node of its own: its certificate
# valid for the pods' names of it (the kubernetes Service, the plane's
# address), listening where the node's namespace reaches it, advertised there
# (the kubernetes Service's endpoint), the kubelet authorised as a node, and a
# client certificate for the kubelet (logs, exec). CERTS: ca.crt, admin.crt/key.
node_serving_sans() {
	echo "IP:$NODE_PLANE_ADDRESS,IP:10.96.0.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
}
node_apiserver_flags() { # CERTS
	echo --bind-address 0.0.0.0 --advertise-address "$NODE_PLANE_ADDRESS" --authorization-mode Node,RBAC \
		--enable-admission-plugins NodeRestriction --kubelet-preferred-address-types InternalIP \
		--kubelet-client-certificate "$1/admin.crt" --kubelet-client-key "$1/admin.key"
}
ALL_PORTS=("$ETCD_PORT" "$ETCD_PEER_PORT" "$CONTROL_PLANE_PORT" "${WORKLOAD_PORTS[@]}" "$CROSSPLANE_WEBHOOK_PORT"
	"$CROSSPLANE_METRICS_PORT" "$CROSSPLANE_HEALTH_PORT" "$PROVIDER_WEBHOOK_PORT" "$PROVIDER_METRICS_PORT"
	"$PROVIDER_HEALTH_PORT" "${FUNCTION_PORTS[@]}" "${UPGRADED_FUNCTION_PORTS[@]}" "$REGISTRY_PORT")
[[ "$NODES" != 1 ]] || ALL_PORTS+=("$HUB_PORT" "$PYPI_PORT")
# The clocks: how often Crossplane and provider-kubernetes look again, and
# Crossplane's per-XR circuit breaker. MODELPLANE_UP_CLOCKS picks a set.
#
# local (the default): everything polls every 5 s, so a local plane sees
# changes quickly. The breaker (Crossplane's defaults: 100 events of burst, 1
# a second, open for 5 minutes) is sized for providers that poll every
# minute; at 5 s polls a composite with six Objects (a staging HuggingFace
# cache: claim, Job, token Secret, and the Job's ServiceAccount, Role and
# RoleBinding) sees its watch events several times faster than on a real
# control plane, trips the breaker, and then waits up to 5 minutes for a
# reconcile. Scaled to the faster clocks, it still stops a real hot loop.
#
# production (`make bench-fleet`): Crossplane's own defaults (poll 1m, sync
# 1h, breaker 100 / 1 a second / 5m: none of those flags is passed) and
# provider-kubernetes polling every 1m (its default is 10m; 1m is what a
# platform that wants to see a claim bind within a minute sets).
#
# MODELPLANE_UP_POLL and MODELPLANE_UP_CB_* override single values in either.
CLOCKS="${MODELPLANE_UP_CLOCKS:-local}"
case "$CLOCKS" in
local)
	POLL_INTERVAL="${MODELPLANE_UP_POLL:-5s}"
	CIRCUIT_BREAKER_BURST="${MODELPLANE_UP_CB_BURST:-400}"
	CIRCUIT_BREAKER_REFILL="${MODELPLANE_UP_CB_REFILL:-4}"
	CIRCUIT_BREAKER_COOLDOWN="${MODELPLANE_UP_CB_COOLDOWN:-1m}"
	CROSSPLANE_CLOCK_FLAGS=(--poll-interval "$POLL_INTERVAL" --sync-interval 1m)
	;;
production)
	POLL_INTERVAL="${MODELPLANE_UP_POLL:-1m}"
	CIRCUIT_BREAKER_BURST="${MODELPLANE_UP_CB_BURST:-}"
	CIRCUIT_BREAKER_REFILL="${MODELPLANE_UP_CB_REFILL:-}"
	CIRCUIT_BREAKER_COOLDOWN="${MODELPLANE_UP_CB_COOLDOWN:-}"
	CROSSPLANE_CLOCK_FLAGS=()
	[[ -n "${MODELPLANE_UP_POLL:-}" ]] && CROSSPLANE_CLOCK_FLAGS+=(--poll-interval "$POLL_INTERVAL")
	;;
*)
	echo "MODELPLANE_UP_CLOCKS must be local or production (got $CLOCKS)" >&2
	exit 2
	;;
esac
[[ -n "$CIRCUIT_BREAKER_BURST" ]] && CROSSPLANE_CLOCK_FLAGS+=(--circuit-breaker-burst "$CIRCUIT_BREAKER_BURST")
[[ -n "$CIRCUIT_BREAKER_REFILL" ]] && CROSSPLANE_CLOCK_FLAGS+=(--circuit-breaker-refill-rate "$CIRCUIT_BREAKER_REFILL")
[[ -n "$CIRCUIT_BREAKER_COOLDOWN" ]] && CROSSPLANE_CLOCK_FLAGS+=(--circuit-breaker-cooldown "$CIRCUIT_BREAKER_COOLDOWN")

# The platform's HydrationSettings.workloadNamespace (and ReplicaSettings'),
# set in the packaged Compositions before they are built into the
# Configuration: Shared (the packaged default, no input) or PerTeam or
# PerCluster (`make bench-fleet` runs each simulated cluster in its own
# namespace of a shared workload API server).
UP_NAMESPACE_MODE="${MODELPLANE_UP_WORKLOAD_NAMESPACE:-Shared}"
case "$UP_NAMESPACE_MODE" in
Shared | PerTeam | PerCluster) ;;
*)
	echo "MODELPLANE_UP_WORKLOAD_NAMESPACE must be Shared, PerTeam or PerCluster (got $UP_NAMESPACE_MODE)" >&2
	exit 2
	;;
esac

step() { printf '[up] %s\n' "$*" >&2; }

openssl_quiet() { openssl "$@" 2>/dev/null; }

port_taken() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# start NAME COMMAND...: run in the background, in its own process group,
# logging to logs/NAME.log; its pid goes to the pids file.
start() {
	local name="$1"
	shift
	setsid "$@" >"$state/logs/$name.log" 2>&1 </dev/null &
	echo "$! $name" >>"$state/pids"
}

# running PID: the process is there and has not exited. `kill -0` alone
# also succeeds on a zombie, and ours are orphans (started with setsid from
# a script that has ended), reaped by PID 1: on this machine its init reaps
# about every 2 s, so a stop that waited on `kill -0` took 2 s a process,
# 96 s for a plane with nodes.
running() {
	local stat
	stat="$(cat "/proc/$1/stat" 2>/dev/null)" || return 1
	[[ -n "$stat" && "${stat##*) }" != Z* ]]
}

# stop_pid PID: its process group (a daemon's supervisor and the daemon, or
# one process started by `start`), TERM, then KILL after 5 s. True when it
# was running.
stop_pid() {
	local pid="$1"
	running "$pid" || return 1
	kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
	for _ in $(seq 1 50); do
		running "$pid" || return 0
		sleep 0.1
	done
	kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
}

# stop_started SAY: every process `start` recorded, in reverse order of start
# (the controllers before the API servers, etcd last); SAY (echo, a logger)
# is told "stopped NAME" for each that was running.
stop_started() {
	local pid name
	tac "$state/pids" | while read -r pid name; do
		if stop_pid "$pid"; then "$@" "stopped $name"; fi
	done
}

any_running() {
	local pid name
	while read -r pid name; do
		running "$pid" && return 0
	done <"$state/pids"
	return 1
}

# wait_for WHAT SECONDS COMMAND...: until COMMAND succeeds, or fail naming WHAT.
wait_for() {
	local what="$1" seconds="$2" deadline=$((SECONDS + $2))
	shift 2
	until "$@" >/dev/null 2>&1; do
		if ((SECONDS >= deadline)); then
			step "$what did not come up within $seconds s"
			return 1
		fi
		check_alive
		sleep 1
	done
}

# Fail at once when something we started has died, naming it.
check_alive() {
	local pid name
	while read -r pid name; do
		if ! running "$pid"; then
			step "$name exited; the end of $state/logs/$name.log:"
			tail -n 20 "$state/logs/$name.log" >&2
			return 1
		fi
	done <"$state/pids"
}

tail_logs() {
	local log
	for log in "$state"/logs/*.log; do
		[[ -s "$log" ]] || continue
		printf '\n==> %s <==\n' "$log" >&2
		tail -n 8 "$log" >&2
	done
}

# kubeconfig NAME PORT: a kubeconfig for that API server, as admin (system:masters).
kubeconfig() {
	local file="$state/kubeconfigs/$1"
	cat >"$file" <<KUBECONFIG
apiVersion: v1
kind: Config
clusters:
  - name: $1
    cluster:
      server: https://127.0.0.1:$2
      certificate-authority-data: $(base64 -w0 <"$state/certs/ca.crt")
users:
  - name: admin
    user:
      client-certificate-data: $(base64 -w0 <"$state/certs/admin.crt")
      client-key-data: $(base64 -w0 <"$state/certs/admin.key")
contexts:
  - name: $1
    context: { cluster: $1, user: admin }
current-context: $1
KUBECONFIG
}

kubectl_as() {
	local name="$1"
	shift
	"$KUBECTL" --kubeconfig "$state/kubeconfigs/$name" "$@"
}

# Where the packages are published (scripts/package.mjs's defaults, which the
# README's install manifests use) and their version.
PACKAGE_REGISTRY="xpkg.upbound.io"
PACKAGE_PATH="modelplane"
PACKAGE_VERSION="v$(sed -n 's/^  "version": "\(.*\)",$/\1/p' "$repo/package.json")"

# The Configuration package (crossplane.yaml and package/, as make xpkg stages
# it) and the three Function packages (their metadata, no runtime image: the
# functions run here as processes), built and pushed to the local registry.
build_and_push_packages() { # [VERSION]
	local pkg="$state/packages" fn version="${1:-$PACKAGE_VERSION}"
	rm -rf "$pkg/configuration" && mkdir -p "$pkg/configuration"
	cp "$release/crossplane.yaml" "$pkg/configuration/" && cp -r "$release/package" "$pkg/configuration/"
	if [[ "$UP_NAMESPACE_MODE" != Shared || "$NODES" == 1 ]]; then
		with_settings "$pkg/configuration/package/modelcachehydrations/composition.yaml" HydrationSettings
	fi
	if [[ "$UP_NAMESPACE_MODE" != Shared ]]; then
		with_settings "$pkg/configuration/package/modelreplicas/composition.yaml" ReplicaSettings
	fi
	"$CROSSPLANE" xpkg build --package-root "$pkg/configuration" --examples-root "$pkg/configuration/examples" \
		--package-file "$pkg/modelplane-model-cache.xpkg" >/dev/null
	"$CROSSPLANE" xpkg push -f "$pkg/modelplane-model-cache.xpkg" \
		"127.0.0.1:$REGISTRY_PORT/$PACKAGE_PATH/modelplane-model-cache:$version" >/dev/null
	for fn in "${FUNCTIONS[@]}"; do
		"$CROSSPLANE" xpkg build --package-root "$release/functions/$fn/package" \
			--examples-root "$release/functions/$fn/package/examples" --package-file "$pkg/$fn.xpkg" >/dev/null
		"$CROSSPLANE" xpkg push -f "$pkg/$fn.xpkg" "127.0.0.1:$REGISTRY_PORT/$PACKAGE_PATH/$fn:$version" >/dev/null
	done
}

# start_functions: our three function servers, from the release's bundles,
# over mutual TLS, with the Node flags and allocator settings its image sets
# (functions/<name>/node-options and glibc-tunables).
start_functions() {
	local i
	for i in "${!FUNCTIONS[@]}"; do
		start "${FUNCTIONS[$i]}" env TLS_SERVER_CERTS_DIR="$state/function-server" \
			NODE_OPTIONS="$(node "$release/scripts/node-options.mjs" "${FUNCTIONS[$i]}")" \
			GLIBC_TUNABLES="$(node "$release/scripts/node-options.mjs" --glibc-tunables "${FUNCTIONS[$i]}")" \
			node "$release/functions/${FUNCTIONS[$i]}/dist/main.js" --address "127.0.0.1:${FUNCTION_PORTS[$i]}"
	done
	for i in "${!FUNCTIONS[@]}"; do
		wait_for "${FUNCTIONS[$i]} on :${FUNCTION_PORTS[$i]}" 60 port_taken "${FUNCTION_PORTS[$i]}"
	done
}

# with_settings COMPOSITION KIND: give the Composition's one function step an
# input of KIND with workloadNamespace (the packaged ones have no input, and
# end with that step's functionRef); with nodes, HydrationSettings also send
# the downloads to the plane's hub (network.hfEndpoint), and on clusters
# labelled for it take the pip path: install.pip with the plane's index. No
# image is named there, so the settings pick the stock Python image
# (STOCK_PYTHON_IMAGE), as a platform that only asks for pip gets it.
with_settings() {
	local file="$1" kind="$2"
	tail -n 1 "$file" | grep -Eq '^        name: modelplane-compose-model-[a-z-]+$' ||
		{ echo "$file does not end with its step's functionRef; cannot add $kind" >&2; return 1; }
	printf '      input:\n        apiVersion: fn.modelplane.ai/v1alpha1\n        kind: %s\n        workloadNamespace: %s\n' \
		"$kind" "$UP_NAMESPACE_MODE" >>"$file"
	if [[ "$kind" == HydrationSettings && "$NODES" == 1 ]]; then
		printf '        network:\n          hfEndpoint: %s\n' "$HUB_ENDPOINT" >>"$file"
		# The OCI resolver's publisher: the kubectl this plane builds (images/oci-tools/);
		# PUBLISHER_IMAGE, the default, is a kubectl release not built here.
		printf '        images:\n          publisher: registry.k8s.io/kubectl:%s\n' "$KUBERNETES_VERSION" >>"$file"
		printf '        clusters:\n          - clusterSelector:\n              matchLabels:\n                %s: %s\n            install:\n              pip: true\n              indexUrl: %s\n' \
			"$PIP_CLUSTER_LABEL_KEY" "$PIP_CLUSTER_LABEL_VALUE" "$PYPI_INDEX_URL" >>"$file"
	fi
}

# run_function NAME ENDPOINT: play the package runtime's part for Function
# NAME. Crossplane runs with the External runtime: it installs the package
# (metadata, capabilities) but starts nothing, and waits for whoever runs the
# function to say where it listens and that it is healthy. That is: the
# revision's server TLS Secret (the certificate Crossplane's client trusts,
# from our one CA), its status.endpoint, and a RuntimeHealthy condition.
active_revisions() { # NAME: the Function's revisions whose desired state is Active, or fail
	local names
	names="$("$KUBECTL" get functionrevisions -l "pkg.crossplane.io/package=$1" \
		-o jsonpath='{.items[?(@.spec.desiredState=="Active")].metadata.name}')" && [[ -n "$names" ]] && echo "$names"
}
run_function() {
	local name="$1" endpoint="$2" revision now
	# The active revision (after an upgrade the package has two). The package manager can list a new
	# revision a moment before it says it is the active one: wait for that, not for any revision.
	wait_for "the active revision of Function $name" 60 active_revisions "$name"
	revision="$(active_revisions "$name")"
	[[ -n "$revision" && "$revision" != *" "* ]] || {
		echo "Function $name has no one active revision: '$revision'" >&2
		return 1
	}
	"$KUBECTL" -n crossplane-system create secret generic "$name-tls-server" \
		--from-file=tls.crt="$state/function-server/tls.crt" --from-file=tls.key="$state/function-server/tls.key" \
		--from-file=ca.crt="$state/function-server/ca.crt" --dry-run=client -o yaml | "$KUBECTL" apply -f - >/dev/null
	now="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
	"$KUBECTL" patch functionrevision "$revision" --subresource status --type merge -p "{\"status\":{
		\"endpoint\":\"$endpoint\",\"tlsServerSecretName\":\"$name-tls-server\",
		\"conditions\":[{\"type\":\"RuntimeHealthy\",\"status\":\"True\",\"reason\":\"HealthyPackageRevision\",\"lastTransitionTime\":\"$now\"}]}}" >/dev/null
}

print_usage() {
	cat <<USAGE

The local control plane is up. Use it with:

  export KUBECONFIG=$state/kubeconfigs/control-plane

Workload clusters (the InferenceClusters' provider configs point at them):
$(for name in "${WORKLOAD_CLUSTERS[@]}"; do echo "  kubectl --kubeconfig $state/kubeconfigs/$name ..."; done)

Logs: $state/logs/. Stop everything with \`make down\`.
USAGE
}
