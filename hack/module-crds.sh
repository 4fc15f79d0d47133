#!/usr/bin/env bash
# Copies a Go module's CRD manifests (fetched through the Go module proxy)
# into config/thirdparty/<name>, for the tests that read those kinds through envtest
# (and, for the Gateway API, for `kurz dev`, which embeds them). Writes
# VERSION and SHA256SUMS beside them so a review sees where they came from;
# rerun with another version to move on.
#
# Usage: hack/module-crds.sh NAME MODULE@VERSION DIR [GLOB]
#   make cert-manager-crds   (cert-manager's deploy/crds, CERT_MANAGER_VERSION)
#   make gateway-api-crds    (the Gateway API's standard channel, GATEWAY_API_VERSION)
set -euo pipefail

if [[ $# -lt 3 ]]; then
	echo "usage: $0 NAME MODULE@VERSION DIR [GLOB]" >&2
	exit 2
fi
name=$1 module=$2 sub=$3 glob=${4:-*.yaml}
GO=${GO:-go}

root=$(cd "$(dirname "$0")/.." && pwd)
out="$root/config/thirdparty/$name"

# go mod download needs a module to run in; a throwaway one keeps the
# project's go.mod free of modules kurz does not import.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && "$GO" mod init crds >/dev/null 2>&1)
dir=$(cd "$work" && "$GO" mod download -json "$module" |
	sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
if [[ -z "$dir" || ! -d "$dir/$sub" ]]; then
	echo "$name CRDs: no $sub in $module" >&2
	exit 1
fi

rm -rf "$out"
mkdir -p "$out"
# shellcheck disable=SC2086 # the glob is meant to expand
cp "$dir/$sub"/$glob "$out/"
chmod 0644 "$out"/*.yaml
echo "${module/@/ } $sub/$glob" >"$out/VERSION"
(cd "$out" && sha256sum -- *.yaml >SHA256SUMS)
echo "$name CRDs ${module#*@} in ${out#"$root"/}"
