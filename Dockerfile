# Build: make docker-build IMG=registry.example.com/kurz:tag
# Every platform at once: make docker-buildx IMG=... PLATFORMS=linux/amd64,linux/arm64
# The build stage runs on the builder's own platform and cross-compiles (Go
# needs no emulation for a static binary), so a multi-arch build stays fast.
FROM --platform=$BUILDPLATFORM golang:1.26 AS build
ARG TARGETOS TARGETARCH
ARG VERSION=devel
ARG COMMIT=unknown
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY api/ api/
COPY cmd/ cmd/
COPY config/ config/
COPY controllers/ controllers/
COPY internal/ internal/
RUN CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH go build -trimpath \
    -ldflags="-s -w -X github.com/kurz-dev/kurz/internal/version.version=${VERSION} -X github.com/kurz-dev/kurz/internal/version.commit=${COMMIT}" \
    -o /out/kurz ./cmd/kurz

# A static binary on distroless: no shell, no package manager, a non-root user.
FROM gcr.io/distroless/static-debian12:nonroot
ARG VERSION=devel
LABEL org.opencontainers.image.title="kurz" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.source="https://github.com/kurz-dev/kurz"
COPY --from=build /out/kurz /kurz
USER 65532:65532
ENTRYPOINT ["/kurz"]
CMD ["manager"]
