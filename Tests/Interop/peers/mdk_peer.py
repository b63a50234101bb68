"""One MDK 0.8.0 user (mdk-python) talking Marmot through real relays with rust-nostr (nostr-sdk 0.45.1).

Burrow's interop tests start one process per user and drive it over stdin/stdout with the same
JSON-lines conventions as nostr_peer.py: the first line printed is {"ok": true, "ready": true, ...};
every request is an object with "op"; every response carries "ok"; failures are
{"ok": false, "error": "..."} and the peer keeps serving. All ids and keys are lowercase hex.

Every event goes through the relays given to `init` (a nostr-sdk Client): KeyPackages, relay lists
and gift-wrapped Welcomes are published and fetched, group events (kind 445) are published, wait
for the relay's OK and are read back by `sync`. Nothing is passed between users in memory.
Everything is published to the `init` relays (gift wraps too: the invitee's kind-10050 list is not
consulted), so peers and the node under test share those relays.

Requests:
  ping                                          -> {}
  init {dir, relays, secret_key?, fresh_fetches?: false}
                                                -> {pubkey}
      dir: a fresh directory for this user's SQLCipher database (random key, kept in memory only).
      secret_key: the user's Nostr key (hex); generated when absent. Never echoed.
      fresh_fetches: every fetch and publish opens connections of its own (for relays that keep
      cutting connections: nostr-sdk may take a cut connection for a live one until a fetch or an
      OK times out).
  publish_key_package {kinds?: [30443] | [443] | [30443, 443], protected?: false}
                                                -> {event_ids: {"30443": id, "443": id, "10051": id, "10050": id}}
      One MDK KeyPackage signed as kind 30443 (MDK's `tags`) and/or 443 (`tags_legacy`), same content;
      also kind 10051 (KeyPackage relays) and 10050 (inbox relays), one ["relay", url] tag per relay.
  create_group {name, description?, invitees, admins?, kp_kind?, relays?}
                                                -> {mls_group_id, nostr_group_id, welcome_wrap_ids, key_package_event_ids}
      Fetches each invitee's newest KeyPackage event (30443 preferred over 443 unless kp_kind says),
      creates the group (admins default to [me]; relays default to init's), gift-wraps each Welcome
      rumor to its invitee (NIP-59: seal signed by us, wrap by a random key, p tag) and publishes it.
      welcome_wrap_ids and key_package_event_ids follow the order of invitees.
  add_members {group, invitees, kp_kind?}       -> {commit_event_id, welcome_wrap_ids, key_package_event_ids}
      Publishes the commit, waits for the relay OK, merges, then publishes the Welcomes
      (clear_pending_commit when the commit is refused).
  remove_members {group, members}               -> {event_id}   (commit, merged after the relay OK)
  update_group_data {group, name?, description?, admins?, relays?}
                                                -> {event_id}   (commit, merged)
  self_update {group} / self_demote {group}     -> {event_id}   (commit, merged)
  leave_group {group}                           -> {event_id}   (proposal: published, not merged)
  send {group, kind, content, tags?}            -> {event_id, rumor_id}
      rumor_id is MDK's own record of the message it created: the stored Message whose event_id
      is the published kind-445 id (get_messages); the peer does not recompute it.
  sync {accept_welcomes?: true, welcomes?: true, since?, require?: [event ids]}
                                                -> {welcomes, results, messages, missing}
      1. Unless welcomes is false, fetches {"kinds":[1059],"#p":[me]} (no since), unwraps each new wrapper, process_welcome,
         and accept_welcome when asked (never for a group that is already active here).
         welcomes: [{wrapper_id, welcome_id, mls_group_id, nostr_group_id, group_name, welcomer,
         sender, member_count, accepted, already_active}] or [{wrapper_id, error}] for wrappers
         that could not be taken.
      2. For every active group fetches {"kinds":[445],"#h":[nostr_group_id]}, orders them by
         (created_at, order of live arrival on our subscription, id) and hands each one not yet
         processed (and not published by us) to process_message, stopping if we get evicted.
         A PROPOSAL result (MDK's auto-commit, e.g. of a SelfRemove) has its commit published and
         merged once the rest of the batch is read, unless a commit read later in the batch
         already moved the epoch: then MDK's pending commit is cleared instead (MDK 0.8.0 cannot
         roll back a commit it merged itself, so racing with an existing commit would fork us).
         When the epoch moved during the pass, events that failed earlier in it are handed to MDK
         once more ("retry": true; MDK 0.8.0 answers UNPROCESSABLE for ids it recorded as failed,
         unless a rollback marked them retryable).
         results: [{event_id, mls_group_id, created_at, kind: "application" (+ rumor_id, sender)
         | "commit" | "proposal" (+ commit: "published" with commit_event_id, or "superseded")
         | "pending_proposal" | "ignored_proposal" (+ reason) | "external_join_proposal"
         | "unprocessable" | "previously_failed" | "error" (+ error), retry?}]
         messages: [{rumor_id, event_id, sender, kind, content, created_at, tags, state}] newly read.
      since: only group events from that created_at on (the fetch, not MDK, is narrowed).
      require: ids of kind-445 events known to exist (one active group): MDK 0.8.0 records an event
         it cannot open yet as failed for good, so instead of the group's events the peer fetches
         those ids (again and again, up to 60 s) until each of them that it has not processed came
         through; if some never do, nothing is processed and they are listed in `missing`.
  stage_commit {group, action: "self_update" | "update_group_data", name?, description?, admins?, relays?}
                                                -> {event_id, event, created_at}
      Makes a commit and leaves it pending in MDK, neither published nor merged: the caller
      publishes it (publish_event) when it likes, then merge_pending_commit or clear_pending_commit.
  merge_pending_commit {group} / clear_pending_commit {group}
                                                -> {epoch}
  relay_fetch {relays, filter}                  -> {events: [event JSON]}  (oldest first)
  relay_publish {relays, events: [event JSON]}  -> {event_ids}
      Transport for tests that play the network between relays: a client of its own for `relays`,
      any author's events, nothing recorded by this peer.
  accept_welcome {wrapper_id}                   -> {mls_group_id}  (a welcome kept pending by sync)
  group {group}                                 -> {mls_group_id, nostr_group_id, name, description, epoch,
                                                    admins, members, relays, state, self_update_state,
                                                    required_proposals: ["self_remove" | "unknown"]}
  groups                                        -> {groups: [same objects]}
  messages {group}                              -> {messages: [{rumor_id, event_id, sender, kind, content,
                                                    created_at, tags, state}]} (created_at_first)
  ratchet_tree {group}                          -> {tree_hash, serialized_tree, leaf_nodes: [{index,
                                                    encryption_key, signature_key, credential_identity}]}

`group` accepts the MLS group id or the nostr group id (both hex).

Publishing retries (the same event, up to 8 times, reconnecting at once) when a connection drops
before the relay's OK, and fails on a relay's refusal; fetches reconnect dropped relays first.

It exits on EOF on stdin, or when its parent dies, with os._exit(0): tearing down UniFFI objects at
interpreter exit can crash. It never prints secret keys, the database key or plaintexts on errors.
"""

import asyncio
import importlib.metadata
import json
import os
import sys
import threading
import time
from datetime import timedelta

import mdk
import nostr_sdk as ns

import peer_protocol

FETCH_TIMEOUT = timedelta(seconds=10)
OK_TIMEOUT = timedelta(seconds=10)
# With fresh_fetches a cut connection is new anyway: do not wait long for an OK that cannot come.
FRESH_OK_TIMEOUT = timedelta(seconds=3)
LIVE_SUBSCRIPTION = "mdk-peer-445-live"
# Relays cap a REQ's results (LocalRelay at 500): page back with `until` once a page is this big.
PAGE_PROBE = 100
# A relay cut mid-publish (tests put hostile proxies in front of relays): how often to try again.
PUBLISH_ATTEMPTS = 8
RECONNECT_TIMEOUT = 10.0
# How long `sync` keeps fetching for the event ids it was told exist.
REQUIRE_TIMEOUT = 60.0
# NIP-01 prefixes of a relay's own refusal: retrying the same event cannot help.
REFUSALS = ("invalid:", "blocked:", "rate-limited:", "restricted:", "pow:", "error:", "auth-required:", "mute:")



class KeyAuthenticator(ns.Authenticator):
    """Signs NIP-42 kind-22242 events with the user's key (nostr-sdk calls it on AUTH)."""

    def __init__(self, keys):
        super().__init__()
        self.keys = keys

    async def make_auth_event(self, relay_url, challenge):
        tags = [ns.Tag.parse(["relay", str(relay_url)]), ns.Tag.parse(["challenge", challenge])]
        return ns.EventBuilder(ns.Kind(22242), "").tags(tags).finalize(self.keys)

class Peer:
    def __init__(self):
        self.keys = None
        self.client = None
        self.mdk = None
        self.relays = []
        self.processed_wraps = set()
        self.processed_events = set()
        self.own_events = set()
        self.fresh_fetches = False
        # Live arrival order of kind-445 events on our subscription: one sender's events reach the
        # relay in the order they were published, which created_at alone (seconds) cannot tell.
        self.arrival = {}
        self.arrivals = 0

    # ---- plumbing

    def me(self):
        if self.keys is None:
            raise RuntimeError("init first")
        return self.keys.public_key().to_hex()

    async def ensure_connected(self, client=None, force=False):
        """Reconnects relays whose connection dropped, at once (`force`: every relay).

        nostr-sdk waits at least 5 s before it reconnects on its own, meanwhile fetches come back
        empty without an error, and for a moment after a cut it still reports a dead connection
        as connected: a test relay that cuts connections would make us miss events.
        """
        client = client or self.client
        deadline = time.monotonic() + RECONNECT_TIMEOUT
        for relay in (await client.relays()).values():
            if force:
                relay.disconnect()
            while relay.status() != ns.RelayStatus.CONNECTED and time.monotonic() < deadline:
                if relay.status() not in (ns.RelayStatus.INITIALIZED, ns.RelayStatus.TERMINATED):
                    relay.disconnect()
                try:
                    await relay.try_connect(timedelta(seconds=2))
                except Exception:
                    await asyncio.sleep(0.1)

    async def publish(self, event, what, client=None):
        """Publishes until a relay accepts (or already holds) the event; a relay's refusal is final.

        Sending the same event again is harmless (relays answer `duplicate:`), so a connection
        cut before the OK arrived is retried instead of leaving it unknown whether the relay got it.
        """
        if client is None and self.fresh_fetches:
            client = await self.transport_client(self.relays, self.keys)
            try:
                return await self.publish(event, what, client)
            finally:
                await client.shutdown()
        client = client or self.client
        ok_timeout = FRESH_OK_TIMEOUT if self.fresh_fetches else OK_TIMEOUT
        reasons = []
        for attempt in range(PUBLISH_ATTEMPTS):
            if attempt:
                await asyncio.sleep(0.2 * attempt)
            await self.ensure_connected(client, force=attempt > 0)
            try:
                out = await client.send_event(event, ok_timeout=ok_timeout)
            except Exception as exc:
                reasons = ["%s: %s" % (type(exc).__name__, exc)]
                continue
            reasons = [str(reason) for reason in out.failed.values()]
            if out.success or (reasons and all(r.startswith("duplicate") for r in reasons)):
                return event.id().to_hex()
            if any(r.startswith(REFUSALS) for r in reasons):
                break
        raise RuntimeError("relay refused %s: %s" % (what, "; ".join(reasons) or "no answer"))

    async def fetch(self, filter_json, client=None):
        """All events matching the filter, paging back with `until` past a relay's result cap."""
        if client is None and self.fresh_fetches:
            client = await self.transport_client(self.relays, self.keys)
            try:
                return await self.fetch(filter_json, client)
            finally:
                await client.shutdown()
        client = client or self.client
        await self.ensure_connected(client)
        found = {}
        base = json.loads(filter_json)
        until = None
        while True:
            query = dict(base)
            if until is not None:
                query["until"] = until
            try:
                page = await client.fetch_events(
                    ns.ReqTarget.auto([ns.Filter.from_json(json.dumps(query))]), timeout=FETCH_TIMEOUT
                )
            except Exception:
                if not self.fresh_fetches:
                    raise
                return list(found.values())  # a cut connection: what came is what we have
            new = [e for e in page if e.id().to_hex() not in found]
            for event in new:
                found[event.id().to_hex()] = event
            if len(page) < PAGE_PROBE or not new:
                return list(found.values())
            until = min(e.created_at().as_secs() for e in page)

    async def watch_live(self):
        stream = self.client.notifications()
        while True:
            note = await stream.next()
            if note is None or note.is_shutdown():
                return
            if note.is_new_event() and note.subscription_id == LIVE_SUBSCRIPTION:
                event_id = note.event.id().to_hex()
                if event_id not in self.arrival:
                    self.arrivals += 1
                    self.arrival[event_id] = self.arrivals

    def order_key(self, event):
        event_id = event.id().to_hex()
        return (event.created_at().as_secs(), self.arrival.get(event_id, sys.maxsize), event_id)

    def group_id(self, request):
        wanted = str(request["group"]).lower()
        for group in self.mdk.get_groups():
            if wanted in (group.mls_group_id, group.nostr_group_id):
                return group.mls_group_id
        raise RuntimeError("unknown group %s" % wanted)

    async def key_package_event(self, pubkey, kind):
        kinds = [int(kind)] if kind is not None else [30443, 443]
        events = await self.fetch(json.dumps({"kinds": kinds, "authors": [pubkey]}))
        if not events:
            raise RuntimeError("no KeyPackage event of kind %s from %s on the relays" % (kinds, pubkey))
        best_kind = max(events, key=lambda e: e.kind().as_u16() == 30443).kind().as_u16()
        candidates = [e for e in events if e.kind().as_u16() == best_kind]
        return max(candidates, key=lambda e: (e.created_at().as_secs(), e.id().to_hex()))

    async def key_packages(self, invitees, kind):
        return [await self.key_package_event(str(pk).lower(), kind) for pk in invitees]

    async def send_welcomes(self, rumors_json, kp_events):
        """Gift-wraps each rumor to the author of the KeyPackage its `e` tag names; ids in KP order."""
        by_kp = {}
        for rumor_json in rumors_json or []:
            rumor = json.loads(rumor_json)
            for tag in rumor.get("tags", []):
                if len(tag) >= 2 and tag[0] == "e":
                    by_kp[tag[1]] = rumor_json
        wrap_ids = []
        for kp in kp_events:
            rumor_json = by_kp.get(kp.id().to_hex())
            if rumor_json is None:
                raise RuntimeError("MDK returned no Welcome rumor for KeyPackage %s" % kp.id().to_hex())
            rumor = ns.UnsignedEvent.from_json(rumor_json).ensure_id()
            wrap = ns.nip59_make_gift_wrap(self.keys, kp.author(), rumor)
            wrap_ids.append(await self.publish(wrap, "gift wrap"))
        return wrap_ids

    async def publish_commit(self, gid, result, what):
        """MIP-02 order: the commit must be accepted by a relay before we merge it."""
        event = ns.Event.from_json(result.evolution_event_json)
        try:
            event_id = await self.publish(event, what)
        except Exception:
            self.mdk.clear_pending_commit(gid)
            raise
        self.own_events.add(event_id)
        self.mdk.merge_pending_commit(gid)
        return event_id

    def group_object(self, group):
        gid = group.mls_group_id
        active = group.state == "active"
        return {
            "mls_group_id": gid,
            "nostr_group_id": group.nostr_group_id,
            "name": group.name,
            "description": group.description,
            "epoch": group.epoch,
            "admins": sorted(group.admin_pubkeys),
            "members": sorted(self.mdk.get_members(gid)) if active else [],
            "relays": sorted(self.mdk.get_relays(gid)),
            "state": group.state,
            "self_update_state": group.self_update_state,
            "required_proposals": [p.name.lower() for p in self.mdk.group_required_proposals(gid)] if active else [],
        }

    @staticmethod
    def message_object(message):
        rumor = json.loads(message.event_json)
        return {
            "rumor_id": message.id,
            "event_id": message.event_id,
            "sender": message.sender_pubkey,
            "kind": message.kind,
            "content": rumor.get("content", ""),
            "created_at": message.created_at,
            "tags": rumor.get("tags", []),
            "state": message.state,
        }

    # ---- operations

    async def op_init(self, request):
        if self.mdk is not None:
            raise RuntimeError("already initialised")
        directory = request["dir"]
        os.makedirs(directory, exist_ok=True)
        path = os.path.join(directory, "mdk.db")
        if os.path.exists(path):
            raise RuntimeError("%s exists: init needs a fresh directory" % path)
        relays = [str(url) for url in request["relays"]]
        if not relays:
            raise RuntimeError("relays must not be empty")
        secret = request.get("secret_key")
        try:
            keys = ns.Keys(ns.SecretKey.parse(secret)) if secret else ns.Keys.generate()
        except Exception:
            raise RuntimeError("secret_key is not a valid secp256k1 secret key") from None
        # Authenticates (NIP-42) when a relay asks, e.g. before serving our gift wraps.
        client = ns.ClientBuilder().authenticator(KeyAuthenticator(keys)).build()
        for url in relays:
            await client.add_relay(ns.RelayUrl.parse(url))
        output = await client.try_connect(timedelta(seconds=10))
        if not output.success:
            raise RuntimeError("could not connect to any relay: %s" % "; ".join(map(str, output.failed.values())))
        self.keys, self.client, self.relays = keys, client, relays
        self.fresh_fetches = bool(request.get("fresh_fetches", False))
        self.mdk = mdk.new_mdk_with_key(path, os.urandom(32), None)
        asyncio.get_running_loop().create_task(self.watch_live())
        # limit 0: nothing stored, only events published from now on, in the order the relay got them.
        await client.subscribe(ns.ReqTarget.auto([ns.Filter.from_json('{"kinds":[445],"limit":0}')]), id=LIVE_SUBSCRIPTION)
        return {"pubkey": self.me()}

    async def op_publish_key_package(self, request):
        kinds = [int(k) for k in request.get("kinds", [30443])]
        if not kinds or any(k not in (30443, 443) for k in kinds):
            raise RuntimeError("kinds must be a non-empty subset of [30443, 443]")
        result = self.mdk.create_key_package_for_event_with_options(self.me(), self.relays, bool(request.get("protected", False)))
        ids = {}
        for kind in kinds:
            tags = result.tags if kind == 30443 else result.tags_legacy
            event = ns.EventBuilder(ns.Kind(kind), result.key_package).tags([ns.Tag.parse(t) for t in tags]).finalize(self.keys)
            ids[str(kind)] = await self.publish(event, "KeyPackage %d" % kind)
        relay_tags = [ns.Tag.parse(["relay", url]) for url in self.relays]
        for kind in (10051, 10050):
            event = ns.EventBuilder(ns.Kind(kind), "").tags(relay_tags).finalize(self.keys)
            ids[str(kind)] = await self.publish(event, "relay list %d" % kind)
        return {"event_ids": ids}

    async def op_create_group(self, request):
        kps = await self.key_packages(request["invitees"], request.get("kp_kind"))
        admins = [str(a).lower() for a in request.get("admins") or [self.me()]]
        relays = [str(r) for r in request.get("relays") or self.relays]
        created = self.mdk.create_group(
            self.me(), [kp.as_json() for kp in kps], request["name"], request.get("description", ""), relays, admins
        )
        wrap_ids = await self.send_welcomes(created.welcome_rumors_json, kps)
        return {
            "mls_group_id": created.group.mls_group_id,
            "nostr_group_id": created.group.nostr_group_id,
            "welcome_wrap_ids": wrap_ids,
            "key_package_event_ids": [kp.id().to_hex() for kp in kps],
        }

    async def op_add_members(self, request):
        gid = self.group_id(request)
        kps = await self.key_packages(request["invitees"], request.get("kp_kind"))
        result = self.mdk.add_members(gid, [kp.as_json() for kp in kps])
        commit_id = await self.publish_commit(gid, result, "add commit")
        wrap_ids = await self.send_welcomes(result.welcome_rumors_json, kps)
        return {"commit_event_id": commit_id, "welcome_wrap_ids": wrap_ids, "key_package_event_ids": [kp.id().to_hex() for kp in kps]}

    async def op_remove_members(self, request):
        gid = self.group_id(request)
        result = self.mdk.remove_members(gid, [str(m).lower() for m in request["members"]])
        return {"event_id": await self.publish_commit(gid, result, "remove commit")}

    async def op_update_group_data(self, request):
        gid = self.group_id(request)
        update = mdk.GroupDataUpdate(
            name=request.get("name"),
            description=request.get("description"),
            image_hash=None,
            image_key=None,
            image_nonce=None,
            relays=request.get("relays"),
            admins=request.get("admins"),
        )
        result = self.mdk.update_group_data(gid, update)
        return {"event_id": await self.publish_commit(gid, result, "group data commit")}

    async def op_self_update(self, request):
        gid = self.group_id(request)
        return {"event_id": await self.publish_commit(gid, self.mdk.self_update(gid), "self-update commit")}

    async def op_self_demote(self, request):
        gid = self.group_id(request)
        return {"event_id": await self.publish_commit(gid, self.mdk.self_demote(gid), "self-demote commit")}

    async def op_leave_group(self, request):
        gid = self.group_id(request)
        result = self.mdk.leave_group(gid)
        event_id = await self.publish(ns.Event.from_json(result.evolution_event_json), "leave proposal")
        self.own_events.add(event_id)
        return {"event_id": event_id}

    async def op_send(self, request):
        gid = self.group_id(request)
        tags = request.get("tags")
        event_json = self.mdk.create_message(gid, self.me(), request["content"], int(request["kind"]), tags, None)
        event = ns.Event.from_json(event_json)
        if request.get("publish", True):
            event_id = await self.publish(event, "group message")
        else:
            event_id = event.id().to_hex()
        self.own_events.add(event_id)
        # Newest processed first: the message just made is among the first (else look at all).
        stored = [m for m in self.mdk.get_messages(gid, 50, 0, "processed_at_first") if m.event_id == event_id]
        if not stored:
            stored = [m for m in self.mdk.get_messages(gid, None, None, "processed_at_first") if m.event_id == event_id]
        if len(stored) != 1:
            raise RuntimeError("MDK stored %d messages for the event it created" % len(stored))
        return {"event_id": event_id, "rumor_id": stored[0].id, "event": event_json}

    async def op_publish_event(self, request):
        """Publishes an event made earlier (e.g. by send with publish=false)."""
        event = ns.Event.from_json(request["event"])
        event_id = await self.publish(event, "held event")
        self.own_events.add(event_id)
        return {"event_id": event_id}

    async def op_stage_commit(self, request):
        """Makes a commit and keeps it pending in MDK: neither published nor merged."""
        gid = self.group_id(request)
        action = request["action"]
        if action == "self_update":
            result = self.mdk.self_update(gid)
        elif action == "update_group_data":
            result = self.mdk.update_group_data(gid, mdk.GroupDataUpdate(
                name=request.get("name"), description=request.get("description"), image_hash=None, image_key=None,
                image_nonce=None, relays=request.get("relays"), admins=request.get("admins")))
        else:
            raise RuntimeError("action must be self_update or update_group_data")
        event = ns.Event.from_json(result.evolution_event_json)
        return {"event_id": event.id().to_hex(), "event": event.as_json(), "created_at": event.created_at().as_secs()}

    async def op_merge_pending_commit(self, request):
        self.mdk.merge_pending_commit(self.group_id(request))
        return {"epoch": self.epoch(self.group_id(request))}

    async def op_clear_pending_commit(self, request):
        self.mdk.clear_pending_commit(self.group_id(request))
        return {"epoch": self.epoch(self.group_id(request))}

    async def op_relay_fetch(self, request):
        """Transport for tests that play the network: events matching a filter on given relays."""
        client = await self.transport_client(request["relays"])
        try:
            events = await self.fetch(json.dumps(request["filter"]), client)
            return {"events": [e.as_json() for e in sorted(events, key=lambda e: (e.created_at().as_secs(), e.id().to_hex()))]}
        finally:
            await client.shutdown()

    async def op_relay_publish(self, request):
        """Transport for tests that play the network: publishes events (any author) to given relays."""
        client = await self.transport_client(request["relays"])
        try:
            ids = [await self.publish(ns.Event.from_json(e), "relayed event", client) for e in request["events"]]
            return {"event_ids": ids}
        finally:
            await client.shutdown()

    @staticmethod
    async def transport_client(relays, keys=None):
        """A client of its own for `relays`; with `keys` it authenticates (NIP-42) as we do."""
        client = ns.ClientBuilder().authenticator(KeyAuthenticator(keys)).build() if keys else ns.Client()
        for url in relays:
            await client.add_relay(ns.RelayUrl.parse(str(url)))
        await client.try_connect(timedelta(seconds=10))
        return client

    async def op_sync(self, request):
        accept = bool(request.get("accept_welcomes", True))
        welcomes, results, messages = [], [], []

        wraps = await self.fetch(json.dumps({"kinds": [1059], "#p": [self.me()]})) if request.get("welcomes", True) else []
        for wrap in sorted(wraps, key=self.order_key):
            wrapper_id = wrap.id().to_hex()
            if wrapper_id in self.processed_wraps:
                continue
            self.processed_wraps.add(wrapper_id)
            welcomes.append(self.take_welcome(wrap, accept))

        since = request.get("since")
        require = {str(i).lower() for i in request.get("require", [])}
        missing = []
        for group in self.mdk.get_groups():
            if group.state == "active":
                missing += await self.sync_group(group, results, messages, since, require)
        return {"welcomes": welcomes, "results": results, "messages": messages, "missing": sorted(missing)}

    def take_welcome(self, wrap, accept):
        wrapper_id = wrap.id().to_hex()
        try:
            unwrapped = ns.UnwrappedGift.from_gift_wrap(self.keys, wrap)
            rumor = unwrapped.rumor()
            if rumor.kind().as_u16() != 444:
                return {"wrapper_id": wrapper_id, "error": "rumor kind %d is not a Welcome" % rumor.kind().as_u16()}
            already = self.mdk.get_groups()
            welcome = self.mdk.process_welcome(wrapper_id, rumor.as_json())
            active = any(g.mls_group_id == welcome.mls_group_id and g.state == "active" for g in already)
            accepted = False
            if accept and not active:
                self.mdk.accept_welcome(welcome)
                accepted = True
            return {
                "wrapper_id": wrapper_id,
                "welcome_id": welcome.id,
                "mls_group_id": welcome.mls_group_id,
                "nostr_group_id": welcome.nostr_group_id,
                "group_name": welcome.group_name,
                "welcomer": welcome.welcomer,
                "sender": unwrapped.sender().to_hex(),
                "member_count": welcome.member_count,
                "accepted": accepted,
                "already_active": active,
            }
        except Exception as exc:
            return {"wrapper_id": wrapper_id, "error": "%s: %s" % (type(exc).__name__, exc)}

    async def sync_group(self, group, results, messages, since=None, require=frozenset()):
        """Returns the required ids still not fetched when it gave up waiting for them."""
        gid = group.mls_group_id
        query = {"kinds": [445], "#h": [group.nostr_group_id]}
        if since is not None:
            query["since"] = int(since)
        # MDK 0.8.0 records an event it cannot open yet (its epoch's commit not read) as failed
        # and never opens it again, so a caller that knows which events exist can have us fetch
        # exactly those until every one of them came through before MDK sees any.
        events = {} if require else {e.id().to_hex(): e for e in await self.fetch(json.dumps(query))}
        known = self.processed_events | self.own_events
        deadline = time.monotonic() + REQUIRE_TIMEOUT
        missing = require - known - set(events)
        first = True
        while missing and time.monotonic() < deadline:
            if not first:
                await asyncio.sleep(0.05)
                if not self.fresh_fetches:
                    await self.ensure_connected(force=True)
            first = False
            for event in await self.fetch(json.dumps({"ids": sorted(missing)})):
                if event.kind().as_u16() == 445:
                    events[event.id().to_hex()] = event
            missing = require - known - set(events)
        if missing:
            return sorted(missing)
        events = list(events.values())
        fresh = [e for e in events if e.id().to_hex() not in self.processed_events and e.id().to_hex() not in self.own_events]
        failed = []
        auto_commit = None  # (result entry, UpdateGroupResult, epoch when MDK staged it)
        for event in sorted(fresh, key=self.order_key):
            if not self.is_active(gid):
                break  # evicted: nothing later in this group can be ours to read
            self.processed_events.add(event.id().to_hex())
            entry, update = self.process(gid, event, messages)
            results.append(entry)
            if update is not None and auto_commit is None:
                auto_commit = (entry, update, self.epoch(gid))
            if entry["kind"] in ("unprocessable", "previously_failed", "error"):
                failed.append(event)
        if auto_commit is not None:
            await self.finish_auto_commit(gid, *auto_commit)
        if failed and self.is_active(gid) and self.epoch(gid) != group.epoch:
            for event in failed:
                entry, update = self.process(gid, event, messages)
                entry["retry"] = True
                results.append(entry)
                if update is not None:
                    await self.finish_auto_commit(gid, entry, update, self.epoch(gid))
        return []

    async def finish_auto_commit(self, gid, entry, update, staged_epoch):
        """Publishes the commit MDK made for a proposal, unless the batch already held a commit.

        MDK 0.8.0 has every member auto-commit a SelfRemove, and merge_pending_commit keeps no
        rollback snapshot, so a member whose own commit loses the MIP-03 race can never switch to
        the winner. Publishing only after the rest of the fetched batch has been read means a
        member that finds someone else's commit for that proposal follows it instead of racing.
        """
        if self.epoch(gid) != staged_epoch:
            entry["commit"] = "superseded"
            try:
                self.mdk.clear_pending_commit(gid)
            except Exception as exc:
                entry["clear_error"] = "%s: %s" % (type(exc).__name__, exc)
            return
        entry["commit_event_id"] = await self.publish_commit(gid, update, "auto-commit")
        entry["commit"] = "published"

    def is_active(self, gid):
        group = self.mdk.get_group(gid)
        return group is not None and group.state == "active"

    def epoch(self, gid):
        group = self.mdk.get_group(gid)
        return None if group is None else group.epoch

    def process(self, gid, event, messages):
        """Hands one kind-445 event to MDK: (result entry, UpdateGroupResult of an auto-commit or None)."""
        entry = {"event_id": event.id().to_hex(), "mls_group_id": gid, "created_at": event.created_at().as_secs()}
        try:
            result = self.mdk.process_message(event.as_json())
        except Exception as exc:
            entry.update(kind="error", error="%s: %s" % (type(exc).__name__, exc))
            return entry, None
        if result.is_application_message():
            message = self.message_object(result.message)
            messages.append(message)
            entry.update(kind="application", rumor_id=message["rumor_id"], sender=message["sender"])
        elif result.is_proposal():
            entry.update(kind="proposal", welcome_rumors=len(result.result.welcome_rumors_json or []))
            return entry, result.result
        elif result.is_commit():
            entry["kind"] = "commit"
        elif result.is_pending_proposal():
            entry["kind"] = "pending_proposal"
        elif result.is_ignored_proposal():
            entry.update(kind="ignored_proposal", reason=result.reason)
        elif result.is_external_join_proposal():
            entry["kind"] = "external_join_proposal"
        elif result.is_unprocessable():
            entry["kind"] = "unprocessable"
        elif result.is_previously_failed():
            entry["kind"] = "previously_failed"
        else:
            entry["kind"] = type(result).__name__.lower()
        return entry, None

    async def op_accept_welcome(self, request):
        wrapper_id = str(request["wrapper_id"]).lower()
        for welcome in self.mdk.get_pending_welcomes(None, None):
            if welcome.wrapper_event_id == wrapper_id:
                self.mdk.accept_welcome(welcome)
                return {"mls_group_id": welcome.mls_group_id}
        raise RuntimeError("no pending welcome for wrapper %s" % wrapper_id)

    async def op_group(self, request):
        group = self.mdk.get_group(self.group_id(request))
        return self.group_object(group)

    async def op_groups(self, _request):
        return {"groups": [self.group_object(g) for g in self.mdk.get_groups()]}

    async def op_messages(self, request):
        gid = self.group_id(request)
        return {"messages": [self.message_object(m) for m in self.mdk.get_messages(gid, None, None, "created_at_first")]}

    async def op_ratchet_tree(self, request):
        info = self.mdk.get_ratchet_tree_info(self.group_id(request))
        return {
            "tree_hash": info.tree_hash,
            "serialized_tree": info.serialized_tree,
            "leaf_nodes": [
                {
                    "index": leaf.index,
                    "encryption_key": leaf.encryption_key,
                    "signature_key": leaf.signature_key,
                    "credential_identity": leaf.credential_identity,
                }
                for leaf in info.leaf_nodes
            ],
        }

    async def op_ping(self, _request):
        return {}


PEER = Peer()
OPS = {name[3:]: getattr(PEER, name) for name in dir(Peer) if name.startswith("op_")}
NEEDS_INIT = set(OPS) - {"init", "ping"}


def main():
    peer_protocol.watch_parent()
    # One event loop for the whole process: nostr-sdk's futures and our live-arrival watcher run
    # on it between requests too. MDK is only ever called from this loop's thread.
    loop = asyncio.new_event_loop()
    ns.uniffi_set_event_loop(loop)  # the NIP-42 authenticator is called back on this loop
    threading.Thread(target=loop.run_forever, daemon=True).start()
    ready = {
        "ok": True,
        "ready": True,
        "peer": "mdk",
        "version": importlib.metadata.version("mdk-python"),
        "nostr_sdk": importlib.metadata.version("nostr-sdk"),
        "ops": sorted(OPS),
    }
    call = peer_protocol.call_on(loop)
    refuse = lambda op: "init first" if op in NEEDS_INIT and PEER.mdk is None else None
    peer_protocol.serve_requests(ready, lambda line: peer_protocol.handle(line, OPS, call, refuse))


if __name__ == "__main__":
    main()
