#!/usr/bin/env bash
# The programs the test suite runs besides Python: redis-server (each test process starts a
# private one) and Debian's chromium (the sandbox page's browser test). Installs the missing ones
# with apt-get when run as root on Debian; otherwise says in one line what to install and exits 1.
set -euo pipefail

packages=()
command -v redis-server >/dev/null 2>&1 || packages+=(redis-server)
[ -x /usr/bin/chromium ] || packages+=(chromium)
[ "${#packages[@]}" -eq 0 ] && exit 0

if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "test-tools: installing ${packages[*]} (apt-get)"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${packages[@]}" >/dev/null
  # Debian starts the redis-server service it installs; the tests never use it
  exit 0
fi
echo "test-tools: missing ${packages[*]}: install with: sudo apt-get install ${packages[*]}" >&2
exit 1
