#!/usr/bin/env bash
# `make demo-test`: the README's second command as a newcomer runs it. A fresh
# clone of HEAD (what is committed, nothing else of this checkout), a PATH
# without the project's pinned Node (a machine's own Node and npm only), then
# `make demo` there. It passes when the demo ends as it says it does: the
# tools and plane steps printed, each cluster's staging shown, the cache
# Ready, the replica serving and its engine pod's own words about the files
# it read, and how to stop it; then `make down` stops the plane. Uses the
# plane's fixed ports: run it under the plane lock.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/modelplane-newcomer.XXXXXX")"
clone="$work/model-cache-functions"
cleanup() {
	(cd "$clone" 2>/dev/null && make -s down >/dev/null 2>&1) || true
	if [[ "${status:-1}" == 0 ]]; then rm -rf "$work"; else echo "newcomer: kept $work (demo.log, the plane's logs in $clone/_output/up/logs)" >&2; fi
}
trap cleanup EXIT

git clone --quiet "$repo" "$clone"
# The machine's PATH: without the tools cache's Node, without what make exported.
path="$(tr ':' '\n' <<<"$PATH" | grep -vE '/node-[0-9]+\.[0-9]+\.[0-9]+/bin$' | paste -sd: -)"
start=$SECONDS
status=0
(cd "$clone" && env -u MODELPLANE_UP_DIR -u KUBECONFIG -u CROSSPLANE PATH="$path" make demo) 2>&1 | tee "$work/demo.log" || status=$?
echo "newcomer: make demo ended with $status after $((SECONDS - start)) s"

failures=0
expect() { # WHAT PATTERN: the demo's output has a line matching PATTERN
	if grep -qE -- "$2" "$work/demo.log"; then
		echo "ok      $1"
	else
		echo "MISSING $1 (no line matches: $2)"
		failures=$((failures + 1))
	fi
}
expect "the pinned Node installed or found" '^\[tools\] node: (cached|built)'
expect "the plane started, step by step" '^\[up\] up in [0-9]+ s'
expect "the demo applied" '^modelcache.modelplane.ai/qwen (created|configured|unchanged)'
expect "both clusters staging, with progress" '^  demo-(us-east|eu-west): Hydrating  [0-9]+% '
expect "both clusters Ready" '^  demo-eu-west: Ready'
expect "the cache Ready" '^ModelCache qwen Ready on 2\/2 clusters'
expect "the engine waiting for its cache" '^  qwen-chat-demo \(replica\): ModelAccepted: (WaitingForCache|Hydrating)$'
expect "the replica serving" '^ModelReplica qwen-chat-demo serving'
expect "its engine pod read the staged files, offline" '^\[engine-standin\] read 7 files, [0-9]+ bytes, from /mnt/models/models--Qwen--Qwen3-0.6B/snapshots/'
expect "what to try next" '^Try next'
expect "how to stop it" '^Stop it all with: make down$'
if ((status != 0 || failures != 0)); then
	echo "newcomer: FAILED (make demo exit $status, $failures expected lines missing)"
	status=1
	exit 1
fi
echo "newcomer: make demo from a fresh clone shows the cache Ready on both clusters and the replica serving"
