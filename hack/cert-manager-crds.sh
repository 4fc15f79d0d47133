#!/usr/bin/env bash
# Copies cert-manager's CRDs (deploy/crds/*.yaml of its Go module, fetched
# through the Go module proxy) into test/crds/cert-manager, for the tests that
# read Certificates through envtest. Writes VERSION and SHA256SUMS beside them
# so a review sees where they came from; rerun with another
# CERT_MANAGER_VERSION to move on.
#
# Usage: hack/cert-manager-crds.sh   (make cert-manager-crds)
set -euo pipefail

CERT_MANAGER_VERSION=${CERT_MANAGER_VERSION:-v1.21.2}
GO=${GO:-go}

root=$(cd "$(dirname "$0")/.." && pwd)
out="$root/test/crds/cert-manager"

# go mod download needs a module to run in; a throwaway one keeps the
# project's go.mod free of cert-manager (kurz does not import it).
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && "$GO" mod init crds >/dev/null 2>&1)
dir=$(cd "$work" && "$GO" mod download -json "github.com/cert-manager/cert-manager@${CERT_MANAGER_VERSION}" |
	sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
if [[ -z "$dir" || ! -d "$dir/deploy/crds" ]]; then
	echo "cert-manager-crds: no deploy/crds in github.com/cert-manager/cert-manager@${CERT_MANAGER_VERSION}" >&2
	exit 1
fi

rm -rf "$out"
mkdir -p "$out"
cp "$dir"/deploy/crds/*.yaml "$out/"
chmod 0644 "$out"/*.yaml
echo "github.com/cert-manager/cert-manager ${CERT_MANAGER_VERSION} deploy/crds" >"$out/VERSION"
(cd "$out" && sha256sum -- *.yaml >SHA256SUMS)
echo "cert-manager CRDs ${CERT_MANAGER_VERSION} in ${out#"$root"/}"
