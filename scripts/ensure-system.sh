#!/usr/bin/env bash
# Installs the Debian packages named on the command line whose program is missing
# (redis-server, chromium, postgresql: its server lives in /usr/lib/postgresql/*/bin, off PATH).
# Non-interactive, so it works in CI and from `make`.
set -euo pipefail
need=()
for pkg in "$@"; do
  if [ "$pkg" = postgresql ]; then
    compgen -G "/usr/lib/postgresql/*/bin/postgres" >/dev/null || need+=("$pkg")
    continue
  fi
  command -v "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
[ ${#need[@]} -eq 0 ] && exit 0
echo "installing Debian packages: ${need[*]}"
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq "${need[@]}"
