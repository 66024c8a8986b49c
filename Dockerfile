# job-signal's image: job-signal and sidecar-watch, static, on a distroless
# base (no shell), as a non-root user.
#
#   docker build --build-arg VERSION=v0.1.0 --build-arg REVISION=$(git rev-parse HEAD) -t IMAGE .
#   buildah bud --platform linux/amd64,linux/arm64 --manifest IMAGE --build-arg VERSION=... .
#     (buildah 1.28, Debian 12's, also needs --build-arg BUILDPLATFORM=linux/amd64)
#   make image          # both platforms and a manifest list, offline (see README.md)
#
# The Go stage runs on the build machine's platform and cross-compiles for
# the platform asked for (TARGETOS/TARGETARCH), so a multi-platform build
# needs no emulation. Base images are fully qualified, so docker, buildah and
# podman all pull the same ones.
#
# The two final targets (release, prebuilt) end in the same files at the
# same paths, the same labels, the same user and the same entrypoint;
# e2e/dockerfile_test.go keeps it so.

ARG GO_VERSION=1.26

# Build both binaries from source: static (no cgo), paths trimmed, stripped,
# version stamped.
FROM --platform=$BUILDPLATFORM docker.io/library/golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG TARGETOS
ARG TARGETARCH
ARG VERSION=dev
RUN CGO_ENABLED=0 GOOS=${TARGETOS} GOARCH=${TARGETARCH} go build -trimpath \
      -ldflags "-s -w -X github.com/job-signal/job-signal/internal/version.Stamped=${VERSION}" \
      -o /out/ ./cmd/job-signal ./cmd/sidecar-watch

# prebuilt: the same final image from binaries built outside (bin/ in the
# build context, built for the platform given to --platform), for machines
# that reach no registry: it is FROM scratch, so buildah builds it offline.
# make image and the end-to-end suite use it.
FROM scratch AS prebuilt
ARG VERSION=dev
ARG REVISION=unknown
LABEL org.opencontainers.image.title="job-signal" \
      org.opencontainers.image.description="job-signal and sidecar-watch: Kubernetes Job sidecars that start first and stop when the job is done" \
      org.opencontainers.image.source="https://github.com/job-signal/job-signal" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}"
COPY bin/job-signal bin/sidecar-watch /usr/local/bin/
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/job-signal"]

# release (the default target): what users pull.
FROM gcr.io/distroless/static-debian12:nonroot AS release
ARG VERSION=dev
ARG REVISION=unknown
LABEL org.opencontainers.image.title="job-signal" \
      org.opencontainers.image.description="job-signal and sidecar-watch: Kubernetes Job sidecars that start first and stop when the job is done" \
      org.opencontainers.image.source="https://github.com/job-signal/job-signal" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}"
COPY --from=build /out/job-signal /out/sidecar-watch /usr/local/bin/
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/job-signal"]
