# job-signal: build, install, test, demo, images, releases, benchmarks.
# The README starts with `make install` and `make push` (from a clone), then
# `make demo` and `make test`.

GO       ?= go
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -s -w -X github.com/job-signal/job-signal/internal/version.Stamped=$(VERSION)
BIN      := bin
FUZZTIME ?= 10s
FUZZMINIMIZETIME ?= 1s
# The Kubernetes version make e2e runs: one pinned under e2e/kubernetes/
# (v1.30.14, or v1.30). Empty: the newest pinned.
K8S_VERSION ?=

export CGO_ENABLED := 0

.PHONY: all help build install demo test vet unit fuzz e2e bench soak image push release version image-name clean

all: build

help:
	@echo 'make demo        a job and three sidecars on this machine, with what happens and when, in three scenes:'
	@echo '                 the job succeeds, fails (exit 3), is SIGKILLed; exits 0 when each Pod ends as it should'
	@echo '                 SCENE=success|fail|kill: one scene, and the exit status is its Pod verdict (Failed: make fails);'
	@echo '                 2 min the first time (compiling), 3 s after, at load average ~20'
	@echo 'make test        vet, unit and CLI tests with the race detector, the chart'"'"'s lint and goldens, bounded fuzzing;'
	@echo '                 10 min the first time on 2 cores, 6 after (README: Tests, benchmarks and CI)'
	@echo 'make build       the binaries into bin/: job-signal, sidecar-watch, kubectl-job_signal, job-signal-webhook'
	@echo 'make install     those, VERSION stamped, into $$(go env GOBIN), else $$(go env GOPATH)/bin; PREFIX=DIR: into DIR/bin'
	@echo 'make version     the version make stamps (git describe), the tag make push gives the images'
	@echo 'make e2e         a one-node Kubernetes cluster here, the examples and Job cases through its API (root);'
	@echo '                 K8S_VERSION=v1.30.14 another pinned version than the newest (e2e/kubernetes/)'
	@echo '                 KUBECONFIG=PATH E2E_REGISTRY=... or E2E_LOAD=... a running cluster instead'
	@echo 'make bench       latency, start-up, idle cost, sizes; rewrites BENCHMARKS.md (BENCHFLAGS=-only=stop ...)'
	@echo 'make soak        500 randomized lifecycles with injected faults (SOAK_LIFECYCLES, SOAK_SEED)'
	@echo 'make image       both images (job-signal, job-signal-webhook) for linux/amd64 and linux/arm64, with buildah'
	@echo 'make push        REGISTRY=HOST/PATH: both images, pushed as REGISTRY/job-signal:VERSION and REGISTRY/job-signal-webhook:VERSION;'
	@echo '                 PUSH_FLAGS=--tls-verify=false for a registry without TLS'
	@echo 'make release     at the tag of internal/version.Release: the release images and plugin binaries, pushed (docs/release.md)'
	@echo 'make clean       remove bin/ and dist/'

# Static, stripped binaries: the same flags the Dockerfile uses. The kubectl
# plugin and the webhook are separate programs (they never go into Pods).
build:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/ ./cmd/job-signal ./cmd/sidecar-watch
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/ ./cmd/kubectl-job_signal ./cmd/job-signal-webhook

# The programs of make build, VERSION stamped, into BINDIR: PREFIX/bin with
# PREFIX=DIR, else where go install puts programs (GOBIN, else GOPATH/bin).
# kubectl finds the plugin, kubectl-job_signal, on PATH as `kubectl job-signal`.
PREFIX   ?=
BINDIR   ?= $(if $(PREFIX),$(PREFIX)/bin,$(or $(shell $(GO) env GOBIN),$(shell $(GO) env GOPATH)/bin))
PROGRAMS := kubectl-job_signal job-signal sidecar-watch job-signal-webhook
install: build
	install -d '$(BINDIR)'
	cd $(BIN) && install -m 0755 $(PROGRAMS) '$(abspath $(BINDIR))/'
	@echo 'make install: $(PROGRAMS) $(VERSION) in $(abspath $(BINDIR))'
	@case ":$$PATH:" in *':$(abspath $(BINDIR)):'*) ;; *) echo 'make install: $(abspath $(BINDIR)) is not on PATH: export PATH="$(abspath $(BINDIR)):$$PATH" (kubectl looks for kubectl-job_signal there)' ;; esac

# The version make stamps into what it builds (git describe).
version:
	@echo '$(VERSION)'

# A local demo: a job and its sidecars in a temporary directory, with
# what happens and when. It needs only the two programs that go into Pods
# (the plugin and the webhook pull in client-go and more), built with the
# demo in one go build. SCENE picks one scene (success, fail, kill).
SCENE ?= all
demo:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/ ./cmd/job-signal ./cmd/sidecar-watch ./cmd/job-signal-demo
	$(BIN)/job-signal-demo -bin $(BIN) -scene $(SCENE)

test: vet unit fuzz

# go vet in the race detector's build configuration (cgo on, -race): the
# dependencies it compiles for their types are the very compiles `unit`
# links, so each package is compiled once for both (the project has no
# file that cgo or race build tags select: it vets the files it ships).
vet:
	CGO_ENABLED=1 $(GO) vet -race ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))" || { gofmt -l .; echo 'gofmt: files above need formatting'; exit 1; }

# The race detector needs cgo. The chart's tests render and lint it with
# Helm's and kustomize's packages, in the test (charts/). -vet=off: make vet
# has just run every analyzer, go test's few among them, on the same files.
unit:
	CGO_ENABLED=1 $(GO) test -race -count=1 -vet=off ./...

# Every Fuzz* target of every package, each for $(FUZZTIME) (the seed
# corpus also runs in `unit`), the test binaries built once, in unit's
# configuration, with only this module instrumented (scripts/fuzz.sh says
# why). Minimizing each new interesting input may otherwise take up to
# 60 s, and a 10 s run then mostly minimizes: with 1 s, FuzzParseSidecar ran 650k inputs in 20 s
# instead of 48k.
fuzz:
	scripts/fuzz.sh $(GO) $(FUZZTIME) $(FUZZMINIMIZETIME)

# Every Job and CronJob in manifests/ and the issue's cases through the API
# of a real one-node cluster of the Kubernetes version K8S_VERSION names (root;
# installs containerd & co. with apt and builds etcd and Kubernetes once per
# version, cached). See e2e/README.md. Then inject's registry cases against
# distribution's registry (built once from the module proxy, cached).
# With KUBECONFIG=PATH on make's command line (not from the environment):
# that running cluster instead, its images through E2E_REGISTRY or E2E_LOAD
# (e2e/README.md, "Any cluster").
e2e:
	E2E_K8S_VERSION='$(K8S_VERSION)' E2E_KUBECONFIG='$(if $(filter command line,$(origin KUBECONFIG)),$(KUBECONFIG))' \
		$(GO) test -tags e2e -count=1 -v -timeout 45m -parallel 6 ./e2e/
	$(GO) test -tags e2e -count=1 -v -timeout 20m ./e2e/registry/

# Both images, job-signal (Dockerfile) and job-signal-webhook
# (webhook.Dockerfile), each for linux/amd64 and linux/arm64 with a
# manifest list over both, with buildah (scripts/image.sh; README.md,
# "Images"). The default works offline: binaries cross-compiled here, each
# Dockerfile's FROM-scratch prebuilt target per platform (the webhook's with
# this machine's CA certificates). IMAGE_TARGET=release builds the
# Dockerfiles' release targets from source, on distroless, instead (needs a
# registry for their bases). The lists stay in buildah's storage as
# $(IMAGE) and $(WEBHOOK_IMAGE); IMAGE_ARCHIVE= skips the OCI archives.
# IMAGES=job-signal builds one. BUILDAH="buildah --storage-driver vfs"
# where overlay fails; BUD_FLAGS adds options to buildah bud.
REPOSITORY    = $(shell sed -n 's/^const Repository = "\(.*\)"$$/\1/p' internal/version/version.go)
RELEASE       = $(shell sed -n 's/^const Release = "\(.*\)"$$/\1/p' internal/version/version.go)
IMAGE         ?= $(REPOSITORY):$(RELEASE)
WEBHOOK_IMAGE ?= $(REPOSITORY)-webhook:$(RELEASE)
IMAGES        ?= job-signal job-signal-webhook
REVISION      ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
PLATFORMS     ?= linux/amd64 linux/arm64
IMAGE_TARGET  ?= prebuilt
IMAGE_ARCHIVE ?= dist/job-signal.oci.tar
# Beside it: dist/job-signal-webhook.oci.tar by default.
WEBHOOK_IMAGE_ARCHIVE ?= $(patsubst %.oci.tar,%-webhook.oci.tar,$(IMAGE_ARCHIVE))
IMAGE_WORK    ?= dist/image-context
BUILDAH       ?= buildah
BUD_FLAGS     ?=

image:
	IMAGE='$(IMAGE)' WEBHOOK_IMAGE='$(WEBHOOK_IMAGE)' IMAGES='$(IMAGES)' \
	WEBHOOK_IMAGE_ARCHIVE='$(WEBHOOK_IMAGE_ARCHIVE)' VERSION='$(VERSION)' LDFLAGS='$(LDFLAGS)' REVISION='$(REVISION)' PLATFORMS='$(PLATFORMS)' \
	IMAGE_TARGET='$(IMAGE_TARGET)' IMAGE_ARCHIVE='$(IMAGE_ARCHIVE)' IMAGE_WORK='$(IMAGE_WORK)' \
	BUILDAH='$(BUILDAH)' BUD_FLAGS='$(BUD_FLAGS)' GO='$(GO)' sh scripts/image.sh

# The image reference the README and manifests/ use (internal/version.Image).
image-name:
	@echo '$(IMAGE)'

# Both images, built as make image builds them and pushed to a registry of
# yours: REGISTRY/job-signal:TAG and REGISTRY/job-signal-webhook:TAG, TAG
# being VERSION. PUSH_FLAGS adds options to buildah manifest push (e.g.
# --tls-verify=false for a registry without TLS, --authfile FILE). It ends
# with the flags that point the plugin and the chart at them.
REGISTRY   ?=
TAG        ?= $(VERSION)
PUSH_FLAGS ?=
push:
	@test -n '$(REGISTRY)' || { echo 'make push: give REGISTRY=HOST/PATH, where the images go (e.g. REGISTRY=registry.example.com/team)'; exit 2; }
	$(MAKE) image IMAGE='$(REGISTRY)/job-signal:$(TAG)' WEBHOOK_IMAGE='$(REGISTRY)/job-signal-webhook:$(TAG)' IMAGE_ARCHIVE= IMAGES='job-signal job-signal-webhook'
	$(BUILDAH) manifest push --all $(PUSH_FLAGS) '$(REGISTRY)/job-signal:$(TAG)' 'docker://$(REGISTRY)/job-signal:$(TAG)'
	$(BUILDAH) manifest push --all $(PUSH_FLAGS) '$(REGISTRY)/job-signal-webhook:$(TAG)' 'docker://$(REGISTRY)/job-signal-webhook:$(TAG)'
	@echo 'make push: pushed. The plugin: kubectl job-signal inject --image $(REGISTRY)/job-signal:$(TAG) -f job.yaml'
	@echo 'make push: the chart: --set image.repository=$(REGISTRY)/job-signal-webhook --set-string image.tag=$(TAG) --set installImage=$(REGISTRY)/job-signal:$(TAG)'

# A release (docs/release.md): at a clean checkout of the tag that
# internal/version.Release names, the release images (IMAGE, WEBHOOK_IMAGE)
# and the plugin's binaries for RELEASE_PLATFORMS (Linux ones: the plugin
# shares internal/cli, and so signalfs, with the programs of the Pod) into dist/release, with
# SHA256SUMS; then both images pushed (RELEASE_PUSH=no: not pushed). The tag
# itself is pushed last, by hand, as the script says.
RELEASE_PLATFORMS ?= linux/amd64 linux/arm64
RELEASE_PUSH      ?= yes
release:
	RELEASE='$(RELEASE)' IMAGE='$(IMAGE)' WEBHOOK_IMAGE='$(WEBHOOK_IMAGE)' RELEASE_PLATFORMS='$(RELEASE_PLATFORMS)' \
	RELEASE_PUSH='$(RELEASE_PUSH)' PUSH_FLAGS='$(PUSH_FLAGS)' BUILDAH='$(BUILDAH)' GO='$(GO)' MAKE='$(MAKE)' sh scripts/release.sh

# Latency, start-up, idle cost and size, against the targets and reference
# figures of the issue; rewrites BENCHMARKS.md. The cluster rows use make
# e2e's cluster (root), on every pinned Kubernetes version
# (BENCHFLAGS=-kubernetes=v1.37 for one); BENCHFLAGS=-cluster=false skips them.
bench:
	$(GO) run ./bench $(BENCHFLAGS)

# Randomized fault-injection soak (not part of make test). SOAK_LIFECYCLES, SOAK_SEED.
soak:
	$(GO) test -tags soak -count=1 -timeout 40m -v ./soak/

clean:
	rm -rf $(BIN) dist
