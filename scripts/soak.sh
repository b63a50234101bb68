#!/usr/bin/env bash
# make soak: the race suites (crash, chaos, commit races, DM chaos and crash) run N times each
# with a fresh BURROW_TEST_SEED per run, against the release test build. Writes soak-results.md:
# runs, failures with the seeds that replay them, and time. Not part of CI (issue 20).
#   SOAK_RUNS=50 SOAK_SUITES="CrashSafetyTests ChaosRelayTests" make soak
set -uo pipefail
cd "$(dirname "$0")/.."
runs=${SOAK_RUNS:-10}
suites=${SOAK_SUITES:-"CrashSafetyTests ChaosRelayTests CommitRaceTests DMChaosTests DMCrashSafetyTests"}
out=${SOAK_RESULTS:-soak-results.md}
logs=${SOAK_LOGS:-/tmp/burrow-soak}
mkdir -p "$logs"
export BURROW_TEST_ARTIFACTS="$logs/artifacts"
{
  echo "# Soak results"
  echo
  echo "$(date -u +%Y-%m-%dT%H:%MZ), $(git rev-parse --short HEAD 2>/dev/null), $runs runs per suite, fresh seeds; logs and artifacts in $logs."
  echo
  echo "| suite | runs | failures | failing seeds | first seed | last seed | mean s | max s |"
  echo "|---|---:|---:|---|---:|---:|---:|---:|"
} > "$out"
status=0
for suite in $suites; do
  failures=0; failing=""; first=""; last=""; total=0; longest=0
  for i in $(seq 1 "$runs"); do
    seed=$(od -An -N6 -tu8 /dev/urandom | tr -d ' ')
    [ -n "$first" ] || first=$seed
    last=$seed
    start=$(date +%s)
    BURROW_TEST_SEED=$seed swift test -c release -Xswiftc -enable-testing --skip-build --disable-swift-testing \
      --filter "$suite" > "$logs/$suite-$seed.log" 2>&1
    code=$?
    seconds=$(( $(date +%s) - start ))
    total=$(( total + seconds )); [ "$seconds" -gt "$longest" ] && longest=$seconds
    if [ $code -ne 0 ]; then failures=$((failures + 1)); failing="$failing $seed"; status=1; fi
    echo "$suite run $i seed $seed: $([ $code -eq 0 ] && echo passed || echo FAILED) in ${seconds}s"
  done
  echo "| $suite | $runs | $failures |${failing:- —} | $first | $last | $(( total / runs )) | $longest |" >> "$out"
done
cat "$out"
exit $status
