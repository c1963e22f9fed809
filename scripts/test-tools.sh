#!/usr/bin/env bash
# The programs the test suite runs besides Python: redis-server (each test process starts a
# private one) and Debian's chromium (the sandbox page's browser test). See system-tools.sh.
exec "$(dirname "$0")/system-tools.sh" redis-server chromium
