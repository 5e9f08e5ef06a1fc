#!/usr/bin/env bash
# Build the pinned upstream tools (tools/versions.env) from the Go module
# proxy into a cache outside the clone, once per version:
#
#   $MODELPLANE_TOOLS_CACHE/<tool>-<version>/   (default ~/.cache/modelplane-tools)
#
# A tool whose directory holds a `.built` stamp is reused as it is, so a fresh
# clone on the same machine builds nothing. Each tool is built on its own; a
# failure names the tool and keeps its build log. `tools/build.sh env` prints
# the PATH and file locations the other scripts use.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=versions.env
source "$here/versions.env"
cache="${MODELPLANE_TOOLS_CACHE:-$HOME/.cache/modelplane-tools}"

# Which Crossplane and provider-kubernetes: MODELPLANE_CROSSPLANE (the
# Makefile's CROSSPLANE=oldest|newest) picks the oldest we support (the pins)
# or the newest the module proxy serves (the *_NEWEST_* pins). Up to v2.2 the
# CLI is core's own module (CROSSPLANE_CLI_VERSION = CROSSPLANE_VERSION).
provider_gotoolchain=""
case "${MODELPLANE_CROSSPLANE:-oldest}" in
oldest) CROSSPLANE_CLI_VERSION="$CROSSPLANE_VERSION" ;;
newest)
	CROSSPLANE_VERSION="$CROSSPLANE_NEWEST_VERSION"
	CROSSPLANE_CLI_VERSION="$CROSSPLANE_NEWEST_CLI_VERSION"
	PROVIDER_KUBERNETES_VERSION="$PROVIDER_KUBERNETES_NEWEST_VERSION"
	provider_gotoolchain="$PROVIDER_KUBERNETES_NEWEST_GOTOOLCHAIN"
	;;
*)
	echo "MODELPLANE_CROSSPLANE (make's CROSSPLANE) is \"$MODELPLANE_CROSSPLANE\": say oldest or newest" >&2
	exit 2
	;;
esac
k8s_staging="${KUBERNETES_VERSION/v1./v0.}"

crossplane_dir="$cache/crossplane-$CROSSPLANE_VERSION"
[[ "$CROSSPLANE_CLI_VERSION" == "$CROSSPLANE_VERSION" ]] || crossplane_dir+="-cli-$CROSSPLANE_CLI_VERSION"
provider_dir="$cache/provider-kubernetes-$PROVIDER_KUBERNETES_VERSION"
provider_crds_dir="$cache/provider-kubernetes-crds-$PROVIDER_KUBERNETES_VERSION"
validate_cache_dir="$cache/validate-cache-$CROSSPLANE_VERSION"
crane_dir="$cache/crane-$GO_CONTAINERREGISTRY_VERSION"
workload_crds_dir="$cache/workload-crds-$GATEWAY_API_VERSION-$GATEWAY_API_INFERENCE_EXTENSION_VERSION"
kubernetes_dir="$cache/kubernetes-$KUBERNETES_VERSION"
kubernetes_node_dir="$cache/kubernetes-node-$KUBERNETES_VERSION"
containerd_dir="$cache/containerd-$CONTAINERD_VERSION"
cni_plugins_dir="$cache/cni-plugins-$CNI_PLUGINS_VERSION"
local_path_provisioner_dir="$cache/local-path-provisioner-$LOCAL_PATH_PROVISIONER_VERSION"
dra_example_driver_dir="$cache/dra-example-driver-$DRA_EXAMPLE_DRIVER_VERSION"
# -rbac: the directory holds upstream's ClusterRole for the manager too (a
# cache built before 2026-12-08 lacks it, so it is built again).
lws_dir="$cache/lws-$LWS_VERSION-rbac"
coredns_dir="$cache/coredns-$COREDNS_VERSION"
grove_dir="$cache/grove-$GROVE_VERSION"
RESOLVER_CRANE_VERSION="$(sed -n "s|^export const RESOLVER_IMAGE = '.*:\(v[0-9.]*\)';|\1|p" "$here/../functions/lib/src/settings.ts")"
resolver_crane_dir="$cache/resolver-crane-$RESOLVER_CRANE_VERSION"
# The hub's version is in the directory's name: the wheels it serves are that version's.
hub_version="$(sed -n "s/^export const HUGGINGFACE_HUB_VERSION = '\(.*\)';/\1/p" "$here/../functions/compose-model-cache-hydration/src/huggingface.ts")"
pypiserver_dir="$cache/pypiserver-$PYPISERVER_VERSION-huggingface_hub-$hub_version"
etcd_dir="$cache/etcd-$ETCD_VERSION"
node_dir="$cache/node-$NODE_VERSION"

export GOFLAGS="${GOFLAGS:-} -mod=mod"
export CGO_ENABLED=0

log() { printf '[tools] %s\n' "$*" >&2; }

# module_dir MODULE@VERSION: the module's source in the Go module cache.
module_dir() { go mod download -json "$1" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p'; }

# build NAME DIR FUNCTION: run FUNCTION (which fills DIR/bin) unless DIR is
# stamped; on failure say which tool failed, show the log's tail and stop.
build() {
	local name="$1" dir="$2" fn="$3"
	if [[ -f "$dir/.built" ]]; then
		log "$name: cached in $dir"
		return
	fi
	local start=$SECONDS tmp="$dir.partial" expected
	expected="$(expected_seconds "$name")"
	rm -rf "$tmp" && mkdir -p "$tmp/bin"
	tools_building=$((tools_building + 1))
	log "$name: building${tools_to_build:+ ($tools_building of $tools_to_build)}, usually $(minutes "$expected") cold on two cores, into $dir (log: $tmp/build.log)"
	local status=0 pid
	# set -e holds inside the subshell only when its status is not tested.
	set +e
	(set -e; cd "$tmp" && "$fn" "$tmp") >"$tmp/build.log" 2>&1 &
	pid=$!
	# A heartbeat every 30 s: a cold build is minutes of silence otherwise.
	while ! wait_a_while "$pid" 30; do
		log "$name: still building, $((SECONDS - start)) s so far (usually $(minutes "$expected")); last: $(tail -n 1 "$tmp/build.log" | cut -c1-100)"
	done
	wait "$pid"
	status=$?
	set -e
	if ((status != 0)); then
		log "$name: BUILD FAILED; the last lines of $tmp/build.log:"
		tail -n 25 "$tmp/build.log" >&2
		log "$name: the build of $name failed (see above); nothing else was changed"
		exit 1
	fi
	echo "$((SECONDS - start))" >"$tmp/.seconds"
	touch "$tmp/.built"
	rm -rf "$dir" && mv "$tmp" "$dir"
	tools_left=$((tools_left - expected))
	log "$name: built in $((SECONDS - start)) s${tools_to_build:+; the rest: about $(minutes "$((tools_left > 0 ? tools_left : 0))")}"
}

# wait_a_while PID SECONDS: true once PID has ended, false after SECONDS.
wait_a_while() {
	local i
	for ((i = 0; i < $2; i++)); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 1
	done
	! kill -0 "$1" 2>/dev/null
}

minutes() { if (($1 < 90)); then echo "$1 s"; else echo "$((($1 + 30) / 60)) min"; fi; }

# What a cold build of each tool takes on two cores with an empty Go module
# cache (measured; the estimates `make tools` prints). Unknown tools: a minute.
expected_seconds() {
	case "$1" in
	node | validate-cache | provider-kubernetes-crds | workload-crds) echo 5 ;;
	crossplane) echo 300 ;;
	provider-kubernetes) echo 170 ;;
	crane) echo 30 ;;
	etcd) echo 60 ;;
	kubernetes) echo 420 ;;
	kubernetes-node) echo 300 ;;
	containerd) echo 110 ;;
	cni-plugins) echo 60 ;;
	local-path-provisioner) echo 60 ;;
	dra-example-driver) echo 240 ;;
	lws) echo 150 ;;
	coredns) echo 90 ;;
	grove) echo 110 ;;
	pypiserver) echo 15 ;;
	*) echo 60 ;;
	esac
}

# plan NAME=DIR...: say which tools will be built and about how long it takes.
tools_to_build="" tools_building=0 tools_left=0
plan() {
	local spec names=()
	for spec in "$@"; do
		[[ -f "${spec#*=}/.built" ]] && continue
		names+=("${spec%%=*}")
		tools_left=$((tools_left + $(expected_seconds "${spec%%=*}")))
	done
	if ((${#names[@]} == 0)); then
		log "every tool is built already (cache: $cache)"
		return
	fi
	tools_to_build=${#names[@]}
	log "to build: ${names[*]} (about $(minutes "$tools_left") on two cores, once per machine; cache: $cache)"
}

# throwaway_module NAME MODULE@VERSION: into ./src, a module of its own that
# requires MODULE (the caller writes its Go file, tidies and builds).
throwaway_module() {
	mkdir -p src && cd src
	go mod init "modelplane.local/$1"
	go mod edit -require "$2"
}

# go_module_build OUT MODULE@VERSION LDFLAGS PKG=NAME...: build packages of a
# module from a throwaway module that requires it. (`go install pkg@version`
# asks the proxy for the module's version list to check for deprecations,
# which the proxy here refuses for some modules.)
go_module_build() {
	local out="$1" module="$2" ldflags="$3"
	shift 3
	throwaway_module tools "$module"
	{
		printf 'package tools\n\nimport (\n'
		for spec in "$@"; do printf '\t_ "%s"\n' "${spec%%=*}"; done
		printf ')\n'
	} >tools.go
	go mod tidy
	for spec in "$@"; do
		go build -ldflags "$ldflags" -o "$out/${spec#*=}" "${spec%%=*}"
	done
	cd .. && rm -rf src
}

build_crossplane() {
	local out="$1"
	if [[ "$CROSSPLANE_CLI_VERSION" == "$CROSSPLANE_VERSION" ]]; then
		go_module_build "$out" "github.com/crossplane/crossplane/v2@$CROSSPLANE_VERSION" \
			"-s -w -X github.com/crossplane/crossplane/v2/internal/version.version=$CROSSPLANE_VERSION" \
			"github.com/crossplane/crossplane/v2/cmd/crank=bin/crossplane" \
			"github.com/crossplane/crossplane/v2/cmd/crossplane=core/crossplane"
	else
		build_crossplane_split "$out"
	fi
	mkdir -p "$out/crds"
	cp "$(module_dir "github.com/crossplane/crossplane/v2@$CROSSPLANE_VERSION")"/cluster/crds/*.yaml "$out/crds/"
	chmod u+w "$out"/crds/*.yaml
}

# v2.3 on: the CLI from github.com/crossplane/cli/v2, core from its own
# module, which replaces its apis/v2 module with a local path: a throwaway
# module requires both (the version variable moved to crossplane-runtime).
build_crossplane_split() {
	local out="$1" version_var=github.com/crossplane/crossplane-runtime/v2/pkg/version.version
	go_module_build "$out" "github.com/crossplane/cli/v2@$CROSSPLANE_CLI_VERSION" \
		"-s -w -X $version_var=$CROSSPLANE_CLI_VERSION" \
		"github.com/crossplane/cli/v2/cmd/crossplane=bin/crossplane"
	mkdir -p src && cd src
	go mod init modelplane.local/crossplane-core
	go mod edit -require "github.com/crossplane/crossplane/v2@$CROSSPLANE_VERSION" \
		-require "github.com/crossplane/crossplane/apis/v2@$CROSSPLANE_NEWEST_APIS_VERSION"
	printf 'package tools\n\nimport _ "github.com/crossplane/crossplane/v2/cmd/crossplane"\n' >tools.go
	go mod tidy
	go build -ldflags "-s -w -X $version_var=$CROSSPLANE_VERSION -X github.com/crossplane/crossplane/v2/internal/version.version=$CROSSPLANE_VERSION" \
		-o "$out/core/crossplane" github.com/crossplane/crossplane/v2/cmd/crossplane
	cd .. && rm -rf src
}

# Node itself, from the npm registry: node-linux-<arch> carries the binary
# (npm pack checks the tarball against the registry's integrity hash). Only
# bin/node and the licence are kept; npm is the machine's, run on this Node.
build_node() {
	local out="$1" arch
	case "$(uname -m)" in
	x86_64) arch=x64 ;;
	aarch64 | arm64) arch=arm64 ;;
	*) echo "no node-linux-* package for $(uname -m)" >&2 && return 1 ;;
	esac
	npm pack --silent --no-audit --no-fund "node-linux-$arch@$NODE_VERSION"
	tar -xzf "node-linux-$arch-$NODE_VERSION.tgz" --strip-components=1 -C "$out" package/bin/node package/LICENSE
	rm -f "node-linux-$arch-$NODE_VERSION.tgz"
	[[ "$("$out/bin/node" --version)" == "v$NODE_VERSION" ]]
}

# `crossplane beta validate` always validates against core's CRDs, which it
# would download as the Crossplane image; its cache, pre-filled with the CRDs
# of the same tag, keeps it offline.
build_validate_cache() {
	local out="$1" dir
	dir="$out/xpkg.crossplane.io/crossplane/crossplane@$CROSSPLANE_VERSION"
	mkdir -p "$dir"
	for crd in "$(module_dir "github.com/crossplane/crossplane/v2@$CROSSPLANE_VERSION")"/cluster/crds/*.yaml; do
		cat "$crd" && printf -- '---\n'
	done >"$dir/package.yaml"
}

# The CRDs alone need no build: `make test` validates against them.
build_provider_kubernetes_crds() {
	local out="$1"
	[[ -z "$provider_gotoolchain" ]] || export GOTOOLCHAIN="$provider_gotoolchain"
	cp "$(module_dir "github.com/crossplane-contrib/provider-kubernetes@$PROVIDER_KUBERNETES_VERSION")"/package/crds/*.yaml "$out/"
	chmod u+w "$out"/*.yaml
}

build_crane() {
	go_module_build "$1" "github.com/google/go-containerregistry@${2:-$GO_CONTAINERREGISTRY_VERSION}" "-s -w" \
		"github.com/google/go-containerregistry/cmd/crane=bin/crane"
}

# The crane the OCI resolver Job's default image carries (RESOLVER_IMAGE in
# functions/lib/src/settings.ts names its version; the image is made from it,
# images/oci-tools/build.sh), static: it runs in a pod on busybox.
build_resolver_crane() {
	CGO_ENABLED=0 build_crane "$1" "$RESOLVER_CRANE_VERSION"
}

# What a workload cluster of `make up` needs to accept a ModelReplica's
# HTTPRoute and InferencePool (their CRDs, from the projects' own modules).
build_workload_crds() {
	local out="$1" gateway inference
	gateway="$(module_dir "sigs.k8s.io/gateway-api@$GATEWAY_API_VERSION")"
	inference="$(module_dir "sigs.k8s.io/gateway-api-inference-extension@$GATEWAY_API_INFERENCE_EXTENSION_VERSION")"
	cp "$gateway"/config/crd/standard/gateway.networking.k8s.io_{gatewayclasses,gateways,httproutes,referencegrants}.yaml "$out/"
	cp "$inference"/config/crd/bases/inference.networking.k8s.io_inferencepools.yaml \
		"$inference"/config/crd/bases/inference.networking.x-k8s.io_inferenceobjectives.yaml "$out/"
	chmod u+w "$out"/*.yaml
}

build_provider_kubernetes() {
	local out="$1"
	[[ -z "$provider_gotoolchain" ]] || export GOTOOLCHAIN="$provider_gotoolchain"
	go_module_build "$out" "github.com/crossplane-contrib/provider-kubernetes@$PROVIDER_KUBERNETES_VERSION" "-s -w" \
		"github.com/crossplane-contrib/provider-kubernetes/cmd/provider=bin/provider-kubernetes"
}

# k8s.io/kubernetes replaces each staging module with a local path, so it
# can't be `go install`ed: build from a throwaway module that requires it and
# points each staging module at its published version instead.
# kubernetes_build OUT IMPORT... COMMAND...: IMPORTs (packages under
# k8s.io/kubernetes/cmd/) for the module graph, then each cmd/COMMAND.
kubernetes_build() {
	local out="$1" gomod
	shift
	mkdir -p src && cd src
	gomod="$(go mod download -json "k8s.io/kubernetes@$KUBERNETES_VERSION" | sed -n 's/^\t"GoMod": "\(.*\)",$/\1/p')"
	go mod init modelplane.local/kubernetes-tools
	go mod edit -require "k8s.io/kubernetes@$KUBERNETES_VERSION"
	grep -oE '^\s*k8s\.io/[a-z0-9-]+ => \./staging' "$gomod" | awk '{print $1}' | while read -r staging; do
		go mod edit -replace "$staging=$staging@$k8s_staging"
	done
	local cmd cmds=()
	{
		printf 'package tools\n\nimport (\n'
		for cmd in "$@"; do
			[[ "$cmd" == */* ]] && printf '\t_ "k8s.io/kubernetes/cmd/%s"\n' "$cmd"
		done
		printf ')\n'
	} >tools.go
	for cmd in "$@"; do [[ "$cmd" == */* ]] || cmds+=("$cmd"); done
	go mod tidy
	local ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$KUBERNETES_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=${KUBERNETES_VERSION#v1.}"
	ldflags="${ldflags%.*}"
	for cmd in "${cmds[@]}"; do
		go build -ldflags "$ldflags" -o "$out/bin/$cmd" "k8s.io/kubernetes/cmd/$cmd"
	done
	cd .. && rm -rf src
}

build_kubernetes() {
	kubernetes_build "$1" kube-apiserver/app kube-controller-manager/app kubectl \
		kube-apiserver kube-controller-manager kubectl
}

# A workload cluster's node: the kubelet, and the scheduler and kube-proxy
# one-node clusters run (kube-controller-manager is in the kubernetes tool).
build_kubernetes_node() {
	kubernetes_build "$1" kubelet/app kube-scheduler/app kube-proxy/app kubelet kube-scheduler kube-proxy
}

# containerd 2.x is one module with no `replace` lines: the daemon, the runc
# shim it starts per pod (found on PATH) and ctr, static (CGO_ENABLED=0).
build_containerd() {
	go_module_build "$1" "github.com/containerd/containerd/v2@$CONTAINERD_VERSION" \
		"-s -w -X github.com/containerd/containerd/v2/version.Version=$CONTAINERD_VERSION" \
		"github.com/containerd/containerd/v2/cmd/containerd=bin/containerd" \
		"github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2=bin/containerd-shim-runc-v2" \
		"github.com/containerd/containerd/v2/cmd/ctr=bin/ctr"
}

# The CNI plugins containerd runs for each pod sandbox (bridge with host-local
# addresses; loopback; portmap for hostPort), into bin/ (containerd's bin_dirs).
build_cni_plugins() {
	local m="github.com/containernetworking/plugins"
	go_module_build "$1" "$m@$CNI_PLUGINS_VERSION" "-s -w -X $m/pkg/utils/buildversion.BuildVersion=$CNI_PLUGINS_VERSION" \
		"$m/plugins/main/bridge=bin/bridge" "$m/plugins/main/loopback=bin/loopback" \
		"$m/plugins/ipam/host-local=bin/host-local" "$m/plugins/meta/portmap=bin/portmap"
}

build_local_path_provisioner() {
	go_module_build "$1" "github.com/rancher/local-path-provisioner@$LOCAL_PATH_PROVISIONER_VERSION" \
		"-s -w -X main.VERSION=$LOCAL_PATH_PROVISIONER_VERSION" \
		"github.com/rancher/local-path-provisioner=bin/local-path-provisioner"
}

# The DRA driver's kubelet plugin, run per node as a host process (node.sh).
build_dra_example_driver() {
	go_module_build "$1" "sigs.k8s.io/dra-example-driver@$DRA_EXAMPLE_DRIVER_VERSION" "-s -w" \
		"sigs.k8s.io/dra-example-driver/cmd/dra-example-kubeletplugin=bin/dra-example-kubeletplugin"
}

# CoreDNS, run per node as a host process (node.sh), built the way CoreDNS
# documents for a chosen set of plugins: a main package that imports coremain
# and those plugins and sets their order (plugin.cfg's). These are the ones of
# kubeadm's Corefile that a node here needs, and bind (three nodes' servers on
# one host); the full binary's fifty plugins would pull in every cloud's SDK
# (1.6 GB of modules, cold, against 0.4 GB).
build_coredns() {
	local out="$1" plugin
	local plugins=(bind ready errors cache kubernetes forward)
	throwaway_module coredns "github.com/coredns/coredns@$COREDNS_VERSION"
	{
		printf 'package main\n\nimport (\n\t"github.com/coredns/coredns/core/dnsserver"\n\t"github.com/coredns/coredns/coremain"\n\n'
		for plugin in "${plugins[@]}"; do printf '\t_ "github.com/coredns/coredns/plugin/%s"\n' "$plugin"; done
		printf ')\n\nfunc init() { dnsserver.Directives = []string{'
		printf '"%s", ' "${plugins[@]}"
		printf '} }\n\nfunc main() { coremain.Run() }\n'
	} >main.go
	go mod tidy
	go build -trimpath -ldflags "-s -w" -o "$out/bin/coredns" .
	cd .. && rm -rf src
}

# The LeaderWorkerSet controller's manager, run per node as a host process
# (node.sh), its CRD and the ClusterRole upstream grants the manager.
build_lws() {
	go_module_build "$1" "sigs.k8s.io/lws@$LWS_VERSION" "-s -w -X sigs.k8s.io/lws/pkg/version.GitVersion=$LWS_VERSION" \
		"sigs.k8s.io/lws/cmd=bin/lws-manager"
	mkdir -p "$1/crds"
	cp "$(module_dir "sigs.k8s.io/lws@$LWS_VERSION")"/config/crd/bases/*.yaml "$1/crds/"
	chmod u+w "$1"/crds/*.yaml
	mkdir -p "$1/rbac"
	cp "$(module_dir "sigs.k8s.io/lws@$LWS_VERSION")"/config/rbac/role.yaml "$1/rbac/manager-role.yaml"
	chmod u+w "$1/rbac/manager-role.yaml"
}

# Grove's operator, run on cluster-a's node as a host process (node.sh), and
# its CRDs (the operator's and the PodGang's), from the clone GROVE_SOURCE at
# the pinned tag's commit: the module proxy refuses the operator module.
build_grove() {
	local commit
	commit="$(git -C "$GROVE_SOURCE" rev-parse --verify --quiet "operator/$GROVE_VERSION^{commit}")" || {
		echo "GROVE_SOURCE ($GROVE_SOURCE) has no tag operator/$GROVE_VERSION: a clone of github.com/ai-dynamo/grove with its tags" >&2
		return 1
	}
	[[ "$commit" == "$GROVE_COMMIT" ]] || {
		echo "GROVE_SOURCE's tag operator/$GROVE_VERSION is $commit, not $GROVE_COMMIT (tools/versions.env)" >&2
		return 1
	}
	mkdir -p "$1/src" "$1/crds"
	git -C "$GROVE_SOURCE" archive "$commit" operator scheduler/api | tar -x -C "$1/src"
	(cd "$1/src/operator" && go build -trimpath -ldflags "-s -w" -o "$1/bin/grove-operator" ./cmd)
	cp "$1"/src/operator/api/core/v1alpha1/crds/*.yaml "$1"/src/scheduler/api/core/v1alpha1/crds/*.yaml "$1/crds/"
	rm -rf "$1/src"
}

# The plane's package index (for its nodes; up.sh starts it, pypiserver.sh):
# pypiserver in a venv of its own, and the directory it serves: the pinned
# huggingface_hub and every dependency, as wheels for what the stock Python
# image (python:3.11-slim) runs, CPython 3.11 on manylinux. The platforms are
# the hydration base's (images/hydration/build.sh), which bookworm's glibc
# (2.36) takes; wheels only, so pip in the pod builds nothing.
build_pypiserver() {
	local out="$1" wheel_arch
	case "$(uname -m)" in
	x86_64) wheel_arch=x86_64 ;;
	aarch64 | arm64) wheel_arch=aarch64 ;;
	*) echo "no manylinux wheels for $(uname -m)" >&2 && return 1 ;;
	esac
	[[ -n "$hub_version" ]] || { echo "can't read HUGGINGFACE_HUB_VERSION from the hydration function" >&2 && return 1; }
	python3 -m venv "$out/venv"
	"$out/venv/bin/pip" install --quiet --disable-pip-version-check "pypiserver==$PYPISERVER_VERSION"
	# The venv's own scripts name the directory it was built in (the .partial one build() then moves):
	# the entry point runs the module with the venv's python, found from where it is.
	# shellcheck disable=SC2016 # expanded when the entry point runs, not here
	printf '#!/bin/sh\nexec "$(dirname "$0")/../venv/bin/python3" -m pypiserver "$@"\n' >"$out/bin/pypi-server"
	chmod +x "$out/bin/pypi-server"
	[[ "$("$out/bin/pypi-server" --version)" == "$PYPISERVER_VERSION" ]]
	"$out/venv/bin/pip" download --quiet --disable-pip-version-check --no-cache-dir --only-binary=:all: \
		--implementation cp --python-version 3.11 --abi cp311 \
		--platform "manylinux_2_28_$wheel_arch" --platform "manylinux2014_$wheel_arch" --platform "manylinux_2_17_$wheel_arch" \
		-d "$out/packages" "huggingface_hub==$hub_version"
	[[ -f "$out/packages/huggingface_hub-$hub_version-py3-none-any.whl" ]]
}

# What the node takes from Debian (NODE_DEBIAN_PACKAGES): installed with apt
# when missing and we are root; otherwise named, for `make up` to refuse.
node_debian_packages() {
	local pkg missing=()
	for pkg in $NODE_DEBIAN_PACKAGES; do
		dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
	done
	if ((${#missing[@]} == 0)); then
		log "node packages (Debian): $NODE_DEBIAN_PACKAGES installed"
		return
	fi
	if ((EUID != 0)) || ! command -v apt-get >/dev/null; then
		log "node packages (Debian): ${missing[*]} missing, and this is not root with apt-get: install them for the real nodes of \`make up\`"
		return
	fi
	local start=$SECONDS
	log "node packages (Debian): installing ${missing[*]} with apt-get"
	if ! { apt-get install -y -q --no-install-recommends "${missing[@]}" || { apt-get update -q && apt-get install -y -q --no-install-recommends "${missing[@]}"; }; } >"$cache/apt-node-packages.log" 2>&1; then
		log "node packages (Debian): apt-get failed; the end of $cache/apt-node-packages.log:"
		tail -n 15 "$cache/apt-node-packages.log" >&2
		exit 1
	fi
	log "node packages (Debian): installed in $((SECONDS - start)) s"
}

# etcd's server module is `package main` but replaces its sibling modules
# with local paths: the same throwaway-module way.
build_etcd() {
	local out="$1"
	mkdir -p src && cd src
	go mod init modelplane.local/etcd-tools
	for m in server/v3 api/v3 client/pkg/v3 client/v3 pkg/v3; do
		go mod edit -require "go.etcd.io/etcd/$m@$ETCD_VERSION"
	done
	printf 'package tools\n\nimport _ "go.etcd.io/etcd/server/v3"\n' >tools.go
	go mod tidy
	go build -ldflags "-s -w" -o "$out/bin/etcd" go.etcd.io/etcd/server/v3
	cd .. && rm -rf src
}

# The hydration image's base (Debian's Python and the pinned huggingface_hub,
# images/hydration/build.sh): debootstrap needs root, so only as root.
hydration_base() {
	if ((EUID != 0)) || ! command -v debootstrap >/dev/null; then
		log "hydration-base: needs root and debootstrap; not built (\`make tools\` as root builds it)"
		return
	fi
	SAY_AS=tools bash "$here/../images/hydration/build.sh" --base
}

# The stand-in for the stock Python image (images/python/), the pip path's: the same, as root only.
python_standin() {
	if ((EUID != 0)) || ! command -v debootstrap >/dev/null; then
		log "python-standin: needs root and debootstrap; not built (\`make tools\` as root builds it)"
		return
	fi
	SAY_AS=tools bash "$here/../images/python/build.sh" --base
}

print_env() {
	cat <<ENV
TOOLS_CACHE=$cache
NODE_VERSION=$NODE_VERSION
NODE_HOME=$node_dir
NODE=$node_dir/bin/node
CROSSPLANE_VERSION=$CROSSPLANE_VERSION
CROSSPLANE_CLI_VERSION=$CROSSPLANE_CLI_VERSION
PROVIDER_KUBERNETES_VERSION=$PROVIDER_KUBERNETES_VERSION
CROSSPLANE=$crossplane_dir/bin/crossplane
CROSSPLANE_CORE=$crossplane_dir/core/crossplane
CROSSPLANE_CRDS=$crossplane_dir/crds
VALIDATE_CACHE=$validate_cache_dir
PROVIDER_KUBERNETES=$provider_dir/bin/provider-kubernetes
PROVIDER_KUBERNETES_CRDS=$provider_crds_dir
KUBE_APISERVER=$kubernetes_dir/bin/kube-apiserver
KUBE_CONTROLLER_MANAGER=$kubernetes_dir/bin/kube-controller-manager
KUBECTL=$kubernetes_dir/bin/kubectl
KUBELET=$kubernetes_node_dir/bin/kubelet
KUBE_SCHEDULER=$kubernetes_node_dir/bin/kube-scheduler
KUBE_PROXY=$kubernetes_node_dir/bin/kube-proxy
CONTAINERD_BIN=$containerd_dir/bin
CNI_PLUGINS_BIN=$cni_plugins_dir/bin
LOCAL_PATH_PROVISIONER=$local_path_provisioner_dir/bin/local-path-provisioner
DRA_EXAMPLE_KUBELETPLUGIN=$dra_example_driver_dir/bin/dra-example-kubeletplugin
LWS_MANAGER=$lws_dir/bin/lws-manager
LWS_CRDS=$lws_dir/crds
LWS_MANAGER_ROLE=$lws_dir/rbac/manager-role.yaml
COREDNS=$coredns_dir/bin/coredns
GROVE_OPERATOR=$grove_dir/bin/grove-operator
GROVE_CRDS=$grove_dir/crds
RESOLVER_CRANE=$resolver_crane_dir/bin/crane
ETCD=$etcd_dir/bin/etcd
PYPISERVER=$pypiserver_dir/bin/pypi-server
PYPISERVER_PACKAGES=$pypiserver_dir/packages
CRANE=$crane_dir/bin/crane
WORKLOAD_CRDS=$workload_crds_dir
ENV
}

# What `make test` needs: the CLI and the schemas it validates against.
build_for_test() {
	build node "$node_dir" build_node
	build crossplane "$crossplane_dir" build_crossplane
	build validate-cache "$validate_cache_dir" build_validate_cache
	build provider-kubernetes-crds "$provider_crds_dir" build_provider_kubernetes_crds
}

case "${1:-all}" in
env) print_env ;;
test) build_for_test ;;
node-packages) node_debian_packages ;;
hydration-base) hydration_base ;;
python-standin) python_standin ;;
node | crossplane | provider-kubernetes | kubernetes | etcd | crane | kubernetes-node | containerd | cni-plugins | local-path-provisioner | dra-example-driver | lws | coredns | resolver-crane | pypiserver)
	fn="build_${1//-/_}" dir_var="${1//-/_}_dir"
	[[ "$1" == provider-kubernetes ]] && dir_var=provider_dir
	build "$1" "${!dir_var}" "$fn"
	;;
grove)
	if [[ ! -f "$grove_dir/.built" && ! -d "${GROVE_SOURCE:-}" ]]; then
		log "grove: GROVE_SOURCE must name a clone of github.com/ai-dynamo/grove (git clone https://github.com/ai-dynamo/grove): the Go module proxy refuses its operator module"
		exit 2
	fi
	[[ -z "${GROVE_SOURCE:-}" ]] || GROVE_SOURCE="$(cd "$GROVE_SOURCE" && pwd)" # build() runs in its own directory
	build grove "$grove_dir" build_grove
	;;
all)
	total=$SECONDS
	# The real nodes' tools (docs/nodes.md) only for a plane that runs them
	# (a third of a cold build): MODELPLANE_UP_NODES=0 `make up` starts none.
	node_tools=()
	if [[ "${MODELPLANE_UP_NODES:-1}" == 1 ]]; then
		node_tools=(kubernetes-node="$kubernetes_node_dir" containerd="$containerd_dir" cni-plugins="$cni_plugins_dir"
			local-path-provisioner="$local_path_provisioner_dir" dra-example-driver="$dra_example_driver_dir" lws="$lws_dir" coredns="$coredns_dir"
			pypiserver="$pypiserver_dir" resolver-crane="$resolver_crane_dir")
	fi
	plan node="$node_dir" crossplane="$crossplane_dir" validate-cache="$validate_cache_dir" \
		provider-kubernetes-crds="$provider_crds_dir" provider-kubernetes="$provider_dir" workload-crds="$workload_crds_dir" \
		crane="$crane_dir" etcd="$etcd_dir" kubernetes="$kubernetes_dir" "${node_tools[@]}"
	build_for_test
	build provider-kubernetes "$provider_dir" build_provider_kubernetes
	build workload-crds "$workload_crds_dir" build_workload_crds
	build crane "$crane_dir" build_crane
	build etcd "$etcd_dir" build_etcd
	build kubernetes "$kubernetes_dir" build_kubernetes
	if ((${#node_tools[@]} > 0)); then
		# The two Debian images are debootstrap, dpkg and pip: a core at most,
		# and much waiting on the network and the disk. They build beside the
		# Go builds, which leave a fifth of two cores idle, not after them.
		node_debian_packages
		image_pids=()
		trap 'kill "${image_pids[@]}" 2>/dev/null || true' EXIT
		hydration_base &
		image_pids+=($!)
		python_standin &
		image_pids+=($!)
		build kubernetes-node "$kubernetes_node_dir" build_kubernetes_node
		build containerd "$containerd_dir" build_containerd
		build cni-plugins "$cni_plugins_dir" build_cni_plugins
		build local-path-provisioner "$local_path_provisioner_dir" build_local_path_provisioner
		build dra-example-driver "$dra_example_driver_dir" build_dra_example_driver
		build lws "$lws_dir" build_lws
		build coredns "$coredns_dir" build_coredns
		build resolver-crane "$resolver_crane_dir" build_resolver_crane
		build pypiserver "$pypiserver_dir" build_pypiserver
		for pid in "${image_pids[@]}"; do
			wait "$pid" || { log "a Debian image failed to build (above)"; exit 1; }
		done
		trap - EXIT
	fi
	log "all tools ready in $((SECONDS - total)) s"
	;;
*)
	echo "usage: tools/build.sh [all|test|env|node|crossplane|provider-kubernetes|kubernetes|etcd|crane|kubernetes-node|containerd|cni-plugins|local-path-provisioner|dra-example-driver|lws|coredns|grove|resolver-crane|pypiserver|node-packages|hydration-base|python-standin]" >&2
	exit 2
	;;
esac
