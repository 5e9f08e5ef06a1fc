# Shared by up.sh, down.sh and the e2e tests' launcher: the tools, the ports
# and the small helpers. Sourced, never run.
# shellcheck disable=SC2034 # the variables are read by the scripts that source this
eval "$(bash "$repo/tools/build.sh" env | sed 's/^/export /')"
# shellcheck source=../../../tools/versions.env
source "$repo/tools/versions.env"
state="${MODELPLANE_UP_DIR:-$repo/_output/up}"

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
ALL_PORTS=("$ETCD_PORT" "$ETCD_PEER_PORT" "$CONTROL_PLANE_PORT" "${WORKLOAD_PORTS[@]}" "$CROSSPLANE_WEBHOOK_PORT"
	"$CROSSPLANE_METRICS_PORT" "$CROSSPLANE_HEALTH_PORT" "$PROVIDER_WEBHOOK_PORT" "$PROVIDER_METRICS_PORT"
	"$PROVIDER_HEALTH_PORT" "${FUNCTION_PORTS[@]}")
# How often Crossplane and provider-kubernetes look again. Production keeps
# their defaults (1m and 10m); a local plane wants to see changes quickly.
POLL_INTERVAL="${MODELPLANE_UP_POLL:-5s}"

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

any_running() {
	local pid name
	while read -r pid name; do
		kill -0 "$pid" 2>/dev/null && return 0
	done <"$state/pids"
	return 1
}

# wait_for WHAT SECONDS COMMAND...: until COMMAND succeeds, or fail naming WHAT.
wait_for() {
	local what="$1" deadline=$((SECONDS + $2))
	shift 2
	until "$@" >/dev/null 2>&1; do
		if ((SECONDS >= deadline)); then
			step "$what did not come up within $2 s"
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
		if ! kill -0 "$pid" 2>/dev/null; then
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

# register_function NAME ENDPOINT: the active FunctionRevision Crossplane
# dials for Function NAME. With the External runtime Crossplane starts nothing
# and sets no endpoint; and a Function object would make it fetch the package
# from a registry, which this machine has none of. So the revision is made by
# hand, paused (its reconciler leaves it alone), and its status says where the
# server listens and that it composes.
register_function() {
	local name="$1" endpoint="$2"
	"$KUBECTL" apply -f - >/dev/null <<REVISION
apiVersion: pkg.crossplane.io/v1
kind: FunctionRevision
metadata:
  name: $name-local
  labels:
    pkg.crossplane.io/package: $name
  annotations:
    crossplane.io/paused: "true"
spec:
  desiredState: Active
  image: local/$name:dev
  revision: 1
REVISION
	"$KUBECTL" patch functionrevision "$name-local" --subresource status --type merge \
		-p "{\"status\":{\"endpoint\":\"$endpoint\",\"capabilities\":[\"composition\"]}}" >/dev/null
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
