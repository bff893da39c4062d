# scidex-jail. `make help` lists the targets.
SHELL := /bin/bash
GO ?= go
# Go itself from /usr/local/go; Go tools never from the machine's PATH but
# from .tools/bin (below), so a tool installed by hand cannot hide a bad pin.
export PATH := $(PATH):/usr/local/go/bin
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
BIN := bin/scidex-jail
# The init program, exec'd by the jail per run from beside it: built with
# the same version stamp, which the two compare at every run's start.
INIT := bin/scidex-jail-init
LDFLAGS = -s -w -X github.com/scidex/scidex-jail/internal/buildversion.Version=$(VERSION)
VMTEST := bin/scidex-vmtest
# The design's yardstick (a throw-away prototype doing the same kernel work
# as one run), beside the checkout; its benchmark pair is left out without it.
NSPROTO_SRC := $(CURDIR)/../shared/perf/nsproto
NSPROTO := $(CURDIR)/bin/nsproto
BENCH_ENV = CGO_ENABLED=0 SCIDEX_JAIL_BIN=$(CURDIR)/$(BIN) SCIDEX_NSPROTO=$(if $(wildcard $(NSPROTO)),$(NSPROTO))
PKGS := ./...
# Interleaved startup pairs inside the cgroup v2 VM (make bench-vm and
# bench-compare); .ci/vmtests runs a short version in make test.
VM_PAIRS ?= 100

# Go tools, pinned by semantic version (the module proxy serves releases only
# under those), installed into the repository's own ignored .tools/bin. A
# changed pin reinstalls: each tool's stamp file names its version.
TOOLS_BIN := $(CURDIR)/.tools/bin
STATICCHECK_VERSION := v0.8.2
STATICCHECK := $(TOOLS_BIN)/staticcheck-$(STATICCHECK_VERSION)

.PHONY: help build deb deps deps-example tools nsproto example test check docs-check unit vet lint generate generate-check test-host test-vm test-python bench bench-hostile bench-vm bench-compare clean

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

build: ## static, pure-Go binaries in bin/: scidex-jail and its init, scidex-jail-init
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/scidex-jail
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(INIT) ./cmd/scidex-jail-init

deps: tools ## install everything the tests need (apt packages, Go tools; as root)
	.ci/deps test

deps-example: ## install only what the example analysis needs (Debian's Python stack)
	.ci/deps example

tools: $(STATICCHECK) ## install the pinned Go tools into .tools/bin

$(STATICCHECK):
	@echo "tools: installing staticcheck $(STATICCHECK_VERSION) into $(TOOLS_BIN)"
	@mkdir -p $(TOOLS_BIN)
	@GOBIN=$(TOOLS_BIN) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) || \
		{ echo "tools: FAILED: go install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) (is the pin a version the module proxy serves?)" >&2; exit 1; }
	@mv $(TOOLS_BIN)/staticcheck $@

# The Debian version: a release tag when HEAD has one (v1.2.3 -> 1.2.3),
# else 0~git<commit time>.<commit>, +dirty for uncommitted changes.
DEB_VERSION ?= $(shell v=$$(git describe --tags --exact-match --match 'v[0-9]*' 2>/dev/null) && echo $${v\#v} || \
	echo 0~git$$(git log -1 --format=%cd --date=format:%Y%m%d%H%M%S).$$(git rev-parse --short HEAD)$$(git diff --quiet HEAD || echo +dirty))

deb: build ## Debian package in bin/ (dpkg-deb): binary and its init, profiles conffile, man page, completion, systemd slice, tmpfiles
	packaging/deb/build.sh $(BIN) $(DEB_VERSION) bin

example: deps-example build ## run the example analysis under the jail and print a summary of its report
	examples/run-example.sh $(BIN)

test: deps check ## install what is needed, then vet, lint and every test (as root)

check: vet lint generate-check docs-check unit test-host test-vm test-python ## vet, lint, the docs' commands, all tests

docs-check: build ## run every runnable shell block of README.md, docs/*.md, python/README.md (.ci/docs-check says which are run, which only shown)
	.ci/docs-check

unit: ## the tests that need no root, no jail run and no PostgreSQL (Go packages with -short, python/tests -m unit), as nobody when run as root
	.ci/unit

vet: ## go vet, with and without cgo, and for arm64
	CGO_ENABLED=0 $(GO) vet $(PKGS)
	CGO_ENABLED=1 $(GO) vet ./seccomp/...
	GOARCH=arm64 CGO_ENABLED=0 $(GO) vet $(PKGS)

lint: $(STATICCHECK) ## gofmt, staticcheck, layering rules (and their self-test on deliberate violations), mypy --strict over the Python package
	@test -z "$$(gofmt -l .)" || { echo "gofmt needed:"; gofmt -l .; exit 1; }
	CGO_ENABLED=0 $(STATICCHECK) $(PKGS)
	.ci/layering
	.ci/layering --self-test
	cd python && /usr/bin/python3 -m mypy --cache-dir=/dev/null

generate: ## regenerate the seccomp programs (cgo + libseccomp)
	CGO_ENABLED=1 $(GO) generate ./seccomp/...

generate-check: ## fail if the checked-in seccomp programs are not what the generator makes
	CGO_ENABLED=1 $(GO) generate ./seccomp/...
	@git diff --exit-code -- seccomp/bpf || { echo "seccomp programs are stale: run make generate and commit"; exit 1; }

test-host: build nsproto ## unit and end-to-end tests on this kernel (root), each benchmark once, the startup ratios (printed, not enforced)
	CGO_ENABLED=0 $(GO) test -count=1 $$($(GO) list $(PKGS) | grep -v '/deploy$$')
	@# Alone: it installs the Debian package, whose /etc/scidex-jail/profiles.json
	@# the other packages' runs would read meanwhile, and runs a Slurm cluster.
	CGO_ENABLED=0 $(GO) test -count=1 ./deploy/
	$(BENCH_ENV) $(GO) test -count=1 -run '^$$' -bench 'Run|Concurrent|Memory' -benchtime 1x ./bench/
	$(BENCH_ENV) $(GO) test -count=1 -run '^$$' -bench 'Pairs' -benchtime 20x ./bench/
	$(BENCH_ENV) SCIDEX_SERVE_PAIRS=20 SCIDEX_SERVE_SEQUENTIAL=100 SCIDEX_SERVE_BURST=20 $(GO) test -count=1 -run '^$$' -bench 'Serve' -benchtime 1x ./bench/

nsproto: ## build ../shared/perf/nsproto into bin/ when it is there
	@if [ -d $(NSPROTO_SRC) ]; then \
		cd $(NSPROTO_SRC) && CGO_ENABLED=0 $(GO) build -o $(NSPROTO) . ; \
	else \
		echo "nsproto: $(NSPROTO_SRC) is not there: the jail-vs-nsproto pair is skipped"; rm -f $(NSPROTO); \
	fi

test-python: build ## the Python package's tests (pytest, Debian's python3) through bin/scidex-jail and a PostgreSQL 15 of their own (root)
	SCIDEX_JAIL_BIN=$(CURDIR)/$(BIN) /usr/bin/python3 -m pytest -p no:cacheprovider python/tests

$(VMTEST): FORCE
	CGO_ENABLED=0 $(GO) build -o $(VMTEST) ./cmd/vmtest

test-vm: nsproto $(VMTEST) ## cgroup v2 and old-kernel tests inside QEMU VMs, and the startup ratios there (printed, not enforced)
	.ci/vmtests $(VMTEST)

bench: build nsproto ## Go benchmarks of a whole run, its phases, and the startup pairs against the peers
	$(BENCH_ENV) $(GO) test -run '^$$' -bench . -skip HostileOutputs -benchtime 200x ./bench/

bench-hostile: build ## what each hostile analysis of the end-to-end suite costs the trusted side: post-run wall, whole run, the supervisor's peak RSS (once each: the analyses take seconds)
	$(BENCH_ENV) $(GO) test -run '^$$' -bench HostileOutputs -benchtime 1x ./bench/

bench-vm: build nsproto $(VMTEST) ## the startup pairs on cgroup v2 inside the QEMU VM (VM_PAIRS interleaved pairs, default 100), with the jail's phases
	JAIL=$(BIN) bench/vmpairs.sh $(VMTEST) $(VM_PAIRS)

bench-compare: deps build nsproto $(VMTEST) ## startup targets (interleaved pairs against bwrap and nsproto, here and in the cgroup v2 VM, crun for information, 200 concurrent runs against nsproto, init memory), the egress mode's proxy against a direct connection in the test internet, then a hyperfine table against bare exec, unshare and bubblewrap
	$(BENCH_ENV) $(GO) test -run '^$$' -bench 'Pairs' -benchtime 100x ./bench/
	JAIL=$(BIN) bench/vmpairs.sh $(VMTEST) $(VM_PAIRS)
	$(BENCH_ENV) $(GO) test -run '^$$' -bench 'Concurrent200|Memory' -benchtime 5x ./bench/
	$(BENCH_ENV) $(GO) test -run '^$$' -bench 'Serve' -benchtime 1x ./bench/
	$(BENCH_ENV) $(GO) test -run '^$$' -bench 'Egress' -benchtime 9x ./bench/
	bench/compare.sh $(BIN)

clean:
	rm -rf bin .tools

FORCE:
