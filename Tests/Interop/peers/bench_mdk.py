"""Wall-clock timings of MDK 0.8.0 (mdk-python, SQLCipher store) for `make bench`'s Marmot section.

burrow-bench runs this as a subprocess and prints its figures beside Burrow's. Every MDK instance
keeps its state in its own SQLCipher database (`new_mdk_with_key`) in the directory given, so each
timed call includes MDK's durable store writes. MDK never talks to relays and nothing here does:
events move between instances as JSON strings. Per group size N, each round builds a fresh group:

  create        creator.create_group with N - 1 KeyPackage events (prepared and signed beforehand)
  add_commit    creator.add_members([one new KeyPackage event]) + creator.merge_pending_commit
  process_commit  a member (joined by the round's Welcome) process_message of that add commit
  send          creator.create_message (a kind-9 chat of --message-bytes ASCII text, distinct per message)
  receive       the member's process_message of that message

Only the MDK calls named are inside time.perf_counter(); preparing KeyPackages (a separate
"factory" instance makes those of invitees who never join), joining and checking results are not.
Messages are exchanged before the add commit, in the group of N.

With --markers every timed call is bracketed by a write of "begin NAME" / "end NAME" to file
descriptor -1 (it fails with EBADF and does nothing), so burrow-bench can count the fsync and
fdatasync calls of each operation under `strace -f`.

Usage: bench_mdk.py --dir DIR --sizes 2,10,50 --rounds 30,20,10 [--messages M] [--message-bytes B] [--markers]
Prints one JSON object: {"peer", "version", "journal", "sizes": {"N": {"create": [ms...], ...}}};
"journal" is "wal" when SQLite left a -wal file beside MDK's databases, else "rollback".
"""

import argparse
import importlib.metadata
import json
import os
import sys
import time

import mdk
import nostr_sdk as ns

RELAYS = ["wss://relay.example.com"]


def key_package_event(factory, keys):
    """A kind-30443 KeyPackage event for `keys`, made by `factory` and signed by `keys`."""
    result = factory.create_key_package_for_event(keys.public_key().to_hex(), RELAYS)
    builder = ns.EventBuilder(ns.Kind(30443), result.key_package).tags([ns.Tag.parse(t) for t in result.tags])
    return builder.finalize(keys).as_json()


def message_text(index, length):
    """Chat text of `length` bytes, distinct per message (as burrow-bench's)."""
    return ("bench message %d " % index).ljust(length, "x")


MARKERS = False
JOURNALS = []


def mark(text):
    """A write to fd -1 that strace shows and nothing else sees."""
    if MARKERS:
        try:
            os.write(-1, text.encode())
        except OSError:
            pass


def timed(samples, name, call):
    mark("begin " + name)
    start = time.perf_counter()
    value = call()
    samples[name].append((time.perf_counter() - start) * 1000)
    mark("end " + name)
    return value


def run_size(directory, size, rounds, messages, message_bytes):
    os.makedirs(directory, exist_ok=True)
    creator_keys, member_keys = ns.Keys.generate(), ns.Keys.generate()
    creator_pk, member_pk = creator_keys.public_key().to_hex(), member_keys.public_key().to_hex()
    creator = mdk.new_mdk_with_key(os.path.join(directory, "creator.db"), os.urandom(32), None)
    member = mdk.new_mdk_with_key(os.path.join(directory, "member.db"), os.urandom(32), None)
    factory = mdk.new_mdk_with_key(os.path.join(directory, "factory.db"), os.urandom(32), None)
    samples = {name: [] for name in ("create", "add_commit", "process_commit", "send", "receive")}

    for _ in range(rounds):
        member_kp = key_package_event(member, member_keys)
        member_kp_id = json.loads(member_kp)["id"]
        others = [key_package_event(factory, ns.Keys.generate()) for _ in range(size - 2)]
        newcomer = key_package_event(factory, ns.Keys.generate())

        created = timed(samples, "create", lambda: creator.create_group(
            creator_pk, [member_kp] + others, "bench", "", RELAYS, [creator_pk]))
        gid = created.group.mls_group_id
        rumors = [r for r in created.welcome_rumors_json if ["e", member_kp_id] in json.loads(r)["tags"]]
        if len(created.welcome_rumors_json) != size - 1 or len(rumors) != 1:
            raise RuntimeError("create_group returned %d welcome rumors" % len(created.welcome_rumors_json))
        welcome = member.process_welcome(os.urandom(32).hex(), rumors[0])
        member.accept_welcome(welcome)
        if len(member.get_members(gid)) != size:
            raise RuntimeError("the member sees %d members, not %d" % (len(member.get_members(gid)), size))

        for m in range(messages):
            text = message_text(m, message_bytes)
            event_json = timed(samples, "send", lambda: creator.create_message(gid, creator_pk, text, 9, None, None))
            result = timed(samples, "receive", lambda: member.process_message(event_json))
            if not result.is_application_message() or json.loads(result.message.event_json)["content"] != text:
                raise RuntimeError("the member did not read the message")

        def add():
            update = creator.add_members(gid, [newcomer])
            creator.merge_pending_commit(gid)
            return update

        update = timed(samples, "add_commit", add)
        result = timed(samples, "process_commit", lambda: member.process_message(update.evolution_event_json))
        if not result.is_commit() or len(member.get_members(gid)) != size + 1:
            raise RuntimeError("the member did not apply the add commit")
    # While the databases are open: SQLite keeps a -wal file beside one in WAL mode.
    JOURNALS.append("wal" if os.path.exists(os.path.join(directory, "creator.db-wal")) else "rollback")
    return samples


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dir", required=True)
    parser.add_argument("--sizes", default="2,10,50")
    parser.add_argument("--rounds", default="30,20,10")
    parser.add_argument("--messages", type=int, default=5)
    parser.add_argument("--message-bytes", type=int, default=100)
    parser.add_argument("--markers", action="store_true")
    args = parser.parse_args()
    global MARKERS
    MARKERS = args.markers
    sizes = [int(s) for s in args.sizes.split(",")]
    rounds = [int(r) for r in args.rounds.split(",")]
    if len(rounds) != len(sizes) or any(s < 2 for s in sizes) or any(r < 1 for r in rounds):
        sys.exit("bench_mdk: --rounds needs one count >= 1 per size, sizes >= 2")
    out = {"peer": "mdk", "version": importlib.metadata.version("mdk-python"), "sizes": {}}
    for size, count in zip(sizes, rounds):
        out["sizes"][str(size)] = run_size(os.path.join(args.dir, "n%d" % size), size, count, args.messages, args.message_bytes)
    out["journal"] = "wal" if "wal" in JOURNALS else "rollback"
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()
    os._exit(0)  # UniFFI teardown at interpreter exit can crash


if __name__ == "__main__":
    main()
