#!/usr/bin/env bash
# Installs what `make test` and `make demo` need on a fresh machine of this kind:
# Debian packages (only the missing ones; apt-get update first) and npm dependencies
# (npm ci when package-lock.json changed since the last install).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

# command → Debian package
# ip: kube-local's node agent puts real pods in network namespaces (iproute2).
# prometheus: the test bed's metrics backend (Debian's build; test/support/prometheus*.ts).
declare -A need=([git]=git [kubectl]=kubectl [ip]=iproute2 [prometheus]=prometheus)
missing=()
for cmd in "${!need[@]}"; do
  # /usr/sbin is not on a non-root user's PATH on Debian.
  command -v "$cmd" >/dev/null 2>&1 || [[ -x /usr/sbin/$cmd ]] || missing+=("${need[$cmd]}")
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
  # Tests run their own Prometheus on free loopback ports: never leave the package's service
  # (:9090, /var/lib/prometheus) running or starting at boot.
  if [[ " ${missing[*]} " == *" prometheus "* ]]; then
    service prometheus stop >/dev/null 2>&1 || true
    update-rc.d prometheus disable >/dev/null 2>&1 || true
    systemctl disable --now prometheus >/dev/null 2>&1 || true
  fi
fi

stamp=node_modules/.sluice-lock-hash
want="$(sha256sum package-lock.json | cut -c1-16)"
if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$want" ]]; then
  echo "deps: npm ci" >&2
  npm ci --no-audit --no-fund --loglevel=error
  echo "$want" > "$stamp"
fi
