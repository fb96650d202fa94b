#!/usr/bin/env bash
# Builds bin/traefik (the Gateway API implementation of the test bed's data plane) from the
# published Traefik Go module pinned in go.mod, once per content hash of this wrapper module.
# Cached outside the work tree ($TRAEFIK_CACHE, default ~/.cache/sluice/traefik) like
# test/cluster/build.sh caches kube-local; bin/traefik is replaced atomically (copy + mv), so a
# running binary is never overwritten in place.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cache="${TRAEFIK_CACHE:-$HOME/.cache/sluice/traefik}"
hash="$(cd "$here" && cat go.mod go.sum build.sh | sha256sum | cut -c1-16)"
cached="$cache/traefik-$hash"
mkdir -p "$root/bin" "$cache"
if [[ ! -x "$cached" ]]; then
  command -v go >/dev/null || { echo "traefik: Go is required to build Traefik (go 1.26)" >&2; exit 1; }
  version="$(cd "$here" && awk '$1=="github.com/traefik/traefik/v3"{print $2; exit} $1=="require" && $2=="github.com/traefik/traefik/v3"{print $3; exit}' go.mod)"
  echo "traefik: building $version ($hash; a cold build takes several minutes)" >&2
  start=$(date +%s)
  # GOWORK=off: Traefik's sources must not be resolved through any go.work around us.
  (cd "$here" && GOWORK=off GOTOOLCHAIN=local CGO_ENABLED=0 go build -trimpath \
    -ldflags="-s -w -X github.com/traefik/traefik/v3/pkg/version.Version=$version" \
    -o "$cached.tmp" github.com/traefik/traefik/v3/cmd/traefik)
  mv "$cached.tmp" "$cached"
  echo "traefik: built in $(( $(date +%s) - start ))s" >&2
fi
if ! cmp -s "$cached" "$root/bin/traefik" 2>/dev/null; then
  cp "$cached" "$root/bin/traefik.tmp.$$" && mv "$root/bin/traefik.tmp.$$" "$root/bin/traefik"
fi
