#!/usr/bin/env bash
# Installs what `make test` and `make demo` need on a fresh machine of this kind:
# Debian packages (only the missing ones; apt-get update first) and npm dependencies
# (npm ci when package-lock.json changed since the last install).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

# command → Debian package
declare -A need=([git]=git [kubectl]=kubectl)
missing=()
for cmd in "${!need[@]}"; do
  command -v "$cmd" >/dev/null 2>&1 || missing+=("${need[$cmd]}")
done
[[ -x "$(git --exec-path 2>/dev/null)/git-http-backend" ]] || missing+=(git)
if ((${#missing[@]})); then
  if [[ $(id -u) -ne 0 ]]; then
    echo "deps: missing Debian packages: ${missing[*]} (run as root, or install them)" >&2
    exit 1
  fi
  echo "deps: apt-get install ${missing[*]}" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

stamp=node_modules/.sluice-lock-hash
want="$(sha256sum package-lock.json | cut -c1-16)"
if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$want" ]]; then
  echo "deps: npm ci" >&2
  npm ci --no-audit --no-fund --loglevel=error
  echo "$want" > "$stamp"
fi
