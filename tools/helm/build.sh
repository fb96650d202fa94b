#!/usr/bin/env bash
# Builds bin/helm from Helm's own Go module (no downloaded release binary), once per version.
# The binary is cached outside the work tree ($HELM_CACHE, default ~/.cache/sluice) as
# helm-<version>/helm and never rebuilt when present; bin/helm is a copy of it.
# `sluice scan` renders charts with it (`helm template --kube-version`), see src/scan/helm.ts.
set -euo pipefail
version="${HELM_VERSION:-v3.21.4}"
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cache="${HELM_CACHE:-$HOME/.cache/sluice}/helm-$version"
cached="$cache/helm"
mkdir -p "$root/bin" "$cache"
if [[ ! -x "$cached" ]]; then
  command -v go >/dev/null || { echo "helm: Go is required to build Helm from its module" >&2; exit 1; }
  echo "helm: building $version from helm.sh/helm/v3 (takes a few minutes on a cold Go cache)" >&2
  start=$(date +%s)
  tmp="$(mktemp -d "$cache/build.XXXXXX")"
  trap 'rm -rf "$tmp"' EXIT
  # Helm's go.mod has no replace lines, so `go install pkg@version` works; -mod=mod lets Go
  # resolve its requirements without a vendor dir. The version is stamped so `helm version`
  # reports it as a release build would.
  GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=mod GOBIN="$tmp" \
    go install -trimpath -ldflags="-s -w -X helm.sh/helm/v3/internal/version.version=$version" \
    "helm.sh/helm/v3/cmd/helm@$version"
  mv "$tmp/helm" "$cached.tmp" && mv "$cached.tmp" "$cached"
  echo "helm: built in $(( $(date +%s) - start ))s" >&2
fi
if ! cmp -s "$cached" "$root/bin/helm" 2>/dev/null; then
  cp "$cached" "$root/bin/helm.tmp" && mv "$root/bin/helm.tmp" "$root/bin/helm"
fi
