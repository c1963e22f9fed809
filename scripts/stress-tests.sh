#!/usr/bin/env bash
# The suite under load: runs `make test`'s pytest RUNS times (default 3) while HOGS processes
# (default 2: one per core here) burn CPU, and reports each run's outcome and every failure.
# The result goes to docs/stress.md (run it before a stop; too slow for CI).
#   RUNS=3 HOGS=2 scripts/stress-tests.sh [extra pytest args]
set -uo pipefail
cd "$(dirname "$0")/.."

RUNS="${RUNS:-3}"
HOGS="${HOGS:-2}"
VENV="${VENV:-.venv}"
WORKERS="${PYTEST_WORKERS:-4}"
OUT="${STRESS_OUT:-docs/stress.md}"
logs=$(mktemp -d)

hogs=()
stop_hogs() {
  for pid in "${hogs[@]}"; do kill "$pid" 2>/dev/null; done
  wait 2>/dev/null
}
trap stop_hogs EXIT INT TERM

for _ in $(seq 1 "$HOGS"); do
  if command -v stress-ng >/dev/null 2>&1; then
    stress-ng --cpu 1 --quiet &
  else
    python3 -c "while True: pass" &
  fi
  hogs+=($!)
done

summary=()
failed_runs=0
for run in $(seq 1 "$RUNS"); do
  log="$logs/run-$run.txt"
  started=$SECONDS
  "$VENV/bin/pytest" -q -p no:cacheprovider -n "$WORKERS" --dist loadfile -rfE "$@" >"$log" 2>&1
  rc=$?
  took=$((SECONDS - started))
  load=$(cut -d' ' -f1-3 /proc/loadavg)
  last=$(grep -E '^(=+ )?[0-9]+ (passed|failed)|(passed|failed|error).* in [0-9.]+s' "$log" | tail -1 | sed 's/=//g; s/^ *//; s/ *$//')
  echo "stress: run $run: rc=$rc in ${took}s (load $load): ${last:-no summary}"
  summary+=("| $run | $rc | ${took} s | $load | ${last:-no summary} |")
  if [ "$rc" -ne 0 ]; then
    failed_runs=$((failed_runs + 1))
    grep -E '^(FAILED|ERROR) ' "$log" | sed "s/^/stress: run $run: /"
    summary+=("$(grep -E '^(FAILED|ERROR) ' "$log" | sed 's/^/|   | | | | /; s/$/ |/')")
  fi
done
stop_hogs
trap - EXIT

{
  echo "# The suite under load"
  echo
  echo "Last \`make stress\` (scripts/stress-tests.sh): $RUNS runs of the whole suite (\`-n $WORKERS\`)"
  echo "with $HOGS CPU hogs, on $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')),"
  echo "$(date -u '+%Y-%m-%d %H:%M UTC'), at commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')."
  echo
  echo "| run | exit | took | load (1, 5, 15 min) | pytest's summary |"
  echo "|---|---|---|---|---|"
  printf '%s\n' "${summary[@]}" | sed '/^$/d'
} >"$OUT"
echo "stress: $((RUNS - failed_runs)) of $RUNS runs passed; logs in $logs; written to $OUT"
[ "$failed_runs" -eq 0 ]
