# job-signal's image: job-signal and sidecar-watch, static, on a distroless
# base (no shell), as a non-root user.
#
#   docker build --build-arg VERSION=v1.2.3 -t job-signal .     # release
#   docker build --target prebuilt -t job-signal bin-context/   # see below
#
# The two targets end in the same files at the same paths, the same user and
# the same entrypoint; e2e/dockerfile_test.go keeps it so.

ARG GO_VERSION=1.26

# Build both binaries from source: static (no cgo), paths trimmed, stripped,
# version stamped.
FROM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath \
      -ldflags "-s -w -X github.com/job-signal/job-signal/internal/version.Stamped=${VERSION}" \
      -o /out/ ./cmd/job-signal ./cmd/sidecar-watch

# prebuilt: the same final image from binaries built outside (bin/ in the
# build context), for machines that reach no registry: it is FROM scratch,
# so buildah builds it offline. The end-to-end suite uses it.
FROM scratch AS prebuilt
COPY bin/job-signal bin/sidecar-watch /usr/local/bin/
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/job-signal"]

# release (the default target): what users pull.
FROM gcr.io/distroless/static-debian12:nonroot AS release
COPY --from=build /out/job-signal /out/sidecar-watch /usr/local/bin/
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/job-signal"]
