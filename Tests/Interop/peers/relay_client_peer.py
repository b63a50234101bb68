"""JSON-lines driver for one rust-nostr client (nostr-sdk 0.45.1) connected to one relay.

Burrow's relay tests start this script from the interop venv and talk to it over stdin/stdout:
one JSON request per line in, one JSON response per line out. The first line it prints is
{"ok": true, "ready": true, ...}. Every response carries "ok"; failures are
{"ok": false, "error": "..."} and the driver keeps serving. Events are JSON strings as
nostr-sdk produced or received them; keys and ids are lowercase hex.

Requests ("op" selects the operation):

  ping                                       -> {}
  connect   {url, secret_key?, authenticate?}
            A nostr_sdk Client for `url`; with authenticate (default true) it answers NIP-42
            challenges with its key, as nostr-sdk does on its own.
                                             -> {public_key}
  publish   {kind, content, tags?, created_at?, secret_key?}
            Signs (with secret_key, else the client's key) and sends with Client.send_event.
                                             -> {event_id, event, accepted, message}
  publish_event {event}                      -> {event_id, accepted, message}
  fetch     {filters, timeout?}              Client.fetch_events -> {events}
  subscribe {id, filters}                    Client.subscribe with this subscription id -> {}
  wait      {id, count?, eose?, closed?, timeout?}
            Waits until the subscription has `count` events, has seen EOSE, or was CLOSED
            (whichever was asked), or the timeout passes.
                                             -> {events, eose, closed, timed_out}
  unsubscribe {id}                           -> {}
  messages  {since?}                         every relay message received, as JSON -> {messages, next}
  nip11     {url}                            HTTP GET with Accept: application/nostr+json, read
                                             with nostr-sdk's RelayInformationDocument
                                             -> {document, name, supported_nips}

It exits on EOF on stdin, or when its parent dies, with os._exit(0).
"""

import asyncio
import importlib.metadata
import json
import threading
import time
import urllib.request
from datetime import timedelta

import nostr_sdk as ns

import peer_protocol

OK_TIMEOUT = timedelta(seconds=10)


class KeyAuthenticator(ns.Authenticator):
    """Signs NIP-42 kind-22242 events with the client's key (nostr-sdk calls it on AUTH)."""

    def __init__(self, keys):
        super().__init__()
        self.keys = keys

    async def make_auth_event(self, relay_url, challenge):
        tags = [ns.Tag.parse(["relay", str(relay_url)]), ns.Tag.parse(["challenge", challenge])]
        return ns.EventBuilder(ns.Kind(22242), "").tags(tags).finalize(self.keys)


def _tags(raw):
    if not isinstance(raw, list) or not all(isinstance(t, list) and t for t in raw):
        raise ValueError("tags must be a list of non-empty lists of strings")
    return [ns.Tag.parse([str(v) for v in tag]) for tag in raw]


def _filters(raw):
    if not isinstance(raw, list) or not raw:
        raise ValueError("filters must be a non-empty list of filter objects")
    return [ns.Filter.from_json(json.dumps(f)) for f in raw]


class Peer:
    def __init__(self):
        self.client = None
        self.keys = None
        self.url = None
        self.messages = []  # every relay message, as JSON text, in arrival order
        self.changed = None  # asyncio.Condition, created on the loop

    async def watch(self):
        stream = self.client.notifications()
        while True:
            note = await stream.next()
            if note is None or note.is_shutdown():
                return
            if note.is_message():
                async with self.changed:
                    self.messages.append(note.message.as_json())
                    self.changed.notify_all()

    def _subscription_state(self, sub_id):
        events, eose, closed = [], False, None
        for text in self.messages:
            message = json.loads(text)
            if len(message) < 2 or message[1] != sub_id:
                continue
            if message[0] == "EVENT":
                events.append(json.dumps(message[2], separators=(",", ":"), ensure_ascii=False))
            elif message[0] == "EOSE":
                eose = True
            elif message[0] == "CLOSED":
                closed = message[2] if len(message) > 2 else ""
        return events, eose, closed

    async def _send(self, event):
        out = await self.client.send_event(event, ok_timeout=OK_TIMEOUT)
        failed = [str(reason) for reason in out.failed.values()]
        return {"event_id": event.id().to_hex(), "accepted": bool(out.success), "message": "; ".join(failed)}

    # ---- operations

    async def op_ping(self, _request):
        return {}

    async def op_connect(self, request):
        if self.client is not None:
            raise RuntimeError("already connected")
        secret = request.get("secret_key")
        self.keys = ns.Keys(ns.SecretKey.parse(secret)) if secret else ns.Keys.generate()
        builder = ns.ClientBuilder()
        if request.get("authenticate", True):
            builder = builder.authenticator(KeyAuthenticator(self.keys))
        self.client = builder.build()
        self.changed = asyncio.Condition()
        self.url = request["url"]
        await self.client.add_relay(ns.RelayUrl.parse(self.url))
        asyncio.get_running_loop().create_task(self.watch())
        output = await self.client.try_connect(timedelta(seconds=10))
        if not output.success:
            raise RuntimeError("could not connect: %s" % "; ".join(map(str, output.failed.values())))
        return {"public_key": self.keys.public_key().to_hex()}

    async def op_publish(self, request):
        keys = ns.Keys(ns.SecretKey.parse(request["secret_key"])) if request.get("secret_key") else self.keys
        builder = ns.EventBuilder(ns.Kind(int(request["kind"])), request["content"]).tags(_tags(request.get("tags", [])))
        if "created_at" in request:
            builder = builder.custom_created_at(ns.Timestamp.from_secs(int(request["created_at"])))
        event = builder.finalize(keys)
        answer = await self._send(event)
        answer["event"] = event.as_json()
        return answer

    async def op_publish_event(self, request):
        return await self._send(ns.Event.from_json(request["event"]))

    async def op_fetch(self, request):
        timeout = timedelta(seconds=float(request.get("timeout", 10)))
        events = await self.client.fetch_events(ns.ReqTarget.auto(_filters(request["filters"])), timeout=timeout)
        return {"events": [e.as_json() for e in events]}

    async def op_subscribe(self, request):
        await self.client.subscribe(ns.ReqTarget.auto(_filters(request["filters"])), id=str(request["id"]))
        return {}

    async def op_wait(self, request):
        sub_id = str(request["id"])
        count = request.get("count")
        want_eose = request.get("eose", False)
        want_closed = request.get("closed", False)
        deadline = time.monotonic() + float(request.get("timeout", 10))

        def done():
            events, eose, closed = self._subscription_state(sub_id)
            return ((count is not None and len(events) >= count) or (want_eose and eose)
                    or (want_closed and closed is not None))

        timed_out = False
        async with self.changed:
            while not done():
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    timed_out = True
                    break
                try:
                    await asyncio.wait_for(self.changed.wait(), timeout=remaining)
                except asyncio.TimeoutError:
                    pass
        events, eose, closed = self._subscription_state(sub_id)
        return {"events": events, "eose": eose, "closed": closed, "timed_out": timed_out}

    async def op_unsubscribe(self, request):
        await self.client.unsubscribe(str(request["id"]))
        return {}

    async def op_messages(self, request):
        since = int(request.get("since", 0))
        return {"messages": self.messages[since:], "next": len(self.messages)}

    async def op_nip11(self, request):
        url = request["url"].replace("ws://", "http://", 1).replace("wss://", "https://", 1)
        http = urllib.request.Request(url, headers={"Accept": "application/nostr+json"})
        loop = asyncio.get_running_loop()
        body = await loop.run_in_executor(None, lambda: urllib.request.urlopen(http, timeout=10).read().decode())
        document = ns.RelayInformationDocument.from_json(body)
        return {"document": body, "name": document.name(), "supported_nips": list(document.supported_nips() or [])}


PEER = Peer()
OPS = {name[3:]: getattr(PEER, name) for name in dir(Peer) if name.startswith("op_")}
NEEDS_CONNECT = set(OPS) - {"connect", "ping", "nip11"}


def main():
    peer_protocol.watch_parent()
    # One event loop for the whole process: nostr-sdk's futures, the authenticator callback
    # and the notification watcher all run on it.
    loop = asyncio.new_event_loop()
    ns.uniffi_set_event_loop(loop)
    threading.Thread(target=loop.run_forever, daemon=True).start()
    ready = {"ok": True, "ready": True, "peer": "nostr-sdk client", "version": importlib.metadata.version("nostr-sdk"), "ops": sorted(OPS)}
    call = peer_protocol.call_on(loop)
    refuse = lambda op: "connect first" if op in NEEDS_CONNECT and PEER.client is None else None
    peer_protocol.serve_requests(ready, lambda line: peer_protocol.handle(line, OPS, call, refuse))


if __name__ == "__main__":
    main()
