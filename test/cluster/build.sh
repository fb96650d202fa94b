#!/usr/bin/env bash
# Builds bin/kube-local from the upstream Kubernetes modules, once per content hash of
# the harness (go.mod, go.sum, *.go). The binary is cached outside the work tree
# ($KUBE_LOCAL_CACHE, default ~/.cache/sluice/kube-local) so fresh clones on the same
# machine reuse it; Go's own build cache makes a rebuild after a small change cheap.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cache="${KUBE_LOCAL_CACHE:-$HOME/.cache/sluice/kube-local}"
hash="$(cd "$here" && cat go.mod go.sum $(ls *.go | sort) | sha256sum | cut -c1-16)"
cached="$cache/kube-local-$hash"
mkdir -p "$root/bin" "$cache"
if [[ ! -x "$cached" ]]; then
  command -v go >/dev/null || { echo "kube-local: Go is required to build the local clusters (go 1.26)" >&2; exit 1; }
  echo "kube-local: building $hash (first build of the Kubernetes control plane takes several minutes)" >&2
  start=$(date +%s)
  # Stamp the Kubernetes version the modules are (read from go.mod) so /version and
  # `kubectl version` report it, as a release build would.
  kver="$(cd "$here" && awk '$1=="k8s.io/kubernetes"{print $2; exit}' go.mod)"
  minor="$(echo "$kver" | cut -d. -f2)"
  pkg=k8s.io/component-base/version
  ldflags="-s -w -X $pkg.gitVersion=$kver -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
  (cd "$here" && GOTOOLCHAIN=local CGO_ENABLED=0 go build -trimpath -ldflags="$ldflags" -o "$cached.tmp" .)
  mv "$cached.tmp" "$cached"
  echo "kube-local: built in $(( $(date +%s) - start ))s" >&2
fi
if ! cmp -s "$cached" "$root/bin/kube-local" 2>/dev/null; then
  # Copy then rename: a running bin/kube-local is never overwritten in place ("text file busy").
  cp "$cached" "$root/bin/kube-local.tmp.$$" && mv "$root/bin/kube-local.tmp.$$" "$root/bin/kube-local"
fi
