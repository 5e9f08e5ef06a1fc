# One entry point for everything a developer or CI does. `make test` is the gate.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

FUNCTIONS := compose-model-cache compose-model-cache-hydration compose-model-replica
NODE_MODULES := node_modules/.package-lock.json

.PHONY: help install build lint format typecheck unit test soak run clean

help: ## List the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-10s %s\n", $$1, $$2}'

$(NODE_MODULES): package.json package-lock.json
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

unit: $(NODE_MODULES) ## Run the tests (needs `make build` for the gRPC tests)
	@status=0; npx vitest run || status=$$?; node scripts/test-summary.mjs; exit $$status

test: install build lint typecheck unit ## Install, build, lint, type-check and run every test

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

run: build ## Start the three servers locally, insecure, on 9443, 9444 and 9445
	@echo "Starting, without TLS (--insecure), for crossplane render and local calls:"
	@echo "  compose-model-cache            on localhost:9443"
	@echo "  compose-model-cache-hydration  on localhost:9444"
	@echo "  compose-model-replica          on localhost:9445"
	@echo "Ctrl-C stops all three."
	@trap 'kill 0' INT TERM; \
	node functions/compose-model-cache/dist/main.js --insecure --address 127.0.0.1:9443 & \
	node functions/compose-model-cache-hydration/dist/main.js --insecure --address 127.0.0.1:9444 & \
	node functions/compose-model-replica/dist/main.js --insecure --address 127.0.0.1:9445 & \
	wait

clean: ## Remove build outputs
	rm -rf functions/*/dist .test-results
