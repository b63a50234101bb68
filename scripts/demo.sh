#!/usr/bin/env bash
# `make demo`: a family's day on one machine with the real `burrow` program and the embedded
# relay. Three homes (two parents, one child) form a group, share locations, chat; the child
# leaves and the parents' nodes complete the removal. Prints a transcript, writes the map of
# everyone's last location to demo-map.svg (git-ignored; DEMO_MAP=path to choose, e.g.
# DEMO_MAP=Docs/demo-map.svg to refresh the documented one), leaves no process and no home
# behind. Fails if any step, or `burrow run` itself, fails.
set -euo pipefail

BIN="${BURROW_BIN:-.build/release/burrow}"
MAP="${DEMO_MAP:-demo-map.svg}"
WORK="$(mktemp -d /tmp/burrow-demo.XXXXXX)"
RUN_PID=""

cleanup() {
    if [[ -n "$RUN_PID" ]] && kill -0 "$RUN_PID" 2>/dev/null; then
        kill -TERM "$RUN_PID" 2>/dev/null || true
        wait "$RUN_PID" 2>/dev/null || true
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT

printf 'demo passphrase\n' > "$WORK/pass"
chmod 600 "$WORK/pass"

b() { local who="$1"; shift; "$BIN" --home "$WORK/$who" --passphrase-file "$WORK/pass" --timeout 10 "$@"; }
bj() { b "$@" --json; }
field() { python3 -c 'import json,sys; d=json.load(sys.stdin); exec("v=d"+sys.argv[1]); print(v)' "$1"; }
say() { printf '\n\033[1m%s\033[0m\n' "$*"; }
step() { printf '  $ burrow %s\n' "$*"; }

say "Three homes, each with its own encrypted store (Argon2id + SQLCipher)"
for who in mum dad kid; do
    key="$(bj "$who" init --kdf-memory-mib 16 | field '["pubkey"]')"
    printf '  %-4s %s\n' "$who" "$key"
done
MUM="$(bj mum whoami | field '["pubkey"]')"
DAD="$(bj dad whoami | field '["pubkey"]')"
KID="$(bj kid whoami | field '["pubkey"]')"
printf '  relays: %s (the embedded default)\n' "$(bj mum relay list | field '["relays"]')"

say "Mum's node runs: it starts the embedded relay and serves her other commands"
# Started directly (not through a shell function) so $! is the burrow process itself.
"$BIN" --home "$WORK/mum" --passphrase-file "$WORK/pass" --timeout 10 run --json --relay-data "$WORK/relay" \
    > "$WORK/mum-run.log" 2>"$WORK/mum-run.err" < /dev/null &
RUN_PID=$!
for _ in $(seq 1 100); do
    grep -q '"type":"ready"' "$WORK/mum-run.log" 2>/dev/null && break
    kill -0 "$RUN_PID" 2>/dev/null || { cat "$WORK/mum-run.err" >&2; exit 1; }
    sleep 0.1
done
grep -q '"type":"ready"' "$WORK/mum-run.log" || { echo "burrow run did not start" >&2; exit 1; }
printf '  %s\n' "$(head -1 "$WORK/mum-run.log")"

say "Each publishes a profile name (kind 0) and, for Dad and the kid, a KeyPackage to be invited with"
for pair in mum:Mum dad:Dad kid:Sam; do
    who="${pair%%:*}"; name="${pair#*:}"
    bj "$who" publish --kind 0 --content "{\"name\":\"$name\"}" > /dev/null
done
for who in dad kid; do step "keypackage publish   ($who)"; bj "$who" keypackage publish > /dev/null; done

say "Mum creates the family group, inviting both, with Dad as a second admin"
step "group create Family --invite dad --invite kid --admin dad"
GROUP_JSON="$(bj mum group create Family --description "our family" --invite "$DAD" --invite "$KID" --admin "$DAD")"
GID="$(printf '%s' "$GROUP_JSON" | field '["group"]["nostr_group_id"]')"
printf '  group %s, epoch %s\n' "$GID" "$(printf '%s' "$GROUP_JSON" | field '["group"]["epoch"]')"

say "Dad and the kid see the invitation and accept it"
for who in dad kid; do
    bj "$who" sync > /dev/null
    ID="$(bj "$who" invite list | field '["invites"][0]["id"]')"
    step "invite accept ${ID:0:16}…   ($who)"
    bj "$who" invite accept "$ID" > /dev/null
done

say "Everyone shares where they are"
step "location Family --lat 48.8584 --lon 2.2945 --acc 15 --batt 81   (mum)"
bj mum location Family --lat 48.8584 --lon 2.2945 --acc 15 --batt 81 > /dev/null
step "location Family --lat 48.8606 --lon 2.3376 --acc 40 --batt 54   (dad)"
bj dad location Family --lat 48.8606 --lon 2.3376 --acc 40 --batt 54 > /dev/null
step "location Family --lat 48.8530 --lon 2.3499 --acc 25 --batt 23   (kid)"
bj kid location Family --lat 48.8530 --lon 2.3499 --acc 25 --batt 23 > /dev/null

say "They chat"
bj mum chat Family "Dinner at 7, everyone?" > /dev/null; step 'chat Family "Dinner at 7, everyone?"   (mum)'
bj dad sync > /dev/null; bj dad chat Family "I'll bring bread." > /dev/null; step "chat Family \"I'll bring bread.\"   (dad)"
bj kid sync > /dev/null; bj kid chat Family "Can I bring a friend?" > /dev/null; step 'chat Family "Can I bring a friend?"   (kid)'
bj mum sync > /dev/null

say "The kid leaves the group (a leave request, and an MLS SelfRemove the others commit)"
step "leave Family   (kid)"
printf '  kid: %s\n' "$(bj kid leave Family | field '["group"]["state"]')"
sleep 1
bj dad sync > /dev/null
bj mum sync > /dev/null
bj kid sync > /dev/null
printf '  kid: %s\n' "$(bj kid group show "$GID" | field '["group"]["state"]')"
printf '  members now: %s\n' "$(bj mum group show Family | field '["group"]["members"]' | sed "s/$MUM/mum/; s/$DAD/dad/")"
printf '  epochs: mum %s, dad %s\n' "$(bj mum group show Family | field '["group"]["epoch"]')" "$(bj dad group show Family | field '["group"]["epoch"]')"

say "What Mum's node stored"
b mum messages Family | sed 's/^/  /'

say "The last locations, drawn to $MAP"
b mum locations Family --svg "$MAP" | sed 's/^/  /'

say "Mum's node stops"
kill -TERM "$RUN_PID"
RUN_STATUS=0
wait "$RUN_PID" || RUN_STATUS=$?
RUN_PID=""
if [[ "$RUN_STATUS" -ne 0 ]]; then
    echo "burrow run exited with status $RUN_STATUS:" >&2
    cat "$WORK/mum-run.err" >&2
    exit 1
fi
printf '  burrow run exited cleanly; its live log had %s lines\n' "$(wc -l < "$WORK/mum-run.log")"
printf '\nDone: no process left running; the homes are deleted.\n'
