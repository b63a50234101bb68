"""Throughput of the Python Pigeon peers (noiseprotocol 0.3.1, Syndace doubleratchet 1.3.0
configured as ratchet_peer.py does) for `make bench`'s Pigeon section.

burrow-bench runs this as a subprocess and prints its figures beside Burrow's, on the same
operations and input sizes:

  handshake        a full Noise_XX_25519_ChaChaPoly_SHA256 handshake, both sides in this
                   process: two NoiseConnections (static keys preset, ephemerals generated),
                   messages 1-3 written and read, with the profile's prologue and payloads
                   (ts 8 B; ratchet key 32 B + card --card-bytes each way)
  session          the handshake plus the session setup of sections 4.4 and 5.2: the ratchet
                   root (HKDF from ck and h), fresh ratchet key pairs r_r and r_i, both ratchets
                   started (DiffieHellmanRatchet.create: one KDF_RK for the initiator, a DH step
                   for the responder) and wrapped in DoubleRatchet.from_model
  message          one message in an established chain: encrypt_message on one side,
                   decrypt_message on the other (--message-bytes of content, padded to the
                   256-byte bucket as the profile does)
  message_dh_step  the same with the direction alternating, so every decrypt makes a DH step
                   (and every encrypt starts a new chain)

Rates are operations per CPU second of this process (time.process_time), best of two runs, as
burrow-bench counts. Usage: bench_pigeon.py [--seconds S] [--message-bytes N] [--card-bytes N].
Prints one JSON object.
"""

import argparse
import importlib.metadata
import json
import os
import sys

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from noise.connection import Keypair, NoiseConnection

import noise_peer  # applies its Split() recording (ck, rs); nothing else
import ratchet_peer as rp

PROLOGUE = b"burrow-pigeon-v1:prologue\x01"


def best_of_two(seconds, body):
    return max(measure(seconds / 2, body), measure(seconds / 2, body))


def measure(seconds, body):
    """As bench_nostr_sdk.py: batches until `seconds` of CPU time (at most twice that of wall
    time); operations per CPU second."""
    import time
    body()
    count = 0
    batch = 8
    cpu_start = time.process_time()
    wall_deadline = time.perf_counter() + 2 * seconds
    while True:
        for _ in range(batch):
            body()
        count += batch
        cpu = time.process_time() - cpu_start
        if cpu >= seconds or time.perf_counter() >= wall_deadline:
            return count / cpu if cpu > 0 else 0.0


def pad(content):
    length = len(content)
    for bucket in (256, 1024, 4096, 16384):
        if bucket >= 2 + length:
            return (length.to_bytes(2, "big") + content).ljust(bucket, b"\0")
    raise ValueError("content too large")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=1.0)
    parser.add_argument("--message-bytes", type=int, default=100)
    parser.add_argument("--card-bytes", type=int, default=330)
    args = parser.parse_args()

    initiator_static = rp.raw_private(rp.X25519PrivateKey.generate())
    responder_static = rp.raw_private(rp.X25519PrivateKey.generate())
    card_i = os.urandom(args.card_bytes)
    card_r = os.urandom(args.card_bytes)
    ts = (1767225600000).to_bytes(8, "big")
    protocol = b"Noise_XX_25519_ChaChaPoly_SHA256"

    def connection(initiator, static):
        c = NoiseConnection.from_name(protocol)
        if initiator:
            c.set_as_initiator()
        else:
            c.set_as_responder()
        c.set_prologue(PROLOGUE)
        c.set_keypair_from_private_bytes(Keypair.STATIC, static)
        c.start_handshake()
        return c

    def handshake(r_r_pub, r_i_pub):
        i = connection(True, initiator_static)
        r = connection(False, responder_static)
        r.read_message(i.write_message(ts))
        payload2 = i.read_message(r.write_message(r_r_pub + card_r))
        payload3 = r.read_message(i.write_message(r_i_pub + card_i))
        if not (i.handshake_finished and r.handshake_finished):
            raise RuntimeError("handshake did not finish")
        return i, r, bytes(payload2[:32]), bytes(payload3[:32])

    placeholder = bytes(32)

    def session():
        r_r = rp.PigeonDHRatchet._generate_priv()
        r_r_pub = rp.PigeonDHRatchet._derive_pub(r_r)
        # The initiator's ratchet key is made by the library (DiffieHellmanRatchet.create with no
        # own key) after handshake2, but R_i travels in handshake3: make it first and queue it, so
        # create() draws it.
        r_i = rp.PigeonDHRatchet._generate_priv()
        r_i_pub = rp.PigeonDHRatchet._derive_pub(r_i)
        i, r, got_r_r, got_r_i = handshake(r_r_pub, r_i_pub)
        roots = []
        for c in (i, r):
            h = bytes(c.get_handshake_hash())
            ck = c.noise_protocol.burrow_chaining_key
            roots.append(HKDF(algorithm=hashes.SHA256(), length=32, salt=h, info=b"burrow-pigeon-v1:ratchet-root").derive(ck))
        rp.KEY_QUEUE.append(r_i)
        alice = rp.start(None, got_r_r, roots[0])
        bob = rp.start(r_r, got_r_i, roots[1])
        return alice, bob

    # Check once that what is measured works: a session, a message each way.
    alice, bob = session()
    binding = os.urandom(96)
    prefix = bytes([1, 4]) + os.urandom(16)
    ad = binding + prefix
    plaintext = pad(os.urandom(args.message_bytes))
    first = rp.run(alice.encrypt_message(plaintext, ad))
    if rp.run(bob.decrypt_message(first, ad)) != plaintext:
        raise SystemExit("self-check failed: message round trip")
    reply = rp.run(bob.encrypt_message(plaintext, ad))
    if rp.run(alice.decrypt_message(reply, ad)) != plaintext:
        raise SystemExit("self-check failed: reply round trip")

    def message():
        m = rp.run(alice.encrypt_message(plaintext, ad))
        rp.run(bob.decrypt_message(m, ad))

    turn = [0]

    def message_dh_step():
        sender, receiver = (alice, bob) if turn[0] % 2 == 0 else (bob, alice)
        turn[0] += 1
        m = rp.run(sender.encrypt_message(plaintext, ad))
        rp.run(receiver.decrypt_message(m, ad))

    s = args.seconds
    results = {
        "handshake": best_of_two(s, lambda: handshake(placeholder, placeholder)),
        "session": best_of_two(s, session),
        "message": best_of_two(s, message),
        "message_dh_step": best_of_two(s, message_dh_step),
    }
    print(json.dumps({
        "peer": "noiseprotocol + doubleratchet",
        "versions": {
            "noiseprotocol": importlib.metadata.version("noiseprotocol"),
            "doubleratchet": importlib.metadata.version("doubleratchet"),
            "cryptography": importlib.metadata.version("cryptography"),
        },
        "python": sys.version.split()[0],
        "ops_per_second": results,
    }))


if __name__ == "__main__":
    main()
