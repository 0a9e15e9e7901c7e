#!/usr/bin/env bash
# System packages the app and its tests need: Redis (and Chromium for browser tests).
set -euo pipefail
need=()
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
if [ "${WITH_CHROMIUM:-0}" = 1 ] && ! command -v chromium >/dev/null 2>&1; then need+=(chromium); fi
if [ ${#need[@]} -gt 0 ]; then
  echo "installing: ${need[*]}"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}"
fi
