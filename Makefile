# job-signal: build, test, demo, benchmarks.
# `make demo` and `make test` are the two commands the README starts with.

GO       ?= go
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -s -w -X github.com/job-signal/job-signal/internal/version.Stamped=$(VERSION)
BIN      := bin
FUZZTIME ?= 10s

export CGO_ENABLED := 0

.PHONY: all build demo test vet unit fuzz e2e bench soak clean

all: build

# Static, stripped binaries: the same flags the Dockerfile uses.
build:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/ ./cmd/job-signal ./cmd/sidecar-watch

# A local demo: a job and its sidecars in a temporary directory, with
# what happens and when.
demo: build
	$(GO) build -o $(BIN)/ ./cmd/job-signal-demo
	$(BIN)/job-signal-demo -bin $(BIN)

test: vet unit fuzz

vet:
	$(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))" || { gofmt -l .; echo 'gofmt: files above need formatting'; exit 1; }

# The race detector needs cgo.
unit:
	CGO_ENABLED=1 $(GO) test -race -count=1 ./...

# Each fuzz target for a bounded time (the seed corpus also runs in `unit`).
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzParseJob$$' -fuzztime $(FUZZTIME) ./signalfs
	$(GO) test -run '^$$' -fuzz '^FuzzParseSidecar$$' -fuzztime $(FUZZTIME) ./signalfs
	$(GO) test -run '^$$' -fuzz '^FuzzValidName$$' -fuzztime $(FUZZTIME) ./signalfs

# Every Job and CronJob in manifests/ and the issue's cases through the API
# of a real one-node cluster (root; installs containerd & co. with apt and
# builds etcd and Kubernetes once, cached). See e2e/README.md.
e2e:
	$(GO) test -tags e2e -count=1 -v -timeout 45m -parallel 6 ./e2e/

# Latency, start-up, idle cost and size, against the targets and reference
# figures of the issue; rewrites BENCHMARKS.md. The cluster rows use make
# e2e's cluster (root); BENCHFLAGS=-cluster=false skips them.
bench:
	$(GO) run ./bench $(BENCHFLAGS)

# Randomized fault-injection soak (not part of make test). SOAK_LIFECYCLES, SOAK_SEED.
soak:
	$(GO) test -tags soak -count=1 -timeout 40m -v ./soak/

clean:
	rm -rf $(BIN)
