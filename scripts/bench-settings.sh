#!/usr/bin/env bash
# Each runtime setting on and off, with make bench's harness (bench/), in
# alternating runs: docs/design/runtime-settings.md holds what it printed.
#
#   bash scripts/bench-settings.sh [ROUNDS] [SIZES]     (default: 3 rounds, N = 100,1000)
#
# Variants, each a copy of HEAD built on its own (node_modules shared):
#   on                    every setting as committed
#   cache-no-semi-space   compose-model-cache without functions/<name>/node-options
#   cache-no-glibc        compose-model-cache without its glibc-tunables
#   cache-no-v8-flags     compose-model-cache without src/v8-flags.ts's flags
#   hydration-no-semi-space, replica-no-semi-space   likewise for the other two
# Every round runs every variant once, in turn, so a slow spell of the machine
# falls on all of them alike. It refuses to start, and says so, when the load
# average is 1.5 or more (a build running distorts every figure), and prints
# the load before and after. Results: TSV on stdout, one row per variant,
# round, scenario and N; the runs' own files under the work directory.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
rounds="${1:-3}" sizes="${2:-100,1000}"
load() { cut -d' ' -f1 /proc/loadavg; }
if [[ "${BENCH_IGNORE_LOAD:-}" != 1 ]] && awk -v l="$(load)" 'BEGIN { exit !(l >= 1.5) }'; then
	echo "load average $(load) >= 1.5: the machine is not quiet (BENCH_IGNORE_LOAD=1 to measure anyway)" >&2
	exit 1
fi
work="$(mktemp -d "${TMPDIR:-/tmp}/bench-settings.XXXXXX")"
echo "# load before: $(uptime)" >&2
echo "# work: $work" >&2

variant() { # NAME FUNCTION EDIT
	local dir="$work/$1"
	mkdir -p "$dir"
	git -C "$repo" archive HEAD | tar -x -C "$dir"
	ln -s "$repo/node_modules" "$dir/node_modules"
	case "$3" in
	on) ;;
	no-semi-space) rm "$dir/functions/$2/node-options" ;;
	no-glibc) rm "$dir/functions/$2/glibc-tunables" ;;
	no-v8-flags) sed -i 's/^export const V8_FLAGS: readonly string\[\] = .*/export const V8_FLAGS: readonly string[] = [];/' "$dir/functions/$2/src/v8-flags.ts" ;;
	esac
	(cd "$dir" && node scripts/build.mjs >/dev/null && node bench/build.mjs >/dev/null)
	echo "$1 $2" >>"$work/variants"
}
variant on all on
variant cache-no-semi-space compose-model-cache no-semi-space
variant cache-no-glibc compose-model-cache no-glibc
variant cache-no-v8-flags compose-model-cache no-v8-flags
variant hydration-no-semi-space compose-model-cache-hydration no-semi-space
variant replica-no-semi-space compose-model-replica no-semi-space

printf 'variant\tround\tfunction\tscenario\tn\tp50_ms\tp99_ms\tcalls_per_s\tpeak_rss_mb\tpeak_rss_8_clients_mb\tload\n'
for ((round = 1; round <= rounds; round++)); do
	while read -r name fn; do
		only="$fn"
		[[ "$fn" == all ]] && only=compose-model-cache,compose-model-cache-hydration,compose-model-replica
		out="$work/$name/.bench-$round"
		(cd "$work/$name" && node bench/dist/run.js --only "$only" --sizes "$sizes" --out "$out" >"$out.log" 2>&1) || true
		node -e '
const [file, name, round, load] = process.argv.slice(1);
const { results } = JSON.parse(require("node:fs").readFileSync(file, "utf8"));
for (const r of results)
  console.log([name, round, r.function, r.scenario, r.n, r.p50Ms.toFixed(1), r.p99Ms.toFixed(1), r.callsPerSecond.toFixed(0),
    r.peakRssMb.toFixed(0), r.peakRssConcurrentMb.toFixed(0), load].join("\t"));
' "$out/results.json" "$name" "$round" "$(load)"
	done <"$work/variants"
done
echo "# load after: $(uptime)" >&2
