# job-signal-webhook's image (charts/job-signal-webhook), apart from
# job-signal's: the Pods that only run the init container never pull the
# webhook's Kubernetes client code. The same two targets as the Dockerfile:
#
#   make image          # both images, both platforms, offline (see README.md)
#   docker build -f webhook.Dockerfile --build-arg VERSION=v0.1.0 -t IMAGE .
#   buildah bud -f webhook.Dockerfile --platform linux/amd64,linux/arm64 --manifest IMAGE \
#     --build-arg BUILDPLATFORM=linux/amd64 --build-arg VERSION=... .
#
# The webhook reads registries over TLS: both targets carry the CA
# certificates (distroless's own, or the build machine's for prebuilt).

ARG GO_VERSION=1.26

# Build the webhook from source: static (no cgo), paths trimmed, stripped,
# version stamped, cross-compiled for the platform asked for.
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
      -o /out/ ./cmd/job-signal-webhook

# prebuilt: the same final image from a binary built outside (bin/ in the
# build context, for the platform given to --platform) and the build
# machine's CA certificates (certs/), FROM scratch, so buildah builds it
# offline. make image builds it.
FROM scratch AS prebuilt
ARG VERSION=dev
ARG REVISION=unknown
LABEL org.opencontainers.image.title="job-signal-webhook" \
      org.opencontainers.image.description="job-signal-webhook: a mutating admission webhook that adds job-signal to the Pods of Jobs" \
      org.opencontainers.image.source="https://github.com/job-signal/job-signal" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}"
COPY certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY bin/job-signal-webhook /usr/local/bin/
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/job-signal-webhook"]

# release (the default target): on distroless static (CA certificates, no
# shell), as a non-root user.
FROM gcr.io/distroless/static-debian12:nonroot AS release
ARG VERSION=dev
ARG REVISION=unknown
LABEL org.opencontainers.image.title="job-signal-webhook" \
      org.opencontainers.image.description="job-signal-webhook: a mutating admission webhook that adds job-signal to the Pods of Jobs" \
      org.opencontainers.image.source="https://github.com/job-signal/job-signal" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}"
COPY --from=build /out/job-signal-webhook /usr/local/bin/
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/job-signal-webhook"]
