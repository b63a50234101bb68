#!/usr/bin/env bash
# make test: the whole suite in two shards run side by side on the one release test build, so
# CI stays under 25 minutes on a 2-core machine (issue 20, item 6). The interop suites (MDK,
# rust-nostr and relay peers in their own processes, mostly waiting on them) run beside the
# rest; the shards share no fixed port (the embedded relay's 7447 and the UDP mesh tests are
# all in the second). The XCTest bundle is run directly: two `swift test`s would queue on
# SwiftPM's lock of .build. Each shard's log is printed whole when it ends; the status is the
# worse of the two.
set -uo pipefail
cd "$(dirname "$0")/.."
: "${BURROW_VENV:?}" "${BURROW_BIN:?}"
xctest=$(swift build -c release -Xswiftc -enable-testing --show-bin-path)/BurrowPackageTests.xctest
[ -x "$xctest" ] || { echo "no test build at $xctest: run make build-tests" >&2; exit 1; }
classes=$("$xctest" --list-tests 2>/dev/null | grep '/' | sed 's|/.*||' | sort -u)
interop=$(grep '^InteropTests\.' <<< "$classes" | paste -sd, -)
rest=$(grep -v '^InteropTests\.' <<< "$classes" | paste -sd, -)
[ -n "$interop" ] && [ -n "$rest" ] || { echo "no tests listed by $xctest" >&2; exit 1; }
logs=$(mktemp -d /tmp/burrow-test-XXXXXX)
run() {
  local name=$1 selection=$2
  local started=$(date +%s)
  "$xctest" "$selection" > "$logs/$name.log" 2>&1
  local code=$?
  echo "shard $name: exit $code in $(( $(date +%s) - started )) s, $(grep -c "^Test Case .* started" "$logs/$name.log") tests" >> "$logs/summary"
  return $code
}
run interop "$interop" &
interop_pid=$!
run rest "$rest"
rest_status=$?
wait $interop_pid
interop_status=$?
for shard in rest interop; do
  echo "===== shard $shard ====="
  cat "$logs/$shard.log"
done
cat "$logs/summary"
rm -rf "$logs"
[ $rest_status -eq 0 ] && [ $interop_status -eq 0 ]
