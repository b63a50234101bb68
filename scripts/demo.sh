#!/usr/bin/env bash
# `make demo`: a family's day on one machine with the real `burrow` program and the embedded
# relay. Three homes (two parents, one child) form a group, share locations, chat; the child
# leaves and the parents' nodes complete the removal. Then, with no relay running, a fourth home
# joins nearby over the UDP loopback radio and chats over the mesh. Prints a transcript, writes the map of
# everyone's last location to demo-map.svg (git-ignored; DEMO_MAP=path to choose, e.g.
# DEMO_MAP=Docs/demo-map.svg to refresh the documented one), ends by opening the family's page
# (`run --web`) in headless Chromium, which writes demo-map.png (DEMO_PAGE=path to choose), and
# leaves no process and no home behind. Fails if any step, or `burrow run` itself, fails.
set -euo pipefail

BIN="${BURROW_BIN:-.build/release/burrow}"
MAP="${DEMO_MAP:-demo-map.svg}"
PAGE="${DEMO_PAGE:-demo-map.png}"
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

if command -v gpsfake > /dev/null; then
    say "Mum's node shares where she is on its own: gpsd (gpsfake) replays a walk north from her spot"
    GPS_PORT="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
    python3 Tests/Fixtures/location/nmea.py retime Tests/Fixtures/location/walk.nmea "$WORK/walk.nmea" 48.8584,2.2945
    step "share start Family --source gpsd:127.0.0.1:$GPS_PORT --interval 10s   (mum)"
    b mum share start Family --source "gpsd:127.0.0.1:$GPS_PORT" --interval 10s --battery off | sed 's/^/  /'
    gpsfake -q -1 -c 0.5 -n -P "$GPS_PORT" "$WORK/walk.nmea" > "$WORK/gpsfake.log" 2>&1 &
    GPS_PID=$!
    # The walk: 20 s standing, then north at walking pace; a publish every 10 s.
    sleep 45
    kill "$GPS_PID" 2> /dev/null || true
    wait "$GPS_PID" 2> /dev/null || true
    b mum share status | sed 's/^/  /'
    b mum share stop Family > /dev/null
    bj dad sync > /dev/null
    step "locations Family --history --member Mum   (dad)"
    b dad locations Family --history --member "$MUM" | sed 's/^/  /'
fi

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

# The mesh scene: no relay runs any more (the embedded one stopped with Mum's node). Gran's new
# phone joins "nearby" over the UDP loopback radio (Docs/protocols/mesh.md 11.2: one datagram per frame, 185-byte
# links, so the welcome crosses in fragments), then Mum and Gran chat hop by hop.
MUM_PORT="${DEMO_MESH_PORT:-7811}"
GRAN_PORT=$((MUM_PORT + 1))
say "Offline now: no relay runs. Gran's new phone joins the family nearby, over the UDP radio"
printf '  gran %s\n' "$(bj gran init --kdf-memory-mib 16 | field '["pubkey"]')"
GRAN="$(bj gran whoami | field '["pubkey"]')"
step "invite nearby Family --mesh udp:$MUM_PORT,$GRAN_PORT   (mum, an admin)"
"$BIN" --home "$WORK/mum" --passphrase-file "$WORK/pass" --timeout 2 invite nearby Family --expires 120 \
    --mesh "udp:$MUM_PORT,$GRAN_PORT" --json > "$WORK/mum-invite.log" 2>"$WORK/mum-invite.err" < /dev/null &
INVITE_PID=$!
RUN_PID=$INVITE_PID
for _ in $(seq 1 100); do
    grep -q '"type":"invite_open"' "$WORK/mum-invite.log" 2>/dev/null && break
    kill -0 "$INVITE_PID" 2>/dev/null || { cat "$WORK/mum-invite.err" >&2; exit 1; }
    sleep 0.1
done
OPEN="$(grep '"type":"invite_open"' "$WORK/mum-invite.log")"
CODE="$(printf '%s' "$OPEN" | field '["code"]')"
INVITE="$(printf '%s' "$OPEN" | field '["invite_id"]')"
printf '  Mum'"'"'s screen shows the code %s (beacon %s… every 2 s)\n' "$CODE" "${INVITE:0:8}"
step "join nearby --list --mesh udp:$GRAN_PORT,$MUM_PORT   (gran)"
bj gran join nearby --list --wait 4 --mesh "udp:$GRAN_PORT,$MUM_PORT" \
    | python3 -c 'import json,sys; [print("  heard: %s from %s…, %d hop(s), %d attempts left" % (i["name"], i["inviter_npub"][:16], i["hops"], i["attempts_left"])) for i in json.load(sys.stdin)["invites"]]'
printf '%s\n' "$CODE" > "$WORK/code"
step "join nearby --invite ${INVITE:0:8} --code-file code --mesh udp:$GRAN_PORT,$MUM_PORT   (gran types the code)"
JOINED="$(bj gran join nearby --invite "${INVITE:0:8}" --code-file "$WORK/code" --mesh "udp:$GRAN_PORT,$MUM_PORT")"
printf '  gran: joined %s at epoch %s (CPace on the code, KeyPackage and welcome sealed, carried by the UDP radio)\n' \
    "$(printf '%s' "$JOINED" | field '["group"]["name"]')" "$(printf '%s' "$JOINED" | field '["group"]["epoch"]')"
wait "$INVITE_PID"
RUN_PID=""
DONE="$(grep '"type":"joined"' "$WORK/mum-invite.log")"
printf '  mum: %s joined, confirmed %s; the add commit waits in her outbox for a relay\n' \
    "$(printf '%s' "$DONE" | field '["member"]' | sed "s/$GRAN/gran/")" "$(printf '%s' "$DONE" | field '["confirmed"]')"

say "Mum and Gran chat over the mesh, still with no relay"
WEB_PORT="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
# Mum's node also serves the family's page (offline: no map tiles, the pins on a plain background).
"$BIN" --home "$WORK/mum" --passphrase-file "$WORK/pass" --timeout 2 run --json --no-embedded-relay \
    --mesh "udp:$MUM_PORT,$GRAN_PORT" --web "127.0.0.1:$WEB_PORT" --web-tiles off \
    > "$WORK/mum-mesh.log" 2>"$WORK/mum-mesh.err" < /dev/null &
RUN_PID=$!
"$BIN" --home "$WORK/gran" --passphrase-file "$WORK/pass" --timeout 2 run --json --no-embedded-relay \
    --mesh "udp:$GRAN_PORT,$MUM_PORT" > "$WORK/gran-mesh.log" 2>"$WORK/gran-mesh.err" < /dev/null &
GRAN_PID=$!
for log in mum-mesh gran-mesh; do
    for _ in $(seq 1 100); do grep -q '"type":"mesh"' "$WORK/$log.log" 2>/dev/null && break; sleep 0.1; done
    grep -q '"type":"mesh"' "$WORK/$log.log" || { cat "$WORK/$log.err" >&2; kill "$GRAN_PID"; exit 1; }
done
step 'chat Family "Gran is here!"   (gran)'
bj gran chat Family "Gran is here!" > /dev/null
step 'chat Family "Welcome, Gran"   (mum)'
bj mum chat Family "Welcome, Gran" > /dev/null
for _ in $(seq 1 100); do grep -q 'Welcome, Gran' "$WORK/gran-mesh.log" && grep -q 'Gran is here' "$WORK/mum-mesh.log" && break; sleep 0.1; done
printf '  mum heard:  %s\n' "$(grep 'Gran is here' "$WORK/mum-mesh.log" | field '["text"]')"
printf '  gran heard: %s\n' "$(grep 'Welcome, Gran' "$WORK/gran-mesh.log" | field '["text"]')"
bj mum mesh status | python3 -c '
import json,sys
m=json.load(sys.stdin)["mesh"]; c=m["counters"]
print("  carried by: the %s radio, port %s, mesh id %s; %d frames in, %d out, %d packets delivered" % (m["transport"], m["port"], m["mesh_id"], c["frames_in"], c["frames_out"], c["delivered"]))
for l in m["links"]: print("    link %s (%s, MTU %s) to %s" % (l["link"], l["role"], l["mtu"], l["peer_id"]))'
printf '  relays carried nothing: none was running\n'

if command -v chromium > /dev/null; then
    say "The family's page: Mum opens the link her node printed in a browser (headless Chromium)"
    LOGIN="$(grep '"type":"web"' "$WORK/mum-mesh.log" | field '["login"]')"
    printf '  web: %s (a one-time link: the browser gets a session cookie, the token is spent)\n' "${LOGIN%%\?*}?token=…"
    chromium --headless=new --no-sandbox --disable-gpu --hide-scrollbars --no-first-run --window-size=1200,800 \
        --virtual-time-budget=8000 --user-data-dir="$WORK/chromium" --screenshot="$PAGE" "$LOGIN" \
        > "$WORK/chromium.log" 2>&1 || { cat "$WORK/chromium.log" >&2; exit 1; }
    printf '  the page, with everyone on the map and the chat beside it, written to %s (%s bytes)\n' "$PAGE" "$(wc -c < "$PAGE")"
fi
kill -TERM "$GRAN_PID" "$RUN_PID"
wait "$GRAN_PID" || { echo "gran's burrow run failed" >&2; cat "$WORK/gran-mesh.err" >&2; exit 1; }
wait "$RUN_PID" || { echo "mum's burrow run failed" >&2; cat "$WORK/mum-mesh.err" >&2; exit 1; }
RUN_PID=""
printf '\nDone: no process left running; the homes are deleted.\n'
