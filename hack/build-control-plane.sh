#!/usr/bin/env bash
# Builds the control plane kurz tests and `kurz dev` run against: kube-apiserver,
# etcd and kubectl, from source through the Go module proxy. The usual download of
# prebuilt envtest binaries is not reachable everywhere; the module proxy is.
#
# Usage: hack/build-control-plane.sh [OUT_DIR]   (default: bin/k8s)
# Each binary is skipped when it is already built at the pinned version.
set -euo pipefail

K8S_VERSION=${K8S_VERSION:-v1.37.1}
STAGING_VERSION=${STAGING_VERSION:-v0.37.1}
ETCD_VERSION=${ETCD_VERSION:-v3.7.3}

root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/bin/k8s}
mkdir -p "$out"
out=$(cd "$out" && pwd)
work="$out/.build"
mkdir -p "$work"

ldflags="-s -w -X k8s.io/component-base/version.gitVersion=${K8S_VERSION} -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=${K8S_VERSION#v1.}"
ldflags=${ldflags%.*}   # gitMinor is the minor number only

step() { printf '\033[1m==> %s\033[0m\n' "$*"; }

# up_to_date BIN STAMP: the binary exists and was built from the same recipe.
up_to_date() { [[ -x "$out/$1" && -f "$out/.$1.stamp" && "$(cat "$out/.$1.stamp")" == "$2" ]]; }

# build NAME MODULE_PATH MAIN_GO GO_MOD_EXTRA STAMP
build() {
  local name=$1 main=$2 gomod=$3 stamp=$4
  if up_to_date "$name" "$stamp"; then
    step "$name: already built ($stamp), skipping"
    return
  fi
  local dir="$work/$name"
  rm -rf "$dir" && mkdir -p "$dir"
  printf '%s\n' "$main" >"$dir/main.go"
  printf '%s\n' "$gomod" >"$dir/go.mod"
  step "$name: resolving modules"
  (cd "$dir" && go mod tidy >/dev/null)
  step "$name: compiling (this is the slow part)"
  local start=$SECONDS
  (cd "$dir" && CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$out/$name.tmp" .)
  mv "$out/$name.tmp" "$out/$name"
  echo "$stamp" >"$out/.$name.stamp"
  step "$name: built in $((SECONDS - start))s -> $out/$name"
}

# kube-apiserver lives in k8s.io/kubernetes, whose go.mod points every k8s.io/*
# staging module at ./staging. Replace each with its published release instead.
kmod=$(go mod download -json "k8s.io/kubernetes@${K8S_VERSION}" | sed -n 's/.*"GoMod": "\(.*\)",*/\1/p')
replaces=$(sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/.*#\t\1 => \1 '"${STAGING_VERSION}"'#p' "$kmod")
if [[ -z "$replaces" ]]; then
  echo "could not read the staging modules of k8s.io/kubernetes ${K8S_VERSION}" >&2
  exit 1
fi

build kube-apiserver 'package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

func main() { os.Exit(cli.Run(app.NewAPIServerCommand())) }' "module kurz.dev/build/kube-apiserver

go 1.26

require k8s.io/kubernetes ${K8S_VERSION}

replace (
$replaces
)" "kube-apiserver ${K8S_VERSION}"

build etcd 'package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }' "module kurz.dev/build/etcd

go 1.26

require go.etcd.io/etcd/server/v3 ${ETCD_VERSION}" "etcd ${ETCD_VERSION}"

build kubectl 'package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubectl/pkg/cmd"
)

func main() { os.Exit(cli.Run(cmd.NewDefaultKubectlCommand())) }' "module kurz.dev/build/kubectl

go 1.26

require k8s.io/kubectl ${STAGING_VERSION}" "kubectl ${STAGING_VERSION}"

step "control plane ready in $out"
"$out/kube-apiserver" --version
"$out/etcd" --version | sed -n 1p   # sed reads to the end: head would SIGPIPE the writer under pipefail
"$out/kubectl" version --client 2>/dev/null | sed -n 1p
