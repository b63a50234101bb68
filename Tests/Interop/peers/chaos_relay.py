#!/usr/bin/env python3
"""A hostile network in front of a real relay: a WebSocket proxy on 127.0.0.1 for Burrow's tests.

Every client connection gets its own connection to the backing relay (--upstream, e.g. rust-nostr's
LocalRelay). What clients send goes to the relay unchanged, so the relay stores every event it
accepts. What the relay sends back is disturbed, for EVENT messages only (stored REQ results and
live ones alike):

  --drop P        an EVENT is not delivered (the relay still holds it: a later REQ can return it)
  --duplicate P   an EVENT is delivered twice
  --delay P       an EVENT (each copy) is held back by a random 0..--max-delay-ms, so events
                  overtake each other; stored results still come before their EOSE, as a relay
                  would send them, live ones are reordered freely
  --drop-ok P     an OK (the relay's answer to a published event) is not delivered, though the
                  relay stored the event: the publisher cannot tell whether it got through
  --restart-every S (± --restart-jitter S)
                  the proxy "restarts": every client connection is cut (some with a close frame,
                  some by aborting the TCP connection) and new connections are refused for --down-ms

EOSE, CLOSED, NOTICE and AUTH pass through (EOSE after the held-back events of its REQ), and OK
unless --drop-ok says otherwise.
Decisions come from one random.Random(--seed); which decision meets which event still depends on
timing, so a run is reproducible in its statistics, not byte for byte.

Prints `READY ws://127.0.0.1:PORT` once listening, then a `STATS {json}` line every second
(counters: connections, refused, events, dropped, duplicated, delayed, oks_dropped, restarts, cut). Exits when stdin
reaches end-of-file (the test went away), on SIGTERM/SIGINT, or after --lifetime seconds.

    chaos_relay.py --upstream URL [--port N] [--seed N] [--drop P] [--duplicate P] [--delay P]
                   [--max-delay-ms MS] [--drop-ok P] [--restart-every S] [--restart-jitter S] [--down-ms MS]
                   [--lifetime S]
"""
import argparse
import asyncio
import heapq
import itertools
import json
import os
import random
import sys

from websockets.asyncio.client import connect
from websockets.asyncio.server import serve
from websockets.exceptions import ConnectionClosed

import peer_protocol

MAX_MESSAGE = 16 * 1024 * 1024


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--upstream", required=True, help="the backing relay's ws:// URL")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--drop", type=float, default=0.0)
    p.add_argument("--duplicate", type=float, default=0.0)
    p.add_argument("--delay", type=float, default=0.0)
    p.add_argument("--max-delay-ms", type=float, default=300.0)
    p.add_argument("--drop-ok", type=float, default=0.0)
    p.add_argument("--restart-every", type=float, default=0.0, help="0: never")
    p.add_argument("--restart-jitter", type=float, default=0.0)
    p.add_argument("--down-ms", type=float, default=200.0)
    p.add_argument("--lifetime", type=float, default=900.0)
    args = p.parse_args()
    for name in ("drop", "duplicate", "delay", "drop_ok"):
        if not 0.0 <= getattr(args, name) <= 1.0:
            sys.exit("--%s must be a probability" % name.replace("_", "-"))
    if not args.upstream.startswith("ws://127.0.0.1:"):
        sys.exit("--upstream must be a loopback ws:// URL")
    return args


class Stats:
    def __init__(self):
        self.counts = {k: 0 for k in ("connections", "refused", "events", "dropped", "duplicated", "delayed", "oks_dropped",
                                      "restarts", "cut")}

    def add(self, key, n=1):
        self.counts[key] += n


class Downlink:
    """What goes to one client, in release-time order: held-back events overtake nothing they must not."""

    def __init__(self, client, loop):
        self.client = client
        self.loop = loop
        self.heap = []
        self.seq = itertools.count()
        self.wake = asyncio.Event()
        # Per subscription: when its last held-back stored event goes out (its EOSE waits for it).
        self.pending = {}

    def put(self, text, delay=0.0):
        release = self.loop.time() + delay
        heapq.heappush(self.heap, (release, next(self.seq), text))
        self.wake.set()
        return release

    async def run(self):
        while True:
            if not self.heap:
                self.wake.clear()
                await self.wake.wait()
                continue
            release, _, text = self.heap[0]
            now = self.loop.time()
            if release > now:
                self.wake.clear()
                try:
                    await asyncio.wait_for(self.wake.wait(), timeout=release - now)
                except asyncio.TimeoutError:
                    pass
                continue
            heapq.heappop(self.heap)
            await self.client.send(text)


class Chaos:
    def __init__(self, args):
        self.args = args
        self.rng = random.Random(args.seed)
        self.stats = Stats()
        self.clients = set()
        self.down_until = 0.0

    def chance(self, p):
        return p > 0 and self.rng.random() < p

    async def handle(self, client):
        loop = asyncio.get_running_loop()
        if loop.time() < self.down_until:
            self.stats.add("refused")
            await client.close(code=1013, reason="restarting")
            return
        self.stats.add("connections")
        try:
            upstream = await connect(self.args.upstream, max_size=MAX_MESSAGE, open_timeout=10)
        except Exception:
            await client.close(code=1011, reason="relay unreachable")
            return
        self.clients.add(client)
        down = Downlink(client, loop)
        tasks = [
            asyncio.ensure_future(self.uplink(client, upstream)),
            asyncio.ensure_future(self.from_relay(upstream, down)),
            asyncio.ensure_future(down.run()),
        ]
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        finally:
            self.clients.discard(client)
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await upstream.close()
            await client.close()

    async def uplink(self, client, upstream):
        try:
            async for message in client:
                await upstream.send(message)
        except ConnectionClosed:
            pass

    async def from_relay(self, upstream, down):
        try:
            async for message in upstream:
                self.route(message, down)
        except ConnectionClosed:
            pass

    def route(self, text, down):
        try:
            message = json.loads(text)
        except ValueError:
            down.put(text)
            return
        if not isinstance(message, list) or not message:
            down.put(text)
            return
        if message[0] == "EVENT" and len(message) >= 3:
            self.stats.add("events")
            if self.chance(self.args.drop):
                self.stats.add("dropped")
                return
            copies = 2 if self.chance(self.args.duplicate) else 1
            if copies == 2:
                self.stats.add("duplicated")
            sub = message[1]
            for _ in range(copies):
                delay = 0.0
                if self.chance(self.args.delay):
                    self.stats.add("delayed")
                    delay = self.rng.uniform(0, self.args.max_delay_ms / 1000.0)
                release = down.put(text, delay)
                down.pending[sub] = max(down.pending.get(sub, 0.0), release)
            return
        if message[0] == "OK" and self.chance(self.args.drop_ok):
            self.stats.add("oks_dropped")
            return
        if message[0] in ("EOSE", "CLOSED") and len(message) >= 2:
            # After every stored event already scheduled for this REQ, as the relay sent them.
            held = down.pending.pop(message[1], 0.0) - down.loop.time()
            down.put(text, max(0.0, held) + 0.001)
            return
        down.put(text)

    async def restarts(self):
        if self.args.restart_every <= 0:
            return
        loop = asyncio.get_running_loop()
        while True:
            pause = self.args.restart_every + self.rng.uniform(-self.args.restart_jitter, self.args.restart_jitter)
            await asyncio.sleep(max(0.5, pause))
            self.stats.add("restarts")
            self.down_until = loop.time() + self.args.down_ms / 1000.0
            for client in list(self.clients):
                self.stats.add("cut")
                if self.rng.random() < 0.5:
                    client.transport.abort()
                else:
                    asyncio.ensure_future(client.close(code=1012, reason="restart"))

    async def report(self):
        while True:
            print("STATS " + json.dumps(self.stats.counts, sort_keys=True), flush=True)
            await asyncio.sleep(1.0)


async def main():
    args = parse_args()
    chaos = Chaos(args)
    server = await serve(chaos.handle, "127.0.0.1", args.port, max_size=MAX_MESSAGE, compression=None)
    port = server.sockets[0].getsockname()[1]

    print("READY ws://127.0.0.1:%d" % port, flush=True)
    background = [asyncio.ensure_future(chaos.restarts()), asyncio.ensure_future(chaos.report())]
    await peer_protocol.run_until_stopped(args.lifetime)
    for task in background:
        task.cancel()
    server.close()
    print("STATS " + json.dumps(chaos.stats.counts, sort_keys=True), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
    sys.stdout.flush()
    os._exit(0)
