#!/usr/bin/env python3
"""Runs rust-nostr's LocalRelay (nostr-sdk 0.45.1) on 127.0.0.1 for Burrow's tests.

Prints one line `READY ws://127.0.0.1:PORT` on stdout once the relay accepts connections,
then serves until stdin reaches end-of-file (the test process went away), SIGTERM/SIGINT,
or --lifetime seconds pass, whichever comes first. Always bound to loopback.

    local_relay.py [--port N] [--nip42 off|read|write|both] [--auth-dm]
                   [--notes-per-minute N] [--db DIR] [--lifetime SECONDS]

--port 0 (the default) lets the relay pick a free port; pass the printed port back to
restart a relay on the same address. --db keeps events in an LMDB directory so they
survive a restart; without it the relay is in memory. LocalRelay accepts 60 events per
minute per connection unless --notes-per-minute says otherwise.
"""
import argparse
import asyncio
import os
import sys

import nostr_sdk as nostr

import peer_protocol


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--nip42", choices=["off", "read", "write", "both"], default="off")
    p.add_argument("--auth-dm", action="store_true",
                   help="serve kind-1059 events only to the authenticated recipient (NIP-42)")
    p.add_argument("--notes-per-minute", type=int, help="rate limit on EVENTs per connection")
    p.add_argument("--max-reqs", type=int, default=500, help="concurrent subscriptions per connection")
    p.add_argument("--db", help="LMDB directory (default: in memory)")
    p.add_argument("--lifetime", type=float, default=900.0,
                   help="exit after this many seconds even if nobody stops us")
    return p.parse_args()


async def main():
    args = parse_args()
    if not 0 <= args.port <= 65535:
        sys.exit("port out of range")

    builder = nostr.LocalRelayBuilder().addr("127.0.0.1")
    if args.port:
        builder = builder.port(args.port)
    if args.nip42 != "off":
        mode = {
            "read": nostr.LocalRelayBuilderNip42Mode.READ,
            "write": nostr.LocalRelayBuilderNip42Mode.WRITE,
            "both": nostr.LocalRelayBuilderNip42Mode.BOTH,
        }[args.nip42]
        builder = builder.nip42(nostr.LocalRelayBuilderNip42(mode=mode))
    if args.auth_dm:
        builder = builder.auth_dm(True)
    if args.notes_per_minute is not None:
        builder = builder.rate_limit(nostr.RateLimit(max_reqs=args.max_reqs, notes_per_minute=args.notes_per_minute))
    if args.db:
        os.makedirs(args.db, exist_ok=True)
        # The relay calls the database through UniFFI's foreign-trait callbacks from its own
        # threads; those need to know which asyncio loop runs the Python side.
        from nostr_sdk.nostr_sdk import uniffi_set_event_loop
        uniffi_set_event_loop(asyncio.get_running_loop())
        builder = builder.database(await nostr.NostrLmdb.open(args.db))

    relay = builder.build()
    await relay.run()  # returns once the listener is bound
    url = await relay.url()

    print(f"READY {url}", flush=True)
    await peer_protocol.run_until_stopped(args.lifetime)
    relay.shutdown()


if __name__ == "__main__":
    asyncio.run(main())
    sys.stdout.flush()
    # The UniFFI objects may take the interpreter down with them at exit; leave directly.
    os._exit(0)
