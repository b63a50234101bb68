"""What Burrow's Python peers share: the JSON-lines request loop and not outliving the test.

Request/response peers (mdk_peer, nostr_peer, relay_client_peer) read one JSON request per
line on stdin and answer one JSON line on stdout: {"ok": true, ...} or {"ok": false,
"error": "..."}. Server peers (local_relay, chaos_relay) run until stdin closes, SIGTERM or
SIGINT, or their lifetime ends. Every peer leaves with os._exit(0): tearing down UniFFI objects
at interpreter exit can crash.
"""
import asyncio
import json
import os
import signal
import sys
import threading
import time


def emit(obj):
    sys.stdout.write(json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def handle(line, ops, call, refuse=lambda op: None):
    """Decodes one request line and answers it with ops[op], run by call(fn, request).

    refuse(op) may return a reason the op cannot run yet (e.g. "init first").
    """
    try:
        request = json.loads(line)
    except ValueError:
        return {"ok": False, "error": "request is not JSON"}
    if not isinstance(request, dict):
        return {"ok": False, "error": "request is not a JSON object"}
    op = request.get("op")
    fn = ops.get(op)
    if fn is None:
        return {"ok": False, "error": "unknown op %r" % (op,)}
    reason = refuse(op)
    if reason:
        return {"ok": False, "error": "%s: %s" % (op, reason)}
    try:
        response = call(fn, request)
    except KeyError as missing:
        return {"ok": False, "error": "%s: missing field %s" % (op, missing)}
    except Exception as exc:  # MDK and nostr-sdk raise their own types; report type and message
        return {"ok": False, "error": "%s: %s: %s" % (op, type(exc).__name__, exc)}
    response["ok"] = True
    return response


def call_on(loop):
    """Runs coroutine ops on `loop` (running in another thread) and waits for each."""
    return lambda fn, request: asyncio.run_coroutine_threadsafe(fn(request), loop).result()


def call_directly(fn, request):
    return fn(request)


def watch_parent():
    """Leaves when reparented: the test process died without closing our stdin (another child
    may hold the pipe)."""
    parent = os.getppid()

    def watch():
        while True:
            time.sleep(1)
            if os.getppid() != parent:
                os._exit(0)

    threading.Thread(target=watch, daemon=True).start()


def serve_requests(ready, answer):
    """Prints the ready line, answers each request line with answer(line), exits at EOF."""
    emit(ready)
    for line in sys.stdin:
        if line.strip():
            emit(answer(line))
    sys.stdout.flush()
    os._exit(0)


async def run_until_stopped(lifetime):
    """For server peers: returns when stdin closes (the parent is gone or done), on SIGTERM or
    SIGINT, or after `lifetime` seconds."""
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)

    def watch_stdin():
        try:
            while sys.stdin.buffer.read(4096):
                pass
        except (OSError, ValueError):
            pass
        loop.call_soon_threadsafe(stop.set)

    threading.Thread(target=watch_stdin, daemon=True).start()
    try:
        await asyncio.wait_for(stop.wait(), timeout=lifetime)
    except asyncio.TimeoutError:
        print("lifetime reached", file=sys.stderr, flush=True)
