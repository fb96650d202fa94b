# Sluice — the two contracts are `make demo` and `make test` (README). Both install what
# they need (Debian packages, npm packages, the cached Go build of the local clusters).
SHELL := /bin/bash
.DEFAULT_GOAL := help
JEST := node --experimental-vm-modules node_modules/jest/bin/jest.js
WORK := .work

.PHONY: help deps build typecheck lint crds kube-local traefik kube-local-up test test-unit test-integration demo bench bench-delivery bench-fix helm bench-scan demo-api bench-rollout bench-rollback clean

help:
	@echo "make demo          run the controller on embedded local clusters with the examples"
	@echo "make test          every test; ends with 'N passed, N failed'"
	@echo "make build | lint | crds | kube-local | bench | clean"

deps:
	@scripts/deps.sh

build: deps
	@npm run --silent build

typecheck: deps
	@npx tsc --noEmit -p tsconfig.json

lint: deps
	@npx eslint . && npx prettier --check .

# Regenerates charts/sluice/crds/ from src/api (checked in; a unit test fails on drift).
crds: deps
	@npx tsx src/api/generate-crds.ts

kube-local:
	@test/cluster/build.sh

# Helm from its Go module (helm.sh/helm/v3 v3.21.4), cached in ~/.cache/sluice/helm-<version>:
# `sluice scan` renders charts with it.
helm:
	@tools/helm/build.sh

# The Gateway API implementation of the test bed's data plane (cached Go build of Traefik).
traefik:
	@test/traefik/build.sh

# Starts 4 clusters in the background for iterating on integration tests:
#   make kube-local-up && SLUICE_TEST_CLUSTERS_DIR=$(WORK)/clusters npx jest ...
kube-local-up: kube-local
	@bin/kube-local --clusters 4 --dir $(WORK)/clusters > $(WORK)/kube-local.log 2>&1 & \
	 until [ -f $(WORK)/clusters/ready ]; do sleep 1; done; echo "clusters ready in $(WORK)/clusters"

test: build kube-local traefik helm
	@mkdir -p $(WORK)
	@rm -f $(WORK)/jest-unit.json $(WORK)/jest-integration.json
	@npx tsc --noEmit -p tsconfig.json
	-@$(JEST) --selectProjects unit --json --outputFile=$(WORK)/jest-unit.json
	-@$(JEST) --selectProjects integration --runInBand --json --outputFile=$(WORK)/jest-integration.json
	@node test/report.mjs $(WORK)/jest-unit.json $(WORK)/jest-integration.json

test-unit: deps
	@$(JEST) --selectProjects unit

test-integration: build kube-local traefik helm
	@$(JEST) --selectProjects integration --runInBand

demo: build kube-local traefik helm
	@npx tsx scripts/demo.ts
	@npx tsx scripts/demo-api.ts

# Chapter 4 alone (API evolution: CanaryRelease v1alpha1 via the conversion webhook, scan, fix).
demo-api: build kube-local helm
	@npx tsx scripts/demo-api.ts

bench: build kube-local
	@npx tsx bench/local-cluster.ts

clean:
	rm -rf dist $(WORK)

bench-delivery: build kube-local
	@npx tsx bench/delivery.ts

# The removed-API fixer on 1,000 generated v1beta1 CRDs (no clusters needed).
bench-fix: deps
	@npx tsx bench/fix.ts

# `sluice scan` over a generated tree of 5,000 manifest files (no clusters needed).
bench-scan: deps
	@npx tsx bench/scan.ts

bench-rollout: build kube-local
	@npx tsx bench/rollout.ts

# From the analysis tick that fails a release to 100% primary and to the revert pushed.
bench-rollback: build kube-local
	@npx tsx bench/rollback.ts
