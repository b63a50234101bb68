#!/usr/bin/env bash
# make soak: the race suites (crash, chaos, commit races, DM chaos and crash) run N times each
# with a fresh BURROW_TEST_SEED per run, against the release test build, interleaved (one run of
# each suite per round) so a soak cut short still covers every suite. Every run is appended to
# soak-runs.tsv (kept across soaks: commit, suite, seed, result, seconds) and soak-results.md is
# rewritten from it after each run: runs, failures with the seeds that replay them, and time,
# per commit. Not part of CI (issue 20).
#   SOAK_RUNS=50 SOAK_SUITES="CrashSafetyTests ChaosRelayTests" make soak
set -uo pipefail
cd "$(dirname "$0")/.."
runs=${SOAK_RUNS:-10}
suites=${SOAK_SUITES:-"CrashSafetyTests ChaosRelayTests CommitRaceTests DMChaosTests DMCrashSafetyTests"}
out=${SOAK_RESULTS:-soak-results.md}
tsv=${SOAK_RUNS_FILE:-soak-runs.tsv}
logs=${SOAK_LOGS:-/tmp/burrow-soak}
mkdir -p "$logs"
export BURROW_TEST_ARTIFACTS="$logs/artifacts"
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
[ -f "$tsv" ] || printf 'commit\tsuite\tseed\tresult\tseconds\tended\n' > "$tsv"

summarize() {
  {
    echo "# Soak results"
    echo
    echo "Every run of \`make soak\` recorded in $tsv (fresh seed each; replay one with"
    echo "\`BURROW_TEST_SEED=<seed> swift test --filter <suite>\`). Logs and artifacts of the last soak: $logs."
    echo
    echo "| commit | suite | runs | failures | failing seeds | first seed | last seed | mean s | max s |"
    echo "|---|---|---:|---:|---|---:|---:|---:|---:|"
    awk -F'\t' 'NR > 1 {
        key = $1 "\t" $2
        if (!(key in runs)) { order[++n] = key; first[key] = $3 }
        runs[key]++; last[key] = $3; total[key] += $5
        if ($5 > longest[key]) longest[key] = $5
        if ($4 != "passed") { failures[key]++; seeds[key] = seeds[key] " " $3 }
      }
      END {
        for (i = 1; i <= n; i++) {
          key = order[i]; split(key, part, "\t")
          printf "| %s | %s | %d | %d | %s | %s | %s | %d | %d |\n", part[1], part[2], runs[key], failures[key] + 0,
                 (key in seeds) ? seeds[key] : " —", first[key], last[key], total[key] / runs[key], longest[key]
        }
      }' "$tsv"
  } > "$out"
}

status=0
for i in $(seq 1 "$runs"); do
  for suite in $suites; do
    seed=$(od -An -N6 -tu8 /dev/urandom | tr -d ' ')
    start=$(date +%s)
    BURROW_TEST_SEED=$seed swift test -c release -Xswiftc -enable-testing --skip-build --disable-swift-testing \
      --filter "$suite" > "$logs/$suite-$seed.log" 2>&1
    code=$?
    seconds=$(( $(date +%s) - start ))
    result=passed
    if [ $code -ne 0 ]; then result=FAILED; status=1; fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$commit" "$suite" "$seed" "$result" "$seconds" "$(date -u +%Y-%m-%dT%H:%MZ)" >> "$tsv"
    summarize
    echo "$suite run $i seed $seed: $result in ${seconds}s"
  done
done
cat "$out"
exit $status
