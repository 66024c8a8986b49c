# job-signal-webhook's image (manifests/webhook/webhook.yaml), apart from
# job-signal's: the Pods that only run the init container never pull the
# webhook's Kubernetes client code.
#
#   docker build -f webhook.Dockerfile --build-arg VERSION=v1.2.3 -t job-signal-webhook .
ARG GO_VERSION=1.26

FROM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath \
      -ldflags "-s -w -X github.com/job-signal/job-signal/internal/version.Stamped=${VERSION}" \
      -o /out/ ./cmd/job-signal-webhook

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/job-signal-webhook /usr/local/bin/
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/job-signal-webhook"]
