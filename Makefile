# One entry point for everything a developer or CI does. `make test` is the gate.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

FUNCTIONS := compose-model-cache compose-model-cache-hydration compose-model-replica
NODE_MODULES := node_modules/.package-lock.json

# Every recipe runs on the pinned Node (tools/versions.env NODE_VERSION), put
# first on PATH: npm and npx are the machine's, run on it. tools/build.sh
# installs it into the tools cache the first time (one npm package, seconds).
TOOLS_CACHE := $(or $(MODELPLANE_TOOLS_CACHE),$(HOME)/.cache/modelplane-tools)
NODE_VERSION := $(shell sed -n 's/^NODE_VERSION=//p' tools/versions.env)
NODE_HOME := $(TOOLS_CACHE)/node-$(NODE_VERSION)
NODE := $(NODE_HOME)/.built
export PATH := $(NODE_HOME)/bin:$(PATH)

# Which Crossplane and provider-kubernetes the plane, render and validate use:
# oldest (the pins we support, the default) or newest (the newest the module
# proxy serves), e.g. `make e2e CROSSPLANE=newest`; tools/build.sh reads it as
# MODELPLANE_CROSSPLANE. A CROSSPLANE in the environment that is neither (the
# plane's scripts export the CLI's path under that name) is not a choice.
ifeq ($(origin CROSSPLANE),environment)
ifeq ($(filter oldest newest,$(CROSSPLANE)),)
override CROSSPLANE :=
endif
endif
override CROSSPLANE := $(or $(CROSSPLANE),$(MODELPLANE_CROSSPLANE),oldest)
ifeq ($(filter oldest newest,$(CROSSPLANE)),)
$(error CROSSPLANE=$(CROSSPLANE): say oldest or newest)
endif
export MODELPLANE_CROSSPLANE := $(CROSSPLANE)
unexport CROSSPLANE

.PHONY: help node versions demo demo-test test-cli install build lint format typecheck unit test soak run clean bench-fleet bench-fleet-page render-tools render render-check render-update images xpkg docs bench tools tools-test grove up down node-check e2e e2e-standin e2e-upgrade hf-venv embed embed-check

help: ## List the targets
	@grep -hE '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-14s %s\n", $$1, $$2}'

$(NODE):
	@bash tools/build.sh node

node: $(NODE) ## Install the pinned Node into the tools cache (every target does it first)
	@echo "node $$(node --version) at $$(command -v node)"

versions: ## Print the Crossplane, CLI and provider-kubernetes CROSSPLANE=oldest|newest selects
	@bash tools/build.sh env | grep -E '^(CROSSPLANE|CROSSPLANE_CLI|PROVIDER_KUBERNETES|NODE)_VERSION='

$(NODE_MODULES): package.json package-lock.json | $(NODE)
	npm ci --no-audit --no-fund
	@touch $@

install: $(NODE_MODULES) ## Install dependencies (npm ci) when package-lock.json changed

build: $(NODE_MODULES) ## Bundle each function to functions/<name>/dist/main.js
	node scripts/build.mjs

lint: $(NODE_MODULES) ## ESLint and Prettier (check only)
	npx eslint .
	npx prettier --check .

format: $(NODE_MODULES) ## Rewrite files with Prettier
	npx prettier --write .

typecheck: $(NODE_MODULES) ## TypeScript, strict, no emit
	npx tsc -p .

unit: $(NODE_MODULES) ## Run the tests (needs `make build` and `make tools-test`)
	@status=0; npx vitest run || status=$$?; node scripts/test-summary.mjs; exit $$status

# The tests that run the crossplane CLI (render, validate), with the CLI
# CROSSPLANE selects: `make test` runs them too; CI runs them again on the
# other generation.
CLI_TESTS := test/render/examples.test.ts test/render/validate.test.ts test/docs/readme.test.ts test/docs/hydrationsettings.test.ts
test-cli: install build tools-test ## Run only the render and validate tests, with the CLI CROSSPLANE=oldest|newest selects
	@npx vitest run $(CLI_TESTS)

test: install embed-check hf-venv build lint typecheck tools-test unit ## Install, build, lint, type-check and run every test (builds the pinned CLI once)

# The hydration script runs in its tests under Python with the huggingface_hub
# the Job installs (pinned: HUGGINGFACE_HUB_VERSION in huggingface.ts), from
# PyPI, in a virtual environment of its own; made once, then quick.
HF_VENV := .venv-hf
HF_HUB_VERSION := $(shell sed -n "s/^export const HUGGINGFACE_HUB_VERSION = '\(.*\)';/\1/p" functions/compose-model-cache-hydration/src/huggingface.ts)

hf-venv: $(HF_VENV)/.huggingface_hub-$(HF_HUB_VERSION) ## Make .venv-hf with the pinned huggingface_hub (the hydration script's tests need it)

$(HF_VENV)/.huggingface_hub-$(HF_HUB_VERSION):
	python3 -m venv $(HF_VENV)
	$(HF_VENV)/bin/pip install --quiet --disable-pip-version-check 'huggingface_hub==$(HF_HUB_VERSION)'
	@touch $@

embed: | $(NODE) ## Embed functions/compose-model-cache-hydration/src/hydrate.py into its TypeScript module (after editing it)
	node scripts/embed-hydrate.mjs

embed-check: | $(NODE)
	@node scripts/embed-hydrate.mjs --check

# The soak: the fuzz campaign of `make test` (2,000 seeded cases per function)
# at 100,000 cases per function, with another seed, and its report printed.
SOAK_CASES ?= 100000
SOAK_SEED ?= 20261130
SOAK_REPORT := .test-results/soak.txt

soak: build ## Fuzz each function over gRPC with 100,000 seeded cases and print the report
	@mkdir -p .test-results
	@status=0; FUZZ_CASES=$(SOAK_CASES) FUZZ_SEED=$(SOAK_SEED) FUZZ_REPORT=$(SOAK_REPORT) \
		npx vitest run test/hardening/fuzz --reporter=default || status=$$?; \
	echo; echo "Soak report ($(SOAK_REPORT)):"; cat $(SOAK_REPORT); exit $$status

RUN_PORTS ?= 9443 9444 9445

# Ctrl-C reaches the servers and this shell alike; a TERM sent to make's shell
# alone is passed on. The trap clears itself first: a trap that signals its own
# process group signals itself too, and re-entered until the shell crashed.
run: build ## Start the three servers locally, insecure, on 9443, 9444 and 9445 (RUN_PORTS="a b c" to move them)
	@set -- $(RUN_PORTS); \
	echo "Starting, without TLS (--insecure), for crossplane render and local calls:"; \
	echo "  compose-model-cache            on localhost:$$1"; \
	echo "  compose-model-cache-hydration  on localhost:$$2"; \
	echo "  compose-model-replica          on localhost:$$3"; \
	echo "Ctrl-C stops all three."; \
	trap 'trap - INT TERM; kill $$(jobs -p) 2>/dev/null; wait; exit 0' INT TERM; \
	for fn in $(FUNCTIONS); do \
		NODE_OPTIONS="$$(node scripts/node-options.mjs $$fn)" \
		GLIBC_TUNABLES="$$(node scripts/node-options.mjs --glibc-tunables $$fn)" \
			node functions/$$fn/dist/main.js --insecure --address 127.0.0.1:$$1 & \
		shift; \
	done; \
	wait

# Render every examples/<xr>/<stage>/ against package/'s Compositions with the
# real `crossplane render` (the pinned CLI tools-test builds). The examples
# tool starts the three servers where examples/functions.yaml points
# (127.0.0.1:9443, 9444, 9445, insecure) and stops them however it ends.
RENDER_EXAMPLES := node test/render/dist/examples.mjs

render-tools: $(NODE_MODULES)
	@node scripts/build-render.mjs

render: build render-tools tools-test ## Render every example and print the results (servers on ephemeral ports)
	@$(RENDER_EXAMPLES)

render-check: build render-tools tools-test ## Render every example and compare with its expected.yaml
	@$(RENDER_EXAMPLES) --check

render-update: build render-tools tools-test ## Rewrite every example's expected.yaml from its render (review the diff)
	@$(RENDER_EXAMPLES) --update

# The reference pages are generated from the XRDs (`make test` fails when they
# are stale). docs/walkthrough.md's YAML excerpts are what its story produced on
# a live control plane: `make e2e` fails when they are stale, and
# `UPDATE_DOCS=1 make e2e` rewrites them.
docs: $(NODE_MODULES) ## Regenerate docs/reference/ from the XRDs (docs/walkthrough.md's excerpts: UPDATE_DOCS=1 make e2e)
	node scripts/reference-docs.mjs

images: | $(NODE) ## Build the three function images (needs docker with an engine, or buildah)
	@node scripts/package.mjs images

xpkg: | $(NODE) ## Build the Function packages and the Configuration (needs the crossplane CLI; run make images first)
	@node scripts/package.mjs xpkg

# Each function against the no-op floor at 1, 10, 100 and 1,000 clusters; a few
# minutes on two cores. Writes .bench/results.{json,md} and headline.md, and
# rewrites the headline in BENCHMARKS.md and the whole run in
# docs/benchmark-run.md (bench/report.ts). Not part of `make test` (its smoke run is).
bench: build ## Benchmark each function against the floor (N = 1 to 1,000); updates BENCHMARKS.md and docs/benchmark-run.md
	@node bench/build.mjs
	@node bench/dist/run.js --write
	@npx prettier --log-level warn --write BENCHMARKS.md docs/benchmark-run.md # the tables as `make test`'s format check wants them

# The fleet benchmark on the live local plane (issue 27): a fresh `make up` on
# production clocks, one HuggingFace ModelCache on N simulated clusters
# (FLEET_N, default "10 100"; "10 100 300 1000" to go further) timed from apply
# to Ready, measured at rest, deleted; `make down` at the end. About 10 minutes
# per N up to 100. Writes bench/fleet/results/ and the tables in
# docs/fleet-benchmark.md. The plane's ports are fixed: with others on the
# machine, `flock /tmp/modelplane-plane.lock make bench-fleet`.
bench-fleet: build tools ## The fleet benchmark on a fresh local plane, production clocks (FLEET_N="10 100 300 1000"); updates docs/fleet-benchmark.md
	@node bench/build.mjs
	@bash bench/fleet/run.sh

bench-fleet-page: ## Rewrite docs/fleet-benchmark.md's tables and charts from the committed run (bench/fleet/results/), no plane
	@node bench/build.mjs
	@node bench/dist/fleet/page.js
	@npx prettier --log-level warn --write docs/fleet-benchmark.md

clean: ## Remove build outputs
	rm -rf functions/*/dist test/render/dist bench/dist .test-results _output .bench

# The pinned upstream tools (tools/versions.env), built from the Go module
# proxy into ~/.cache/modelplane-tools (MODELPLANE_TOOLS_CACHE) once per
# version: a fresh clone on the same machine reuses them. Cold, 8 min 18 s
# on two cores (Kubernetes is half of it); warm, under a second.
tools: ## Build Crossplane, provider-kubernetes, Kubernetes and etcd (pinned; cached outside the clone)
	@bash tools/build.sh all

# ai-dynamo's Grove operator at the release upstream's Dynamo stack pins
# (GROVE_VERSION), from a clone of its repository: the module proxy refuses
# its operator module, so `make tools` can't build it. Once built, `make up`
# and `make e2e` run it on cluster-a's node and nodes-grove plays; without
# it, that story is skipped, saying so (docs/nodes.md, "Grove").
grove: ## Build Grove's operator from GROVE_SOURCE=<a clone of github.com/ai-dynamo/grove>; the next make up runs it on cluster-a
	@bash tools/build.sh grove

# What `make test` and `make render` need of them: the crossplane CLI, the
# cache that keeps `crossplane beta validate` offline, provider-kubernetes' CRDs.
tools-test: ## Build only what the tests and make render need (the crossplane CLI, validate's schemas)
	@bash tools/build.sh test

# A real control plane on localhost (etcd, kube-apiserver, kube-controller-manager,
# Crossplane, provider-kubernetes, three workload clusters of one real node each,
# and our three functions over mutual TLS). Root, for the nodes (docs/nodes.md);
# MODELPLANE_UP_NODES=0: workload API servers without nodes, no root. It stays
# up until `make down`.
up: build tools ## Start the local control plane with a real node per workload cluster (root); prints the KUBECONFIG to use
	@bash test/e2e/control-plane/up.sh

# The first run: the plane, a ModelCache on two clusters and a ModelReplica
# on one (examples/demo/), watched until the cache is Ready and the replica
# serves. The plane stays up; `make down` stops it. `make demo-test` plays it
# as a newcomer would: a fresh clone of HEAD, only the machine's own Node.
demo: build tools ## Start the local plane and show a ModelCache staging on two clusters and a replica serving
	@bash scripts/demo.sh

demo-test: ## Run `make demo` from a fresh clone of HEAD, as a newcomer would, check what it shows, stop the plane
	@bash test/e2e/demo/newcomer.sh

down: ## Stop the local control plane and remove its state
	@bash test/e2e/control-plane/down.sh

# One real node (test/e2e/control-plane/node.sh) on a throwaway API server of
# its own (ports 176xx, apart from the plane's): a pod, a pod reaching its API
# server through the kubernetes Service, a ReadWriteMany claim a Job writes and
# a pod reads, an image volume; then everything stopped. Root. CLUSTERS=3: three.
node-check: tools ## Run one real node on a throwaway API server and check pods, claims, Jobs, image volumes (root)
	@bash test/e2e/control-plane/node-check.sh

# The stories on a fresh local control plane, asserted on what its API
# servers hold and on the nodes' disks; it stops the plane at the end (keeping
# the logs if it failed). A story whose page shows its YAML fails when the
# page's excerpts are stale; UPDATE_DOCS=1 rewrites them.
#
# `make e2e`: real pods on real nodes (docs/nodes.md; root), the walkthrough
# first. E2E="name ..." runs only those test/e2e/<name>.e2e.ts; E2E=compat is
# the set CI runs on the older Crossplane of the matrix
# (docs/crossplane-versions.md). `make e2e-standin`: the stories that still
# play the stand-in kubelet (test/e2e/workload-kubelet.sh), on a plane
# without nodes, where no real controller undoes what it writes.
E2E_NODES := walkthrough lifecycle teams settings nodes nodes-faults nodes-serving nodes-claim nodes-oci nodes-pip nodes-lws nodes-grove fleet
E2E_STANDIN := progress safety serving-shapes capture faults
# The second lane (docs/nodes.md, "Two lanes"): the stories among those run
# that play beside the others, one after another, while the rest play one
# after another too. Each of them keeps to its own InferenceClusters, hub
# repository and Jobs, sets no hub fault and restarts no daemon, so no story
# of either lane sees the other's. E2E_BESIDE= (empty): one lane.
E2E_BESIDE := settings nodes-claim nodes-oci nodes-lws fleet nodes-pip
E2E ?= $(if $(filter 0,$(MODELPLANE_UP_NODES)),$(E2E_STANDIN),$(E2E_NODES))
E2E_COMPAT := lifecycle
E2E_FILES := $(foreach name,$(if $(filter compat,$(E2E)),$(E2E_COMPAT) $(filter-out compat,$(E2E)),$(E2E)),test/e2e/$(name).e2e.ts)
e2e-upgrade: build tools ## Upgrade in place on a fresh local plane: the release before shards, Ready and serving, then this checkout (UPGRADE_FROM=<commit>)
	@bash test/e2e/upgrade/run.sh

e2e-standin: ## The stories that play the stand-in kubelet, on a fresh plane without nodes (MODELPLANE_UP_NODES=0; no root)
	@MODELPLANE_UP_NODES=0 $(MAKE) --no-print-directory e2e E2E="$(if $(filter command line environment,$(origin E2E)),$(E2E),$(E2E_STANDIN))"

e2e: build tools ## Every story of real pods on a fresh local plane with real nodes, the walkthrough first (root; CROSSPLANE=oldest|newest, E2E=compat|<names>)
	@E2E_BESIDE="$(E2E_BESIDE)" bash test/e2e/run.sh $(E2E_FILES)
