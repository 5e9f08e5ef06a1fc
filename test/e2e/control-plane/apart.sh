#!/usr/bin/env bash
# apart.sh COMMAND...: run COMMAND in a network namespace of its own, made
# for it and removed after it (root: `ip netns`). Its loopback is its own, so
# a plane without nodes (MODELPLANE_UP_NODES=0) started there has every fixed
# port of common.sh to itself while the machine's own plane holds them
# outside. CI plays `make e2e-standin` this way, from a copy of the checkout,
# beside `make e2e` and `make demo-test` (docs/nodes.md, "CI's time").
#
# Only a plane without nodes: a node's network (node.sh: bridges, veths, its
# own namespaces) is the host's, and its address would be taken twice. And
# from another checkout: the plane's state, logs and reports live in the
# checkout (_output/up, .test-results), so two planes of one checkout would
# write over each other.
set -euo pipefail
if (($# == 0)); then
	echo "usage: $0 COMMAND... (runs COMMAND in a network namespace of its own)" >&2
	exit 2
fi
if ((EUID != 0)); then
	echo "apart.sh: a network namespace needs root (ip netns add); run it as root" >&2
	exit 2
fi
if [[ "${MODELPLANE_UP_NODES:-}" != 0 ]]; then
	echo "apart.sh: only a plane without nodes plays apart: set MODELPLANE_UP_NODES=0 (a node's network is the host's)" >&2
	exit 2
fi
name="modelplane-apart-$$"
ip netns add "$name"
trap 'ip netns del "$name" 2>/dev/null || true' EXIT
ip netns exec "$name" ip link set lo up
ip netns exec "$name" "$@" # its status is this script's (set -e), the namespace removed on exit
