"""JSON-lines driver over Syndace's `doubleratchet` (1.3.0), configured to the Pigeon profile's
Double Ratchet (Docs/protocols/pigeon-dm.md, section 5), for Burrow's live ratchet interop tests.

The library is configured only through its documented extension points (subclasses of its
abstract KDF, AEAD, Diffie-Hellman ratchet and DoubleRatchet classes):

  KDF_RK   doubleratchet.recommended.kdf_hkdf.KDF: HKDF-SHA256, salt = root key, IKM = DH output,
           info "burrow-pigeon-v1:root-chain"; the library's KDFChain derives 32 + 32 bytes and
           keeps [0..32) as the new root key, [32..64) is the chain key.
  KDF_CK   doubleratchet.recommended.kdf_separate_hmacs.KDF with the chain constant b"\\x02\\x01":
           HMAC-SHA256(ck, 0x02) || HMAC-SHA256(ck, 0x01); KDFChain keeps the first as ck', the
           second is the message key mk.
  AEAD     key || nonce = HKDF-SHA256(no salt, IKM = mk, info "burrow-pigeon-v1:message-key", 44),
           AES-256-GCM (cryptography's AESGCM), output ciphertext || 16-byte tag.
  DH       X25519 (recommended Curve25519 ratchet); new key pairs come from a queue the caller may
           fill ("ratchet_keys", for fixed-key cases), else from the CSPRNG.
  AD       associated data passed in = binding (96) || frame[0..18); _build_associated_data
           appends the header DH (32) || pn u32 || n u32, so the AEAD sees binding || frame[0..58).
  limits   dos_protection_threshold = 1000 (MAX_SKIP), max_num_skipped_message_keys = 2000.

Start (section 5.2) uses the library's own DiffieHellmanRatchet.create: with no own key it makes
one and derives the sending chain (the initiator); with the responder's r_r it derives the
receiving chain from DH(r_r, R_i), makes a new key and derives the sending chain (the responder's
DH step "as if header (R_i, 0, 0) had arrived"). The DoubleRatchet is then built from that state
with DoubleRatchet.from_model, so either side can send first, as in the profile
(encrypt_initial_message / decrypt_initial_message would force a message first).

Requests (bytes as lowercase hex; ratchets named by a caller-chosen "id"):

  ratchet_key      {id}                      -> {public}     make r_r for a later init_responder
  init_initiator   {id, root, remote}        -> {public}     DHs made here; returns R_i
  init_responder   {id, root, remote}        -> {public}     uses the key of ratchet_key
  encrypt          {id, session, binding, plaintext} -> {frame}   version 1, type 4 frame
  decrypt          {id, binding, frame}      -> {plaintext}; refusals: {"ok": false, "error":
                                                "decrypt: <exception type>"}, state unchanged
  advance          {id, count}               -> {}   the sending chain steps `count` times
                                                (messages encrypted and dropped: "lost")
  state            {id}                      -> {dhs, dhr, sending_chain_length, receiving_chain_length,
                                                previous_sending_chain_length, skipped, root_key}
  queue_keys       {keys: [private]}         -> {}   the next key pairs the DH ratchet makes (the
                                                vectors' ratchet_keys; one queue per process, and a
                                                key drawn in a refused decrypt goes back to it)
  forget           {id}                      -> {}

Errors name exception types only, never keys or plaintexts.
"""

import importlib.metadata
import struct
import warnings

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

import doubleratchet
from doubleratchet import aead as dr_aead
from doubleratchet.models import DoubleRatchetModel
from doubleratchet.recommended import HashFunction, diffie_hellman_ratchet_curve25519, kdf_hkdf, kdf_separate_hmacs

import peer_protocol

ROOT_CHAIN_INFO = b"burrow-pigeon-v1:root-chain"
MESSAGE_KEY_INFO = b"burrow-pigeon-v1:message-key"
MESSAGE_CHAIN_CONSTANT = b"\x02\x01"
MAX_SKIP = 1000
MAX_STORED_SKIPPED = 2000
FRAME_VERSION = 1
FRAME_TYPE_MESSAGE = 4
FRAME_HEADER_LENGTH = 18
RATCHET_HEADER_LENGTH = 40

# The library warns (instead of refusing) when a new chain's pn skips more than MAX_SKIP keys of
# the old one; decrypt reports the warnings it raised in "warnings".


class RootChainKDF(kdf_hkdf.KDF):
    @staticmethod
    def _get_hash_function():
        return HashFunction.SHA_256

    @staticmethod
    def _get_info():
        return ROOT_CHAIN_INFO


class MessageChainKDF(kdf_separate_hmacs.KDF):
    @staticmethod
    def _get_hash_function():
        return HashFunction.SHA_256


def message_key_material(message_key):
    out = HKDF(algorithm=hashes.SHA256(), length=44, salt=None, info=MESSAGE_KEY_INFO).derive(message_key)
    return out[:32], out[32:]


class PigeonAEAD(dr_aead.AEAD):
    @staticmethod
    async def encrypt(plaintext, key, associated_data):
        aes_key, nonce = message_key_material(key)
        return AESGCM(aes_key).encrypt(nonce, plaintext, associated_data)

    @staticmethod
    async def decrypt(ciphertext, key, associated_data):
        aes_key, nonce = message_key_material(key)
        try:
            return AESGCM(aes_key).decrypt(nonce, ciphertext, associated_data)
        except InvalidTag:
            raise dr_aead.AuthenticationFailedException("AES-GCM tag mismatch") from None


KEY_QUEUE = []


def raw_private(key):
    return key.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption())


class PigeonDHRatchet(diffie_hellman_ratchet_curve25519.DiffieHellmanRatchet):
    @staticmethod
    def _generate_priv():
        if KEY_QUEUE:
            return KEY_QUEUE.pop(0)
        return raw_private(X25519PrivateKey.generate())


class PigeonDoubleRatchet(doubleratchet.DoubleRatchet):
    @staticmethod
    def _build_associated_data(associated_data, header):
        return associated_data + encode_header(header)


def encode_header(header):
    if len(header.ratchet_pub) != 32:
        raise ValueError("ratchet public key is not 32 bytes")
    return header.ratchet_pub + struct.pack(">II", header.previous_sending_chain_length, header.sending_chain_length)


def decode_frame(frame):
    if len(frame) < FRAME_HEADER_LENGTH + RATCHET_HEADER_LENGTH + 16:
        raise ValueError("frame too short")
    if frame[0] != FRAME_VERSION or frame[1] != FRAME_TYPE_MESSAGE:
        raise ValueError("not a version 1 message frame")
    prefix = frame[:FRAME_HEADER_LENGTH]
    body = frame[FRAME_HEADER_LENGTH:]
    pn, n = struct.unpack(">II", body[32:40])
    header = doubleratchet.Header(ratchet_pub=bytes(body[:32]), previous_sending_chain_length=pn, sending_chain_length=n)
    return prefix, doubleratchet.EncryptedMessage(header=header, ciphertext=bytes(body[RATCHET_HEADER_LENGTH:]))


def run(coroutine):
    """Drives one of the library's coroutines to completion. They never wait on anything (no
    I/O, no tasks), so one send() finishes them; an event loop per call would only add its own
    overhead to the benchmark figures."""
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value
    coroutine.close()
    raise RuntimeError("a doubleratchet coroutine suspended")


CONFIG = dict(
    root_chain_kdf=RootChainKDF,
    message_chain_kdf=MessageChainKDF,
    message_chain_constant=MESSAGE_CHAIN_CONSTANT,
    dos_protection_threshold=MAX_SKIP,
)


def start(own_private, remote_public, root):
    """DiffieHellmanRatchet.create, then a DoubleRatchet around it with no skipped keys."""
    dh_ratchet = run(PigeonDHRatchet.create(own_private, remote_public, root_chain_key=root, **CONFIG))
    model = DoubleRatchetModel(diffie_hellman_ratchet=dh_ratchet.model, skipped_message_keys=[])
    return PigeonDoubleRatchet.from_model(
        model, PigeonDHRatchet, max_num_skipped_message_keys=MAX_STORED_SKIPPED, aead=PigeonAEAD, **CONFIG)


def own_public(ratchet):
    return PigeonDHRatchet._derive_pub(ratchet.model.diffie_hellman_ratchet.own_ratchet_priv)


RATCHETS = {}
PENDING_KEYS = {}


def _hex(request, key):
    return bytes.fromhex(request[key])


def _ratchet(request):
    try:
        return RATCHETS[request["id"]]
    except KeyError:
        raise ValueError("no ratchet with this id") from None


def op_ratchet_key(request):
    private = PigeonDHRatchet._generate_priv()
    PENDING_KEYS[request["id"]] = private
    return {"public": PigeonDHRatchet._derive_pub(private).hex()}


def op_init_initiator(request):
    ratchet = start(None, _hex(request, "remote"), _hex(request, "root"))
    RATCHETS[request["id"]] = ratchet
    return {"public": own_public(ratchet).hex()}


def op_init_responder(request):
    try:
        private = PENDING_KEYS.pop(request["id"])
    except KeyError:
        raise ValueError("no ratchet_key for this id") from None
    ratchet = start(private, _hex(request, "remote"), _hex(request, "root"))
    RATCHETS[request["id"]] = ratchet
    return {"public": own_public(ratchet).hex()}


def op_encrypt(request):
    ratchet = _ratchet(request)
    session = _hex(request, "session")
    if len(session) != 16:
        raise ValueError("session id is not 16 bytes")
    prefix = bytes([FRAME_VERSION, FRAME_TYPE_MESSAGE]) + session
    message = run(ratchet.encrypt_message(_hex(request, "plaintext"), _hex(request, "binding") + prefix))
    return {"frame": (prefix + encode_header(message.header) + message.ciphertext).hex()}


def op_decrypt(request):
    ratchet = _ratchet(request)
    prefix, message = decode_frame(_hex(request, "frame"))
    queued = list(KEY_QUEUE)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            plaintext = run(ratchet.decrypt_message(message, _hex(request, "binding") + prefix))
        except Exception as exc:  # AuthenticationFailed, DoSProtection, DuplicateMessage, ...
            # The library discards its state copy; a queued key drawn by the refused DH step
            # goes back too (the profile: a key pair made in a refused step is not consumed).
            KEY_QUEUE[:] = queued
            raise RuntimeError(type(exc).__name__) from None
    return {"plaintext": plaintext.hex(), "warnings": [type(w.message).__name__ for w in caught]}


def op_advance(request):
    ratchet = _ratchet(request)
    count = int(request["count"])
    if not 0 <= count <= 100000:
        raise ValueError("count out of range")
    for _ in range(count):
        run(ratchet.encrypt_message(b"lost", b""))
    return {}


def op_state(request):
    model = _ratchet(request).model
    dh = model.diffie_hellman_ratchet
    symmetric = dh.symmetric_key_ratchet
    return {
        "dhs": PigeonDHRatchet._derive_pub(dh.own_ratchet_priv).hex(),
        "dhr": dh.other_ratchet_pub.hex(),
        "sending_chain_length": None if symmetric.sending_chain is None else symmetric.sending_chain.length,
        "receiving_chain_length": None if symmetric.receiving_chain is None else symmetric.receiving_chain.length,
        "previous_sending_chain_length": symmetric.previous_sending_chain_length,
        "skipped": len(model.skipped_message_keys),
        "root_key": dh.root_chain.key.hex(),
    }


def op_queue_keys(request):
    KEY_QUEUE.extend(bytes.fromhex(key) for key in request["keys"])
    return {}


def op_forget(request):
    RATCHETS.pop(request["id"], None)
    PENDING_KEYS.pop(request["id"], None)
    return {}


OPS = {
    "ping": lambda request: {},
    "ratchet_key": op_ratchet_key,
    "init_initiator": op_init_initiator,
    "init_responder": op_init_responder,
    "encrypt": op_encrypt,
    "decrypt": op_decrypt,
    "advance": op_advance,
    "state": op_state,
    "queue_keys": op_queue_keys,
    "forget": op_forget,
}


def main():
    peer_protocol.watch_parent()
    ready = {"ok": True, "ready": True, "peer": "doubleratchet", "version": importlib.metadata.version("doubleratchet"),
             "ops": sorted(OPS)}
    peer_protocol.serve_requests(ready, lambda line: peer_protocol.handle(line, OPS, peer_protocol.call_directly))


if __name__ == "__main__":
    main()
