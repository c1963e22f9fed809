#!/usr/bin/env bash
# The programs besides Python that a make target runs, named as Debian packages:
#   redis-server  the tests, the benchmarks and the sandbox each start a private one
#   chromium      the sandbox page's browser test (Debian's: /usr/bin/chromium)
# Installs the missing ones with apt-get when run as root where apt-get is; otherwise says in one
# line what to install and exits 1.
set -euo pipefail

missing=()
for package in "$@"; do
  case "$package" in
    chromium) [ -x /usr/bin/chromium ] || missing+=(chromium) ;;
    *) command -v "$package" >/dev/null 2>&1 || missing+=("$package") ;;
  esac
done
[ "${#missing[@]}" -eq 0 ] && exit 0

if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "system-tools: installing ${missing[*]} (apt-get)"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  # Debian starts the redis-server service it installs; nothing of joinops uses it
  exit 0
fi
if command -v apt-get >/dev/null 2>&1; then
  echo "system-tools: missing ${missing[*]}: install with: sudo apt-get install ${missing[*]}" >&2
else
  echo "system-tools: missing ${missing[*]}: install them with your system's package manager" >&2
fi
exit 1
