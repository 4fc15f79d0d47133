# Build: make docker-build IMG=registry.example.com/kurz:tag
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY api/ api/
COPY cmd/ cmd/
COPY config/ config/
COPY controllers/ controllers/
COPY internal/ internal/
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/kurz ./cmd/kurz

# A static binary on distroless: no shell, no package manager, a non-root user.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/kurz /kurz
USER 65532:65532
ENTRYPOINT ["/kurz"]
CMD ["manager"]
