# scidex-jail. `make help` lists the targets.
SHELL := /bin/bash
GO ?= go
export PATH := $(PATH):/usr/local/go/bin:$(shell $(GO) env GOPATH)/bin
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
BIN := bin/scidex-jail
VMTEST := bin/scidex-vmtest
PKGS := ./...

.PHONY: help build deps example test check vet lint generate generate-check test-host test-vm bench bench-compare clean

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

build: ## static, pure-Go binary in bin/
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-s -w -X main.version=$(VERSION)" -o $(BIN) ./cmd/scidex-jail

deps: ## install everything the tests need (apt packages, Go tools; as root)
	.ci/deps

example: deps build ## run the example analysis under the jail and print its report
	examples/run-example.sh $(BIN)

test: deps check ## install what is needed, then vet, lint and every test (as root)

check: vet lint generate-check test-host test-vm ## vet, lint, all tests

vet: ## go vet, with and without cgo, and for arm64
	CGO_ENABLED=0 $(GO) vet $(PKGS)
	CGO_ENABLED=1 $(GO) vet ./seccomp/...
	GOARCH=arm64 CGO_ENABLED=0 $(GO) vet $(PKGS)

lint: ## gofmt, staticcheck, layering rules
	@test -z "$$(gofmt -l .)" || { echo "gofmt needed:"; gofmt -l .; exit 1; }
	CGO_ENABLED=0 staticcheck $(PKGS)
	.ci/layering

generate: ## regenerate the seccomp programs (cgo + libseccomp)
	CGO_ENABLED=1 $(GO) generate ./seccomp/...

generate-check: ## fail if the checked-in seccomp programs are not what the generator makes
	CGO_ENABLED=1 $(GO) generate ./seccomp/...
	@git diff --exit-code -- seccomp/bpf || { echo "seccomp programs are stale: run make generate and commit"; exit 1; }

test-host: ## unit and end-to-end tests on this kernel (root)
	CGO_ENABLED=0 $(GO) test -count=1 $(PKGS)
	CGO_ENABLED=0 $(GO) test -count=1 -run '^$$' -bench . -benchtime 1x ./bench/

$(VMTEST): FORCE
	CGO_ENABLED=0 $(GO) build -o $(VMTEST) ./cmd/vmtest

test-vm: $(VMTEST) ## cgroup v2 and old-kernel tests inside QEMU VMs
	.ci/vmtests $(VMTEST)

bench: build ## Go benchmarks of a whole run and of its phases
	CGO_ENABLED=0 $(GO) test -run '^$$' -bench . -benchtime 200x ./bench/

bench-compare: deps build ## side-by-side against bare exec, unshare and bubblewrap
	bench/compare.sh $(BIN)

clean:
	rm -rf bin

FORCE:
