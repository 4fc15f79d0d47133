# kurz: `make run` starts everything locally, `make test` runs every test.
# Tools and the control plane are built into ./bin by the targets that need them.

GO ?= go
BIN := $(CURDIR)/bin
CONTROLLER_GEN_VERSION := v0.23.0
CONTROLLER_GEN := $(BIN)/controller-gen-$(CONTROLLER_GEN_VERSION)
KUSTOMIZE_VERSION := v5.8.2
KUSTOMIZE := $(BIN)/kustomize-$(KUSTOMIZE_VERSION)
# The newest golangci-lint v2 whose go.mod builds with this Go (GOTOOLCHAIN=local).
GOLANGCI_LINT_VERSION := v2.15.0
GOLANGCI_LINT := $(BIN)/golangci-lint-$(GOLANGCI_LINT_VERSION)
# Spectral (the OpenAPI linter) from npm, locked by hack/spectral/package-lock.json.
SPECTRAL_DIR := hack/spectral
SPECTRAL := $(SPECTRAL_DIR)/node_modules/.bin/spectral
AXE_DIR := hack/axe
AXE := $(AXE_DIR)/node_modules/axe-core/axe.min.js

# The control plane (kube-apiserver, etcd, kubectl) for tests and `kurz dev`.
# Set KUBEBUILDER_ASSETS to a directory holding them to skip the build.
ifeq ($(origin KUBEBUILDER_ASSETS),undefined)
K8S_BIN := $(BIN)/k8s
BUILD_CONTROL_PLANE := 1
else
K8S_BIN := $(KUBEBUILDER_ASSETS)
endif
export KUBEBUILDER_ASSETS := $(K8S_BIN)

# The image config/ names, and so the one the committed dist/ carries.
DEFAULT_IMG := kurz:latest
IMG ?= $(DEFAULT_IMG)
PLATFORMS ?= linux/amd64,linux/arm64
# The release and commit `kurz version` reports (and the image carries).
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
LDFLAGS := -X github.com/kurz-dev/kurz/internal/version.version=$(VERSION) -X github.com/kurz-dev/kurz/internal/version.commit=$(COMMIT)
# make deploy and undeploy use the kubectl on PATH (and its kubeconfig).
KUBECTL ?= kubectl
CONTAINER_TOOL ?= docker

TEST_TIMEOUT ?= 45m
BENCH_TIME ?= 1x

.PHONY: all
all: build

##@ General

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make <target>\n"} /^[a-zA-Z_-]+:.*?##/ { printf "  %-16s %s\n", $$1, $$2 } /^##@/ { printf "\n%s\n", substr($$0, 5) }' $(MAKEFILE_LIST)

##@ Run

.PHONY: run
run: control-plane build ## Start a local control plane and kurz on it (kurz dev). ARGS="..." passes flags.
	$(BIN)/kurz dev $(ARGS)

.PHONY: build
build: ## Build bin/kurz.
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN)/kurz ./cmd/kurz

.PHONY: control-plane
control-plane: ## Build kube-apiserver, etcd and kubectl from source into bin/k8s (skips what is built).
ifdef BUILD_CONTROL_PLANE
	@hack/build-control-plane.sh $(K8S_BIN)
else
	@echo "control plane: using KUBEBUILDER_ASSETS=$(K8S_BIN)"
endif

##@ Development

.PHONY: manifests
manifests: $(CONTROLLER_GEN) ## Generate the CRDs and the manager's RBAC role from markers, and the Argo CD health scripts (hack/gen-argocd).
	$(CONTROLLER_GEN) rbac:roleName=kurz-manager crd paths="./..." \
		output:crd:artifacts:config=config/crd/bases output:rbac:artifacts:config=config/rbac
	$(GO) run ./hack/gen-argocd

.PHONY: generate
generate: $(CONTROLLER_GEN) ## Generate deepcopy code from markers.
	$(CONTROLLER_GEN) object:headerFile="hack/boilerplate.go.txt" paths="./api/..."

.PHONY: helm
helm: $(KUSTOMIZE) ## Generate the Helm chart dist/chart from config/ (hack/gen-dist); config/prometheus is its optional ServiceMonitor.
	{ $(KUSTOMIZE) build config/default; echo ---; $(KUSTOMIZE) build config/prometheus; } | $(GO) run ./hack/gen-dist -chart dist/chart

.PHONY: build-installer
build-installer: $(KUSTOMIZE) ## Generate dist/install.yaml from config/default, with image IMG.
	$(KUSTOMIZE) build config/default | $(GO) run ./hack/gen-dist -install dist/install.yaml -image $(IMG)

.PHONY: verify
verify: manifests generate lint-openapi ## Fail when generated files (api, config, dist) are stale, go.mod is untidy or the OpenAPI document has a Spectral finding.
	$(MAKE) --no-print-directory helm build-installer IMG=$(DEFAULT_IMG)
	$(GO) mod tidy -diff
	@if [ -n "$$(git status --porcelain -- api config dist)" ]; then \
		echo "generated files are stale; run 'make manifests generate helm build-installer' and commit:"; \
		git status --porcelain -- api config dist; git diff --stat -- api config dist; exit 1; \
	fi

CERT_MANAGER_VERSION ?= v1.21.2
# The Gateway API whose Go types kurz builds with (go.mod); v1.7 needs Go 1.27.
GATEWAY_API_VERSION ?= v1.6.3

.PHONY: cert-manager-crds
cert-manager-crds: ## Copy cert-manager's CRDs (CERT_MANAGER_VERSION) from its Go module into config/thirdparty/cert-manager for the tests.
	GO=$(GO) hack/module-crds.sh cert-manager github.com/cert-manager/cert-manager@$(CERT_MANAGER_VERSION) deploy/crds

.PHONY: gateway-api-crds
gateway-api-crds: ## Copy the Gateway API's standard-channel CRDs (GATEWAY_API_VERSION) from its Go module into config/thirdparty/gateway-api, for the tests and kurz dev.
	@# Not ..._vap_safeupgrades.yaml: an admission policy, not a CRD.
	GO=$(GO) hack/module-crds.sh gateway-api sigs.k8s.io/gateway-api@$(GATEWAY_API_VERSION) config/crd/standard 'gateway.networking.k8s.io_[!v]*.yaml'

.PHONY: fmt
fmt: ## go fmt.
	$(GO) fmt ./...

.PHONY: vet
vet: ## go vet.
	$(GO) vet ./...

.PHONY: lint
lint: $(GOLANGCI_LINT) ## Run golangci-lint (.golangci.yml); CI fails on any finding.
	$(GOLANGCI_LINT) run

.PHONY: lint-fix
lint-fix: $(GOLANGCI_LINT) ## Run golangci-lint and apply the fixes it can (formatting, imports, some linters).
	$(GOLANGCI_LINT) run --fix

.PHONY: lint-openapi
lint-openapi: $(SPECTRAL) ## Lint internal/restapi/openapi.json with Spectral's spectral:oas ruleset; any finding, a hint included, fails.
	$(SPECTRAL) lint --fail-severity=hint --ruleset $(SPECTRAL_DIR)/.spectral.yaml internal/restapi/openapi.json

##@ Test

.PHONY: test
test: manifests generate fmt vet control-plane console-browser ## Regenerate, format and vet, then run every test against a real kube-apiserver and etcd.
	$(GO) test -timeout $(TEST_TIMEOUT) ./...

# The console's browser tests need Chromium (Debian's package: root and
# apt, so make only finds it) and axe-core (npm, pinned: installed here when
# npm is there). go test hides a skip's reason without -v, so this says up
# front what will skip and how to get it.
.PHONY: console-browser
console-browser: ## Find Chromium and install axe-core (with npm) for the console's browser tests; say what will skip when either cannot be had.
	@if command -v chromium >/dev/null || command -v chromium-browser >/dev/null || command -v google-chrome >/dev/null || command -v headless-shell >/dev/null; then \
		echo "console browser tests: using $$(command -v chromium || command -v chromium-browser || command -v google-chrome || command -v headless-shell)"; \
	else \
		echo "console browser tests: no Chromium on PATH: they will SKIP (apt-get install chromium)" >&2; \
	fi
	@if [ -e $(AXE) ]; then :; elif command -v npm >/dev/null; then $(MAKE) --no-print-directory axe; else \
		echo "console browser tests: no npm to install axe-core (make axe): their accessibility checks will SKIP" >&2; \
	fi

.PHONY: console-screenshots
console-screenshots: control-plane axe ## Regenerate docs/console/*.png: the console's browser tests in Chromium, saving their screenshots.
	mkdir -p docs/console
	KURZ_CONSOLE_SCREENSHOTS=$(CURDIR)/docs/console KURZ_REQUIRE_CHROMIUM=1 $(GO) test -count=1 -run '^TestConsole' ./internal/restapi/

.PHONY: test-short
test-short: ## The edit-test loop: only the tests that need no control plane (go test -short), in seconds; make test runs them all.
	$(GO) test -short ./...

.PHONY: bench
bench: control-plane ## Run the benchmarks (BENCH=regexp, BENCH_TIME=1x).
	$(GO) test -run '^$$' -bench '$(or $(BENCH),.)' -benchtime $(BENCH_TIME) -benchmem -timeout 60m ./...

.PHONY: bench-redirect
bench-redirect: ## Redirect server vs nginx with wrk (installs wrk, nginx-light), and with click analytics on. LINKS, CONNECTIONS, DURATION, ROUNDS, ANALYTICS (1; 0 leaves it out).
	GO=$(GO) hack/bench-redirect.sh

.PHONY: bench-redirect-ab
bench-redirect-ab: ## Two redirect-bench builds on one core at the same time, to tell a change of a few per cent: A=<binary> (B: this tree's), ANALYTICS, LINKS, ROUNDS, DURATION.
	GO=$(GO) hack/bench-redirect-ab.sh

.PHONY: bench-analytics
bench-analytics: ## Load CLICKS (10000000) clicks over 90 days in 10000 links into the SQLite analytics store; print ingest, bytes per click and query latencies. ARGS="..." passes flags.
	$(GO) run ./hack/bench-analytics -clicks $(or $(CLICKS),10000000) $(ARGS)

.PHONY: bench-import
bench-import: control-plane build ## Start kurz dev; time bulk creates of 100 links, kurz import --api of N (10000) links with the rate limit off, then LIMITED_N (1500) at the default limit with its ETAs. ARGS="..." passes flags.
	$(GO) run ./hack/bench-import -kurz $(BIN)/kurz -n $(or $(N),10000) -limited-n $(or $(LIMITED_N),1500) $(ARGS)

.PHONY: bench-webhooks
bench-webhooks: control-plane ## Webhook figures: signing, payload and controller cost; link.clicked deliveries of 100000 clicks over 10000 links to a local HTTPS receiver; the memory bound with a hanging receiver; redirect throughput with no Webhook and with one for link.clicked (wrk; LINKS, CONNECTIONS, DURATION, ROUNDS, CLICKS_PER_REQUEST; CPUPROFILE=dir writes a profile a round). ONLY=redirect runs only that.
ifneq ($(ONLY),redirect)
	$(GO) test -run '^$$' -bench 'Sign|Payload|ControllerCost|Clicked' -benchtime 1s -benchmem ./internal/webhooks/
	$(GO) test -run '^$$' -bench 'WebhookClickDeliveries|WebhookMemoryBound' -benchtime $(BENCH_TIME) -timeout 30m ./internal/webhooks/
endif
	$(GO) test -run '^$$' -bench 'RedirectWebhooksOnOff' -benchtime 1x -timeout 60m ./internal/webhooks/

.PHONY: bench-scale
bench-scale: control-plane build ## Load N links (100000) into kurz dev's control plane, start kurz manager, print serve/settle times, RSS, API and redirect figures. ARGS="..." passes flags.
	$(GO) run ./hack/bench-scale -n $(or $(N),100000) -kurz $(BIN)/kurz $(ARGS)

##@ Deploy

.PHONY: docker-build
docker-build: ## Build the container image IMG for this machine's platform.
	$(CONTAINER_TOOL) build --build-arg VERSION=$(VERSION) --build-arg COMMIT=$(COMMIT) -t $(IMG) .

.PHONY: docker-buildx
docker-buildx: ## Build and push IMG for every platform in PLATFORMS (docker buildx; Go cross-compiles, no emulation).
	$(CONTAINER_TOOL) buildx build --push --platform=$(PLATFORMS) \
		--build-arg VERSION=$(VERSION) --build-arg COMMIT=$(COMMIT) -t $(IMG) .

# deploy and undeploy render with the user's kubectl (its built-in kustomize),
# so they build no tool; helm, build-installer and verify use the pinned
# kustomize so the committed dist/ does not depend on a kubectl version.
.PHONY: deploy
deploy: ## Install kurz on the cluster of the current kubeconfig (KUBECTL, default: kubectl on PATH), with image IMG.
	$(KUBECTL) kustomize config/default | $(GO) run ./hack/gen-dist -install - -image $(IMG) | $(KUBECTL) apply --server-side -f -

.PHONY: undeploy
undeploy: ## Remove kurz from the cluster (the CRDs, and so every Link and Domain, too).
	$(KUBECTL) kustomize config/default | $(KUBECTL) delete --ignore-not-found -f -

$(CONTROLLER_GEN):
	GOBIN=$(BIN) $(GO) install sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_GEN_VERSION)
	mv $(BIN)/controller-gen $@

$(GOLANGCI_LINT):
	GOBIN=$(BIN) $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
	mv $(BIN)/golangci-lint $@

# npm ci installs exactly the lock file (no install scripts: Spectral needs
# none); the touch dates the install after the lock, so a new lock reinstalls.
# axe-core for the console's accessibility check (the browser tests,
# internal/restapi's and test/e2e's, inject it; without it they skip that
# check, or fail with KURZ_REQUIRE_CHROMIUM=1). Installed by .ci/run through
# `make axe`.
.PHONY: axe
axe: $(AXE) ## Install axe-core (pinned by hack/axe/package-lock.json) for the console's accessibility check.
$(AXE): $(AXE_DIR)/package-lock.json
	cd $(AXE_DIR) && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
	touch $@

$(SPECTRAL): $(SPECTRAL_DIR)/package-lock.json
	cd $(SPECTRAL_DIR) && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
	touch $@

$(KUSTOMIZE):
	GOBIN=$(BIN) $(GO) install sigs.k8s.io/kustomize/kustomize/v5@$(KUSTOMIZE_VERSION)
	mv $(BIN)/kustomize $@
