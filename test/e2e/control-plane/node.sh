#!/usr/bin/env bash
# One real node for one workload cluster of `make up`:
# what a one-node cluster runs besides its API server, every piece a pinned
# upstream build from `make tools`.
#
#   host:              kube-scheduler, kube-controller-manager (its default
#                      controllers: Job, volume binding, service accounts, the
#                      root CA publisher, TTL, GC, resource claims, ...),
#                      local-path-provisioner, dra-example-driver's kubelet
#                      plugin (eight fake GPUs under each of two driver names,
#                      DeviceClasses gpu.example.com and gpu.nvidia.com),
#                      the LeaderWorkerSet controller (its CRD and webhooks)
#   network namespace  containerd (runc), the kubelet, kube-proxy (iptables),
#   mp-NAME:           the CNI bridge mpbr0 and its pods
#
#   node.sh images            the node's images (pause, busybox), made offline, pushed to the registry
#   node.sh up NAME INDEX     start NAME's node (INDEX 0..9 picks its addresses)
#   node.sh down NAME INDEX   stop it: pods, containers, mounts, netns, cgroups, processes
#   node.sh restart NAME INDEX kubelet|containerd   stop one; its supervisor starts it
#                             again 2 s later, as systemd does: the pods run on
#
# Each node has a network namespace of its own, joined to the host by a veth
# pair, so that three kube-proxies (whose iptables chains have fixed names)
# and three kubelets (port 10250) don't collide, and a pod reaches the plane
# at one address from every cluster: NODE_PLANE_ADDRESS (common.sh), where
# the API servers and the registry listen (on every address, with nodes on).
# Only the network is the node's own: mounts are the host's, so the files a
# pod writes to a claim are under nodes/NAME/volumes/ on the host.
#
# The environment (up.sh's; node-check.sh sets it for a throwaway API server):
#   MODELPLANE_UP_DIR   the plane's state (logs/; nodes/NAME/ is this node's)
#   NODE_API_PORT       NAME's API server port
#   NODE_CERTS          a directory with the plane's ca.crt, ca.key and sa.key
#   NODE_REGISTRY_PORT  the registry's port (images are pushed by node.sh images)
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
# shellcheck source=common.sh
source "$repo/test/e2e/control-plane/common.sh"

node_say() { printf '[node %s] %s\n' "${name:-images}" "$*" >&2; }

# The images every node needs, named as upstream names them (containerd
# resolves those registries through the plane's registry, see mirrors below):
# the sandbox's pause (our own, tools/images/pause) and busybox (Debian's
# busybox-static), which the provisioner's helper pods run.
PAUSE_IMAGE=registry.k8s.io/pause:3.10.1
BUSYBOX_IMAGE=docker.io/library/busybox:1.35.0
# The registries containerd asks the plane's registry for, each under a path
# of its own there: docker.io/library/python:3.11-slim is
# 127.0.0.1:$REGISTRY_PORT/docker.io/library/python:3.11-slim.
MIRRORED_REGISTRIES=(docker.io registry.k8s.io xpkg.upbound.io ghcr.io quay.io gcr.io)

# layer_tar DIR TAR: a reproducible layer (sorted, root-owned, mtime 0).
layer_tar() { tar -C "$1" --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -cf "$2" .; }

# push_image REF TAR MUTATE_FLAG...: a one-layer image from TAR, pushed to the
# plane's registry under REF's registry path, for this platform, with crane
# mutate's MUTATE_FLAGs (its entrypoint or command).
push_image() {
	local ref="$1" tar="$2" target log="$state/node-images/push.log"
	shift 2
	target="127.0.0.1:$NODE_REGISTRY_PORT/$ref"
	if ! { "$CRANE" append --oci-empty-base -f "$tar" -t "$target" &&
		"$CRANE" mutate "$target" --set-platform "linux/$(go env GOARCH)" -e PATH=/usr/local/bin:/usr/bin:/bin \
			"$@" -t "$target"; } >>"$log" 2>&1; then
		node_say "pushing $ref to the registry failed; the end of $log:"
		tail -n 5 "$log" >&2
		return 1
	fi
}

images() {
	local dir="$state/node-images" t0=$SECONDS
	rm -rf "$dir" && mkdir -p "$dir/pause" "$dir/busybox"/{bin,etc,tmp,proc,sys,dev,data}
	(cd "$repo/tools/images/pause" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$dir/pause/pause" .)
	layer_tar "$dir/pause" "$dir/pause.tar"
	push_image "$PAUSE_IMAGE" "$dir/pause.tar" --entrypoint /pause
	local busybox=/bin/busybox applet
	cp "$busybox" "$dir/busybox/bin/busybox"
	for applet in $("$busybox" --list); do
		[[ "$applet" == busybox ]] || ln -sf busybox "$dir/busybox/bin/$applet"
	done
	chmod 1777 "$dir/busybox/tmp"
	printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n' >"$dir/busybox/etc/passwd"
	printf 'root:x:0:\nnobody:x:65534:\n' >"$dir/busybox/etc/group"
	layer_tar "$dir/busybox" "$dir/busybox.tar"
	push_image "$BUSYBOX_IMAGE" "$dir/busybox.tar" --cmd sh
	node_say "images $PAUSE_IMAGE and $BUSYBOX_IMAGE in the registry (:$NODE_REGISTRY_PORT) in $((SECONDS - t0)) s"
}

# Everything below is per node: NAME and INDEX.
setup_node_vars() {
	name="$1" index="$2"
	[[ "$index" =~ ^[0-9]$ ]] || { echo "node.sh: INDEX is a digit, 0 to 9 (got \"$index\")" >&2; exit 2; }
	node="$name-node"
	dir="$state/nodes/$name"
	netns="mp-$name"
	host_if="mpv$index" # the host's end of the veth pair; the node's is eth0
	host_ip="10.209.$index.1" node_ip="10.209.$index.2"
	pod_cidr="10.244.$index.0/24"
	cgroup_root="/modelplane-$name"
	# A unix socket's path has at most 107 bytes: in a checkout whose path is
	# long, the sockets go under a short directory of their own (removed at
	# down). containerd adds .ttrpc to its own; the kubelet's root holds
	# pod-resources/<n>, and the DRA drivers' registration and plugin sockets.
	short_dir="/run/modelplane-nodes/$(printf %s "$dir" | sha256sum | cut -c1-12)"
	sock="$dir/containerd/containerd.sock"
	((${#sock} <= 100)) || sock="$short_dir/containerd.sock"
	kubelet_dir="$dir/kubelet"
	((${#kubelet_dir} <= 60)) || kubelet_dir="$short_dir/kubelet"
	api_host="https://127.0.0.1:$NODE_API_PORT"        # from the host
	api_node="https://$NODE_PLANE_ADDRESS:$NODE_API_PORT" # from the node's namespace
	ctr=("$CONTAINERD_BIN/ctr" --address "$sock" --namespace k8s.io)
}

# nstart COMPONENT [--daemon] COMMAND...: in its own session (its pid is its
# process group), logged to logs/NAME-COMPONENT.log. --daemon: one of the
# node's own daemons (containerd, the kubelet, kube-proxy), run in the node's
# network namespace and started again 2 s after it exits, as systemd does on
# a real node (Restart=always): a kubelet that starts while containerd is
# down exits, and comes back.
nstart() {
	local component="$1"
	shift
	if [[ "$1" == --daemon ]]; then
		shift
		setsid bash -c 'while :; do "$@"; echo "[node.sh] exited with $?; starting again in 2 s"; sleep 2; done' \
			"$component" nsenter "--net=/run/netns/$netns" -- "$@" >>"$state/logs/$name-$component.log" 2>&1 </dev/null &
	else
		setsid "$@" >>"$state/logs/$name-$component.log" 2>&1 </dev/null &
	fi
	echo "$! $component" >>"$dir/pids"
}

# node_alive: fail naming the first component of this node that has exited.
node_alive() {
	local pid component
	while read -r pid component; do
		if ! running "$pid"; then
			node_say "$component exited; the end of $state/logs/$name-$component.log:"
			tail -n 20 "$state/logs/$name-$component.log" >&2
			return 1
		fi
	done <"$dir/pids"
}

nwait() { # WHAT SECONDS COMMAND...
	local what="$1" seconds="$2" deadline=$((SECONDS + $2))
	shift 2
	until "$@" >/dev/null 2>&1; do
		if ((SECONDS >= deadline)); then
			node_say "$what: not within $seconds s; the end of $state/logs/$name-kubelet.log:"
			tail -n 10 "$state/logs/$name-kubelet.log" >&2
			return 1
		fi
		node_alive
		sleep 0.5
	done
}

k() { "$KUBECTL" --kubeconfig "$dir/admin.kubeconfig" "$@"; }

node_kubeconfig() { # FILE SERVER CERT_NAME
	cat >"$1" <<KUBECONFIG
apiVersion: v1
kind: Config
clusters: [{name: $name, cluster: {server: "$2", certificate-authority: $NODE_CERTS/ca.crt}}]
users: [{name: $3, user: {client-certificate: $dir/certs/$3.crt, client-key: $dir/certs/$3.key}}]
contexts: [{name: $name, context: {cluster: $name, user: $3}}]
current-context: $name
KUBECONFIG
}

node_certs() {
	local c="$dir/certs" who subject
	mkdir -p "$c"
	# The identities a real cluster gives its node components: each one is
	# bound by the API server's bootstrap RBAC (or its Node authorizer).
	for who in admin kubelet kube-proxy kube-scheduler kube-controller-manager dra-driver coredns lws; do
		case "$who" in
		admin) subject="/O=system:masters/CN=modelplane-node-admin" ;;
		kubelet) subject="/O=system:nodes/CN=system:node:$node" ;;
		# The DRA driver's own user, bound below to what upstream's chart grants it.
		dra-driver) subject="/CN=modelplane:dra-driver:$node" ;;
		# CoreDNS's own user, bound below to what kubeadm grants its ServiceAccount.
		coredns) subject="/CN=modelplane:coredns:$node" ;;
		# The LeaderWorkerSet manager's own user, bound below to upstream's ClusterRole for it.
		lws) subject="/CN=modelplane:lws-manager:$node" ;;
		*) subject="/CN=system:$who" ;;
		esac
		openssl_quiet req -newkey rsa:2048 -nodes -subj "$subject" -keyout "$c/$who.key" -out "$c/$who.csr"
		printf 'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n' >"$c/$who.ext"
		openssl_quiet x509 -req -in "$c/$who.csr" -CA "$NODE_CERTS/ca.crt" -CAkey "$NODE_CERTS/ca.key" \
			-CAcreateserial -CAserial "$c/ca.srl" -days 30 -extfile "$c/$who.ext" -out "$c/$who.crt"
	done
	node_kubeconfig "$dir/admin.kubeconfig" "$api_host" admin
	node_kubeconfig "$dir/kube-scheduler.kubeconfig" "$api_host" kube-scheduler
	node_kubeconfig "$dir/kube-controller-manager.kubeconfig" "$api_host" kube-controller-manager
	node_kubeconfig "$dir/kubelet.kubeconfig" "$api_node" kubelet
	node_kubeconfig "$dir/kube-proxy.kubeconfig" "$api_node" kube-proxy
	node_kubeconfig "$dir/dra-driver.kubeconfig" "$api_host" dra-driver
	node_kubeconfig "$dir/coredns.kubeconfig" "$api_host" coredns
	node_kubeconfig "$dir/lws.kubeconfig" "$api_host" lws
}

# The node's network: its namespace, a veth pair to the host, a route from
# the host to its pods; the plane's address on the host for every node.
node_network() {
	# What the nodes share on the host, one node at a time (up.sh starts them
	# side by side): the plane's address on lo (this kernel has no dummy
	# links), local to the host and reached by every node through its veth,
	# and /run/netns, which the first `ip netns add` mounts.
	{
		flock 9
		ip -4 -o addr show dev lo | grep -q " $NODE_PLANE_ADDRESS/" || ip addr add "$NODE_PLANE_ADDRESS/32" dev lo
		ip netns add "$netns"
	} 9>"$state/nodes/.host-network.lock"
	ip link add "$host_if" type veth peer name eth0 netns "$netns"
	ip addr add "$host_ip/24" dev "$host_if"
	ip link set "$host_if" up
	ip -n "$netns" addr add "$node_ip/24" dev eth0
	ip -n "$netns" link set lo up
	ip -n "$netns" link set eth0 up
	ip -n "$netns" route add default via "$host_ip"
	ip route add "$pod_cidr" via "$node_ip" dev "$host_if"
	# The node routes for its pods (the bridge plugin turns it on too).
	ip netns exec "$netns" sysctl -qw net.ipv4.ip_forward=1
}

node_containerd() {
	local c="$dir/containerd" registry
	mkdir -p "$c"/{root,state,certs.d,cni} "$dir/cni-ipam" "$(dirname "$sock")"
	# containerd 2.x's configuration (version 3), ours in full: its paths, the
	# sandbox image, the CNI plugins, runc's own root, and the mirrors.
	cat >"$c/config.toml" <<TOML
version = 3
root = '$c/root'
state = '$c/state'

[grpc]
  address = '$sock'

[ttrpc]
  address = '$sock.ttrpc'

[debug]
  address = ''

[metrics]
  address = ''

[plugins.'io.containerd.cri.v1.images']
  snapshotter = 'overlayfs'
  [plugins.'io.containerd.cri.v1.images'.pinned_images]
    sandbox = '$PAUSE_IMAGE'
  [plugins.'io.containerd.cri.v1.images'.registry]
    config_path = '$c/certs.d'

[plugins.'io.containerd.cri.v1.runtime']
  # The VM's agent drops CAP_SYS_RESOURCE from every process, so no one here
  # may lower an oom_score_adj: without this every sandbox fails in runc with
  # "can't get final child's PID from pipe: EOF".
  restrict_oom_score_adj = true
  # Sandboxes' network namespaces under state/, where down finds them.
  netns_mounts_under_state_dir = true
  # The DRA driver's devices reach a container as CDI edits (its env, here).
  enable_cdi = true
  cdi_spec_dirs = ['$dir/cdi']
  [plugins.'io.containerd.cri.v1.runtime'.containerd]
    default_runtime_name = 'runc'
    [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
      runtime_type = 'io.containerd.runc.v2'
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
        BinaryName = '$(command -v runc)'
        Root = '$c/runc'
        SystemdCgroup = false
  [plugins.'io.containerd.cri.v1.runtime'.cni]
    bin_dirs = ['$CNI_PLUGINS_BIN']
    conf_dir = '$c/cni'

[plugins.'io.containerd.grpc.v1.cri']
  disable_tcp_service = true

[plugins.'io.containerd.internal.v1.opt']
  path = '$c/opt'

# NRI's socket is one per machine (/var/run/nri): three containerds would share it.
[plugins.'io.containerd.nri.v1.nri']
  disable = true

[plugins.'io.containerd.transfer.v1.local']
  config_path = '$c/certs.d'
TOML
	# Every image from the plane's registry: each upstream registry's images
	# under a path of its own there, and the registry's own names as they are.
	for registry in "${MIRRORED_REGISTRIES[@]}"; do
		mkdir -p "$c/certs.d/$registry"
		cat >"$c/certs.d/$registry/hosts.toml" <<TOML
[host.'http://$NODE_PLANE_ADDRESS:$NODE_REGISTRY_PORT/v2/$registry']
  capabilities = ['pull', 'resolve']
  override_path = true
TOML
	done
	# And by the plane's address, the name a pod (the OCI resolver's crane) reaches it by.
	for registry in "127.0.0.1:$NODE_REGISTRY_PORT" "localhost:$NODE_REGISTRY_PORT" "$NODE_PLANE_ADDRESS:$NODE_REGISTRY_PORT"; do
		mkdir -p "$c/certs.d/$registry"
		printf "server = 'http://%s:%s'\n" "$NODE_PLANE_ADDRESS" "$NODE_REGISTRY_PORT" >"$c/certs.d/$registry/hosts.toml"
	done
	# Pod networking: a bridge with host-local addresses, NAT to the host
	# (ipMasq), hostPort; containerd adds loopback itself.
	cat >"$c/cni/10-modelplane.conflist" <<JSON
{"cniVersion": "1.0.0", "name": "modelplane", "plugins": [
  {"type": "bridge", "bridge": "mpbr0", "isGateway": true, "ipMasq": true, "hairpinMode": true,
   "ipam": {"type": "host-local", "ranges": [[{"subnet": "$pod_cidr"}]], "routes": [{"dst": "0.0.0.0/0"}],
            "dataDir": "$dir/cni-ipam"}},
  {"type": "portmap", "capabilities": {"portMappings": true}}]}
JSON
	# containerd finds its shim on PATH.
	nstart containerd --daemon env PATH="$CONTAINERD_BIN:$PATH" "$CONTAINERD_BIN/containerd" --config "$c/config.toml"
	nwait "containerd" 60 containerd_up
}

# The kubelet's cgroupRoot in every cgroup v1 hierarchy (cpuset's with its
# cpus and mems filled in: v1 does not inherit them).
node_cgroups() {
	local h
	for h in /sys/fs/cgroup/*/; do
		[[ "$h" == */unified/ ]] && continue
		mkdir -p "$h$cgroup_root"
		if [[ -f "${h}cpuset.cpus" ]]; then
			cat "${h}cpuset.cpus" >"$h$cgroup_root/cpuset.cpus"
			cat "${h}cpuset.mems" >"$h$cgroup_root/cpuset.mems"
		fi
	done
}

node_kubelet() {
	mkdir -p "$kubelet_dir" "$dir/pod-logs"
	# cgroup v1 only on this machine: failCgroupV1 false, the cgroupfs driver.
	cat >"$dir/kubelet-config.yaml" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupRoot: $cgroup_root
containerRuntimeEndpoint: unix://$sock
healthzBindAddress: 127.0.0.1
readOnlyPort: 0
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $NODE_CERTS/ca.crt}
authorization: {mode: Webhook}
failSwapOn: false
resolvConf: /etc/resolv.conf
clusterDNS: [$CLUSTER_DNS_IP]
clusterDomain: cluster.local
podLogsDir: $dir/pod-logs
# A machine shared with a build: evict only when it is nearly full.
evictionHard: {memory.available: 100Mi, nodefs.available: 2%, imagefs.available: 2%}
imageGCHighThresholdPercent: 99
imageGCLowThresholdPercent: 98
YAML
	nstart kubelet --daemon "$KUBELET" --config "$dir/kubelet-config.yaml" --kubeconfig "$dir/kubelet.kubeconfig" \
		--root-dir "$kubelet_dir" --cert-dir "$kubelet_dir/pki" --hostname-override "$node" --node-ip "$node_ip" -v 1
}

node_proxy() {
	cat >"$dir/kube-proxy-config.yaml" <<YAML
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: $dir/kube-proxy.kubeconfig}
hostnameOverride: $node
mode: iptables
clusterCIDR: $pod_cidr
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
# The namespace's conntrack table is the kernel's: leave its sizes alone.
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
YAML
	nstart kube-proxy --daemon "$KUBE_PROXY" --config "$dir/kube-proxy-config.yaml"
}

node_control() {
	nstart kube-scheduler "$KUBE_SCHEDULER" --kubeconfig "$dir/kube-scheduler.kubeconfig" \
		--authentication-kubeconfig "$dir/kube-scheduler.kubeconfig" --authorization-kubeconfig "$dir/kube-scheduler.kubeconfig" \
		--leader-elect=false --secure-port 0
	nstart kube-controller-manager "$KUBE_CONTROLLER_MANAGER" --kubeconfig "$dir/kube-controller-manager.kubeconfig" \
		--authentication-kubeconfig "$dir/kube-controller-manager.kubeconfig" \
		--authorization-kubeconfig "$dir/kube-controller-manager.kubeconfig" \
		--leader-elect=false --secure-port 0 --use-service-account-credentials --cluster-name "$name" \
		--service-account-private-key-file "$NODE_CERTS/sa.key" --root-ca-file "$NODE_CERTS/ca.crt" \
		--cluster-signing-cert-file "$NODE_CERTS/ca.crt" --cluster-signing-key-file "$NODE_CERTS/ca.key"
}

# CoreDNS (COREDNS_VERSION), the cluster's DNS, as a process on the host
# listening on the host's end of the node's veth, behind the kube-dns Service
# at the address kubeadm gives it (the kubelet's clusterDNS): a pod's lookup
# goes through kube-proxy's rules as on a real cluster. Its Corefile is
# kubeadm's but for the plugins a node here needs (tools/build.sh coredns);
# its identity a user of its own with kubeadm's ClusterRole system:coredns.
CLUSTER_DNS_IP=10.96.0.10
COREDNS_READY_BASE_PORT=19490
node_dns() {
	local ready=$((COREDNS_READY_BASE_PORT + index))
	cat >"$dir/Corefile" <<COREFILE
.:53 {
    bind $host_ip
    errors
    ready 127.0.0.1:$ready
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        kubeconfig $dir/coredns.kubeconfig
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
        ttl 30
    }
    forward . /etc/resolv.conf {
        max_concurrent 1000
    }
    cache 30 {
        disable success cluster.local
        disable denial cluster.local
    }
}
COREFILE
	k apply -f - >/dev/null <<YAML
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: "system:coredns"}
rules:
- {apiGroups: [""], resources: [endpoints, services, pods, namespaces], verbs: [list, watch]}
- {apiGroups: [discovery.k8s.io], resources: [endpointslices], verbs: [list, watch]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "system:coredns"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "system:coredns"}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: "modelplane:coredns:$node"}]
---
apiVersion: v1
kind: Service
metadata: {name: kube-dns, namespace: kube-system, labels: {k8s-app: kube-dns}}
spec:
  clusterIP: $CLUSTER_DNS_IP
  ports: [{name: dns, port: 53, protocol: UDP}, {name: dns-tcp, port: 53, protocol: TCP}]
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: kube-dns-$node
  namespace: kube-system
  labels: {kubernetes.io/service-name: kube-dns, endpointslice.kubernetes.io/managed-by: node.sh.modelplane.ai}
addressType: IPv4
endpoints: [{addresses: [$host_ip], conditions: {ready: true}}]
ports: [{name: dns, port: 53, protocol: UDP}, {name: dns-tcp, port: 53, protocol: TCP}]
YAML
	nstart coredns "$COREDNS" -conf "$dir/Corefile"
	nwait "CoreDNS ready on $host_ip:53" 60 curl -fsS "http://127.0.0.1:$ready/ready"
}

# rancher's local-path-provisioner, as a process on the host (as the plane
# runs its other controllers): its configuration from its ConfigMap, as
# upstream deploys it. Two classes: modelplane-rwx (the default, Immediate,
# any access mode: sharedFileSystemPath, which a one-node cluster is) and
# local-path (ReadWriteOnce, bound where the first pod lands).
node_provisioner() {
	mkdir -p "$dir/volumes/shared" "$dir/volumes/local"
	k apply -f - >/dev/null <<YAML
apiVersion: v1
kind: Namespace
metadata: {name: local-path-storage}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: local-path-provisioner-service-account, namespace: local-path-storage}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: local-path-config, namespace: local-path-storage}
data:
  config.json: |-
    {"storageClassConfigs": {
      "modelplane-rwx": {"sharedFileSystemPath": "$dir/volumes/shared"},
      "local-path": {"nodePathMap": [{"node": "DEFAULT_PATH_FOR_NON_LISTED_NODES", "paths": ["$dir/volumes/local"]}]}}}
  setup: |-
    #!/bin/sh
    set -eu
    mkdir -m 0777 -p "\$VOL_DIR"
  teardown: |-
    #!/bin/sh
    set -eu
    rm -rf "\$VOL_DIR"
  helperPod.yaml: |-
    apiVersion: v1
    kind: Pod
    metadata: {name: helper-pod}
    spec:
      priorityClassName: system-node-critical
      tolerations: [{key: node.kubernetes.io/disk-pressure, operator: Exists, effect: NoSchedule}]
      containers: [{name: helper-pod, image: $BUSYBOX_IMAGE, imagePullPolicy: IfNotPresent}]
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: modelplane-rwx
  annotations: {storageclass.kubernetes.io/is-default-class: "true"}
provisioner: rancher.io/local-path
volumeBindingMode: Immediate
reclaimPolicy: Delete
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: local-path}
provisioner: rancher.io/local-path
volumeBindingMode: WaitForFirstConsumer
reclaimPolicy: Delete
YAML
	nstart local-path-provisioner "$LOCAL_PATH_PROVISIONER" start --kubeconfig "$dir/admin.kubeconfig" \
		--namespace local-path-storage --service-account-name local-path-provisioner-service-account \
		--configmap-name local-path-config --helper-image "$BUSYBOX_IMAGE"
}

# kubernetes-sigs' dra-example-driver, as processes on the host: its kubelet
# plugin registers with this node's kubelet (under the kubelet's root dir),
# publishes eight fake GPUs in a ResourceSlice and, for a pod's claim, writes
# the CDI spec containerd applies (GPU_DEVICE_<n> in the container's env).
# Twice, under two driver names (its --driver-name): gpu.example.com, its own,
# and gpu.nvidia.com, the name NVIDIA's driver publishes and our examples ask
# for (the walkthrough's replica selects on capacity["gpu.nvidia.com"].memory:
# the driver's 80Gi under that name). The same fake devices either way.
# What upstream's Helm chart deploys around it: its ClusterRole, bound to
# this node's driver user, and a DeviceClass of each name.
DRA_DRIVER_NAMES=(gpu.example.com gpu.nvidia.com)
node_dra() {
	local driver
	mkdir -p "$dir/cdi"
	k apply -f - >/dev/null <<YAML
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: modelplane-dra-example-driver}
rules:
- {apiGroups: [resource.k8s.io], resources: [resourceclaims], verbs: [get, list, watch]}
- {apiGroups: [resource.k8s.io], resources: [resourceclaims/status], verbs: [update]}
- {apiGroups: [""], resources: [nodes], verbs: [get]}
- {apiGroups: [resource.k8s.io], resources: [resourceslices], verbs: [get, list, watch, create, update, patch, delete]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: modelplane-dra-example-driver}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: modelplane-dra-example-driver}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: "modelplane:dra-driver:$node"}]
YAML
	for driver in "${DRA_DRIVER_NAMES[@]}"; do
		k apply -f - >/dev/null <<YAML
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: $driver}
spec:
  selectors: [{cel: {expression: "device.driver == '$driver'"}}]
YAML
		nstart "dra-driver-$driver" env NODE_NAME="$node" KUBECONFIG="$dir/dra-driver.kubeconfig" CDI_ROOT="$dir/cdi" NUM_DEVICES=8 \
			DRIVER_NAME="$driver" KUBELET_REGISTRAR_DIRECTORY_PATH="$kubelet_dir/plugins_registry" \
			KUBELET_PLUGINS_DIRECTORY_PATH="$kubelet_dir/plugins" "$DRA_EXAMPLE_KUBELETPLUGIN"
	done
	nwait "the DRA drivers' devices" 60 dra_devices
}

# webhook_cert DIR: tls.crt and tls.key for a webhook server on 127.0.0.1,
# signed by the plane's CA (which the API server is told to trust for it).
webhook_cert() {
	local c="$1"
	mkdir -p "$c"
	openssl_quiet req -newkey rsa:2048 -nodes -subj /CN=127.0.0.1 -keyout "$c/tls.key" -out "$c/tls.csr"
	printf 'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1\n' >"$c/tls.ext"
	openssl_quiet x509 -req -in "$c/tls.csr" -CA "$NODE_CERTS/ca.crt" -CAkey "$NODE_CERTS/ca.key" \
		-CAcreateserial -CAserial "$c/ca.srl" -days 30 -extfile "$c/tls.ext" -out "$c/tls.crt"
}

# crds_established DIR: every CRD in DIR served. `kubectl wait` fails at once,
# not waits, on a CRD created so recently it has no conditions yet (".status.
# conditions accessor error"), so it is retried.
crds_established() {
	nwait "the CRDs in $1 Established" 60 k wait --for=condition=Established --timeout=10s -f "$1"
}

# kubernetes-sigs' LeaderWorkerSet controller (LWS_VERSION), as a process on
# the host: its CRD, its manager with an identity of its own bound to
# upstream's ClusterRole for it (config/rbac/role.yaml, named lws-manager-role
# as upstream's kustomization names it) and its
# webhooks (the LeaderWorkerSet's defaults and checks; the pod webhook that
# gives a group's pods their labels and LWS_* env), served on 127.0.0.1 with
# a certificate from the plane's CA and registered by URL: the API server
# runs on the host too. Upstream's own objectSelector keeps the pod webhooks
# to LeaderWorkerSet pods, so nothing else waits on this process.
LWS_WEBHOOK_BASE_PORT=19440
node_lws() {
	local c="$dir/lws-certs" port=$((LWS_WEBHOOK_BASE_PORT + index)) ca url hook
	webhook_cert "$c"
	k apply --server-side -f "$LWS_CRDS" >/dev/null
	# Served before the manager starts, which otherwise logs the kind as missing once.
	crds_established "$LWS_CRDS"
	{
		sed 's/^  name: manager-role$/  name: lws-manager-role/' "$LWS_MANAGER_ROLE"
		cat <<YAML
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: lws-manager-rolebinding}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: lws-manager-role}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: "modelplane:lws-manager:$node"}]
YAML
	} | k apply -f - >/dev/null
	cat >"$dir/lws-config.yaml" <<YAML
apiVersion: config.lws.x-k8s.io/v1alpha1
kind: Configuration
leaderElection: {leaderElect: false}
internalCertManagement: {enable: false}
webhook: {host: 127.0.0.1, port: $port, certDir: $c}
metrics: {bindAddress: "0"}
health: {healthProbeBindAddress: "0"}
YAML
	nstart lws "$LWS_MANAGER" --config "$dir/lws-config.yaml" --kubeconfig "$dir/lws.kubeconfig"
	nwait "the LeaderWorkerSet webhooks on :$port" 60 port_taken "$port"
	ca="$(base64 -w0 <"$NODE_CERTS/ca.crt")" url="https://127.0.0.1:$port"
	hook() { # NAME PATH GROUP RESOURCE OPERATIONS [pods: the objectSelector]
		printf -- '- name: %s\n  admissionReviewVersions: [v1]\n  sideEffects: None\n  failurePolicy: Fail\n' "$1"
		printf '  clientConfig: {url: "%s%s", caBundle: %s}\n' "$url" "$2" "$ca"
		printf '  rules: [{apiGroups: ["%s"], apiVersions: [v1], operations: [%s], resources: [%s]}]\n' "$3" "$5" "$4"
		[[ "$4" != pods ]] || printf '  objectSelector: {matchExpressions: [{key: leaderworkerset.sigs.k8s.io/name, operator: Exists}]}\n'
	}
	{
		printf 'apiVersion: admissionregistration.k8s.io/v1\nkind: MutatingWebhookConfiguration\nmetadata: {name: lws-mutating-webhook-configuration}\nwebhooks:\n'
		hook mleaderworkerset.kb.io /mutate-leaderworkerset-x-k8s-io-v1-leaderworkerset leaderworkerset.x-k8s.io leaderworkersets "CREATE, UPDATE"
		hook mpod.kb.io /mutate--v1-pod "" pods CREATE
		printf -- '---\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata: {name: lws-validating-webhook-configuration}\nwebhooks:\n'
		hook vleaderworkerset.kb.io /validate-leaderworkerset-x-k8s-io-v1-leaderworkerset leaderworkerset.x-k8s.io leaderworkersets "CREATE, UPDATE"
		hook vpod.kb.io /validate--v1-pod "" pods "CREATE, UPDATE"
	} | k apply -f - >/dev/null
}

# ai-dynamo's Grove operator (GROVE_VERSION), on the first cluster's node
# only, once `make grove` has built it (the module proxy refuses its module:
# tools/versions.env). As LWS above: its CRDs, the operator with the node's
# admin identity, its PodCliqueSet webhooks (defaults, checks) served on
# 127.0.0.1 with a certificate from the plane's CA (certProvisionMode manual)
# and registered by URL. And kube-scheduler once more, under the name
# kai-scheduler that the Dynamo stack's pods ask for: KAI itself (its queues,
# its gang scheduling) stays a stand-in; Grove's own scheduling gates are real.
GROVE_BASE_PORT=19460
node_grove() {
	local c="$dir/grove-certs" port=$((GROVE_BASE_PORT + index)) ca
	webhook_cert "$c"
	k apply --server-side -f "$GROVE_CRDS" >/dev/null
	# Served before the operator starts: its watches don't retry a kind the API server doesn't know yet.
	crds_established "$GROVE_CRDS"
	cat >"$dir/grove-config.yaml" <<YAML
apiVersion: operator.config.grove.io/v1alpha1
kind: OperatorConfiguration
runtimeClientConnection: {qps: 100, burst: 150}
leaderElection: {enabled: false}
server:
  webhooks: {bindAddress: 127.0.0.1, port: $port, serverCertDir: $c, certProvisionMode: manual}
  healthProbes: {bindAddress: 127.0.0.1, port: $((port + 10))}
  metrics: {bindAddress: 127.0.0.1, port: $((port + 20))}
controllers: {podCliqueSet: {concurrentSyncs: 3}, podClique: {concurrentSyncs: 3}, podCliqueScalingGroup: {concurrentSyncs: 2}}
logLevel: info
logFormat: json
YAML
	nstart grove env KUBECONFIG="$dir/admin.kubeconfig" "$GROVE_OPERATOR" --config "$dir/grove-config.yaml"
	nwait "the Grove webhooks on :$port" 60 port_taken "$port"
	ca="$(base64 -w0 <"$NODE_CERTS/ca.crt")"
	grove_hook() { # KIND (Mutating|Validating) WHAT (defaulting|validating) PATH
		printf -- '---\napiVersion: admissionregistration.k8s.io/v1\nkind: %sWebhookConfiguration\n' "$1"
		printf 'metadata: {name: podcliqueset-%s-webhook}\nwebhooks:\n- name: pcs.%s.webhooks.grove.io\n' "$2" "$2"
		printf '  admissionReviewVersions: [v1]\n  sideEffects: None\n  failurePolicy: Fail\n  matchPolicy: Exact\n  timeoutSeconds: 10\n'
		printf '  clientConfig: {url: "https://127.0.0.1:%s%s", caBundle: %s}\n' "$port" "$3" "$ca"
		printf '  rules: [{apiGroups: [grove.io], apiVersions: [v1alpha1], operations: [CREATE, UPDATE], resources: [podcliquesets], scope: Namespaced}]\n'
	}
	{
		grove_hook Mutating defaulting /webhooks/default-podcliqueset
		grove_hook Validating validating /webhooks/validate-podcliqueset
	} | k apply -f - >/dev/null
	cat >"$dir/kai-scheduler.yaml" <<YAML
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection: {kubeconfig: $dir/kube-scheduler.kubeconfig}
leaderElection: {leaderElect: false}
profiles: [{schedulerName: kai-scheduler}]
YAML
	nstart kai-scheduler "$KUBE_SCHEDULER" --config "$dir/kai-scheduler.yaml" --secure-port 0 \
		--authentication-kubeconfig "$dir/kube-scheduler.kubeconfig" --authorization-kubeconfig "$dir/kube-scheduler.kubeconfig"
}

dra_devices() {
	local driver
	for driver in "${DRA_DRIVER_NAMES[@]}"; do
		[[ -n "$(k get resourceslices --field-selector "spec.nodeName=$node,spec.driver=$driver" -o jsonpath='{.items[*].spec.devices[*].name}')" ]] || return 1
	done
}

containerd_up() { "${ctr[@]}" version; }
kubelet_up() { nsenter "--net=/run/netns/$netns" -- curl -fsS http://127.0.0.1:10248/healthz; }

node_ready() {
	[[ "$(k get node "$node" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" == True ]]
}

up() {
	local t0=$SECONDS tool
	for tool in "$KUBELET" "$KUBE_SCHEDULER" "$KUBE_PROXY" "$KUBE_CONTROLLER_MANAGER" "$CONTAINERD_BIN/containerd" \
		"$CNI_PLUGINS_BIN/bridge" "$LOCAL_PATH_PROVISIONER" "$DRA_EXAMPLE_KUBELETPLUGIN" "$LWS_MANAGER" "$COREDNS"; do
		[[ -x "$tool" ]] || { node_say "$tool is missing: run \`make tools\`"; return 1; }
	done
	for tool in runc iptables nsenter; do
		command -v "$tool" >/dev/null || { node_say "$tool is missing: \`make tools\` installs it from Debian, as root"; return 1; }
	done
	((EUID == 0)) || { node_say "a node needs root (network namespaces, mounts, cgroups)"; return 1; }
	if [[ -f "$dir/pids" ]]; then down; fi
	mkdir -p "$dir" "$state/logs" && : >"$dir/pids"
	node_certs
	node_network
	node_cgroups
	node_containerd
	node_control
	node_dns
	node_kubelet
	node_proxy
	nwait "node $node Ready" 120 node_ready
	node_provisioner
	node_dra
	node_lws
	local grove=""
	if [[ -x "$GROVE_OPERATOR" ]] && ((index == 0)); then
		node_grove
		grove=", Grove $GROVE_VERSION"
	fi
	nwait "the default ServiceAccount" 60 k get serviceaccount default
	node_say "node $node Ready ($node_ip, pods $pod_cidr, $(k get resourceslices --field-selector "spec.nodeName=$node" -o jsonpath='{.items[*].spec.devices[*].name}' | wc -w) fake GPUs of ${DRA_DRIVER_NAMES[*]}$grove) in $((SECONDS - t0)) s; containerd $("${ctr[@]}" version 2>/dev/null | awk '/Server/{s=1} s && /Version/{print $2; exit}')"
}

# Stop the kubelet first (it would restart what we stop), then every
# container and sandbox, containerd, the rest; unmount what they mounted;
# the namespace takes its veth, bridge and iptables rules with it.
down() {
	[[ -d "$dir" ]] || return 0
	local pid component
	if [[ -f "$dir/pids" ]]; then
		while read -r pid component; do
			[[ "$component" == containerd ]] && continue
			stop_pid "$pid" || true
		done < <(tac "$dir/pids")
	fi
	if [[ -S "$sock" ]] && "${ctr[@]}" version >/dev/null 2>&1; then
		local task
		for task in $("${ctr[@]}" task ls -q 2>/dev/null); do
			"${ctr[@]}" task kill -s KILL "$task" >/dev/null 2>&1 || true
		done
		for task in $("${ctr[@]}" task ls -q 2>/dev/null); do
			"${ctr[@]}" task delete --force "$task" >/dev/null 2>&1 || true
		done
	fi
	if [[ -f "$dir/pids" ]]; then
		pid="$(awk '$2 == "containerd" {print $1}' "$dir/pids")"
		[[ -z "$pid" ]] || stop_pid "$pid" || true
	fi
	# Shims left behind (containerd stopped first, or killed): theirs, by pid.
	for pid in $(pgrep -f -- "containerd-shim-runc-v2 .*-address $sock( |$)" || true); do
		kill -KILL "$pid" 2>/dev/null || true
	done
	# Sandboxes' network namespaces, volumes, rootfs overlays: deepest first.
	# (grep finds none on a second down: under pipefail that would end it here.)
	{ grep -o -e " $dir/[^ ]*" -e " $short_dir/[^ ]*" /proc/mounts || true; } | sort -ru | while read -r mount; do
		umount "$mount" 2>/dev/null || umount -l "$mount" 2>/dev/null || true
	done
	# Nothing mounted is left under it (a volume there is a bind of the host's): only then remove it.
	grep -q " $short_dir/" /proc/mounts || rm -rf "$short_dir"
	ip netns del "$netns" 2>/dev/null || true
	ip link del "$host_if" 2>/dev/null || true
	if ! ls /run/netns/mp-* >/dev/null 2>&1; then ip addr del "$NODE_PLANE_ADDRESS/32" dev lo 2>/dev/null || true; fi
	local h
	for h in /sys/fs/cgroup/*/; do
		[[ -d "$h${cgroup_root#/}" ]] || continue
		find "$h${cgroup_root#/}" -depth -type d -exec rmdir {} + 2>/dev/null || true
	done
	rm -f "$dir/pids"
	node_say "down"
}

# The daemon stops (SIGTERM, as systemctl restart sends) and its supervisor
# starts it again 2 s later; the pods' containers run on (their shims are
# their own). Done when it answers again and the node is Ready.
restart() {
	local component="$1" supervisor pid
	supervisor="$(awk -v c="$component" '$2 == c {print $1}' "$dir/pids")"
	pid="$(pgrep -P "$supervisor" | head -n 1)"
	[[ -n "$pid" ]] || { node_say "no $component running on this node"; return 1; }
	kill -TERM "$pid"
	while running "$pid"; do sleep 0.2; done
	node_say "$component stopped ($pid); its supervisor starts it again in 2 s"
	sleep 2
	nwait "$component answering" 60 "${component}_up"
	nwait "node $node Ready" 120 node_ready
	node_say "$component restarted ($(pgrep -P "$supervisor" | head -n 1))"
}

case "${1:-}" in
images) images ;;
up | down)
	(($# == 3)) || { echo "usage: node.sh up|down NAME INDEX" >&2; exit 2; }
	setup_node_vars "$2" "$3"
	# A command that fails under set -e ends the script without a word (a
	# kubectl error has no node in it): name it, unless a message said why
	# already (a `return 1` after node_say).
	node_action="$1"
	trap 'rc=$?; ((rc == 0)) || [[ "$BASH_COMMAND" == return* ]] || node_say "node.sh $node_action stopped (status $rc) at: $BASH_COMMAND"' EXIT
	"$1"
	;;
restart)
	(($# == 4)) && [[ "$4" == kubelet || "$4" == containerd ]] ||
		{ echo "usage: node.sh restart NAME INDEX kubelet|containerd" >&2; exit 2; }
	setup_node_vars "$2" "$3"
	restart "$4"
	;;
*)
	sed -n '/^#   node.sh images/,/^#                             again/p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
	exit 2
	;;
esac
