"""JSON-lines driver over the `noiseprotocol` package (0.3.1) for Burrow's Pigeon Noise interop.

PigeonNoiseInteropTests starts this script from the interop venv and runs live XX handshakes
between noiseprotocol and Burrow's NoiseXX over stdin/stdout (no sockets): one JSON request per
line in, one JSON response per line out. The first line is {"ok": true, "ready": true, ...}.
Bytes are lowercase hex. Handshakes are named by a caller-chosen "id".

  start     {id, role: "initiator"|"responder", prologue, static, [ephemeral]}
                                         -> {static_public}
            a Noise_XX_25519_ChaChaPoly_SHA256 NoiseConnection; `static` (and, for fixed-key
            cases, `ephemeral`) are private keys. Without `ephemeral` noiseprotocol makes one.
  write     {id, payload}                -> {message, finished}
  read      {id, message}                -> {payload, finished}; a refused message answers
                                            {"ok": false, "error": "read: <exception type>"}:
                                            the connection is then unusable (noiseprotocol does
                                            not roll back), so callers start a new one.
  result    {id}                         -> {handshake_hash, chaining_key, split_1, split_2,
                                            ratchet_root, remote_static}
            after the handshake: h (noiseprotocol's get_handshake_hash), ck at Split(), the two
            Split() keys (initiator->responder first), the profile's ratchet root
            HKDF-SHA256(salt = h, IKM = ck, info "burrow-pigeon-v1:ratchet-root", 32) computed
            here with `cryptography`, and the peer's static public key.
  encrypt   {id, plaintext}              -> {ciphertext}   (transport, through Split()'s cipher)
  decrypt   {id, ciphertext}             -> {plaintext}
  forget    {id}                         -> {}

`chaining_key`: noiseprotocol drops its SymmetricState and HandshakeState at Split(), so this
script wraps noise.state.SymmetricState.split (the same function, called unchanged) to keep `ck`
as Split() received it, and the remote static key `rs` the handshake learned. That is the only instrumentation; every byte on the wire is noiseprotocol's own.
Keys and payloads travel only in responses on the pipe; errors name exception types, never
their bytes.
"""

import importlib.metadata
import warnings

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from noise.connection import Keypair, NoiseConnection
import noise.state

import peer_protocol

PROTOCOL = b"Noise_XX_25519_ChaChaPoly_SHA256"
RATCHET_ROOT_INFO = b"burrow-pigeon-v1:ratchet-root"

# Fixed ephemeral keys make noiseprotocol warn ("OK for testing"); that is what they are for here.
warnings.filterwarnings("ignore", message="One of ephemeral keypairs is already set")

_original_split = noise.state.SymmetricState.split


def _recording_split(self):
    protocol = self.noise_protocol
    protocol.burrow_chaining_key = bytes(self.ck)
    # The remote static key learned in the handshake lives in the HandshakeState, which
    # noiseprotocol also deletes at Split().
    protocol.burrow_remote_static = bytes(protocol.handshake_state.rs.public_bytes)
    return _original_split(self)


noise.state.SymmetricState.split = _recording_split

SESSIONS = {}


def _hex(request, key):
    return bytes.fromhex(request[key])


def _session(request):
    try:
        return SESSIONS[request["id"]]
    except KeyError:
        raise ValueError("no handshake with this id") from None


def op_start(request):
    role = request["role"]
    if role not in ("initiator", "responder"):
        raise ValueError("role must be initiator or responder")
    connection = NoiseConnection.from_name(PROTOCOL)
    if role == "initiator":
        connection.set_as_initiator()
    else:
        connection.set_as_responder()
    connection.set_prologue(_hex(request, "prologue"))
    connection.set_keypair_from_private_bytes(Keypair.STATIC, _hex(request, "static"))
    if request.get("ephemeral"):
        connection.set_keypair_from_private_bytes(Keypair.EPHEMERAL, _hex(request, "ephemeral"))
    connection.start_handshake()
    connection.burrow_initiator = role == "initiator"  # noiseprotocol deletes its own flag at Split()
    SESSIONS[request["id"]] = connection
    static = connection.noise_protocol.keypairs["s"]
    return {"static_public": static.public_bytes.hex()}


def op_write(request):
    connection = _session(request)
    message = connection.write_message(_hex(request, "payload"))
    return {"message": bytes(message).hex(), "finished": connection.handshake_finished}


def op_read(request):
    connection = _session(request)
    try:
        payload = connection.read_message(_hex(request, "message"))
    except Exception as exc:  # InvalidTag, NoiseInvalidMessage, ...: name the type only
        raise RuntimeError(type(exc).__name__) from None
    return {"payload": bytes(payload).hex(), "finished": connection.handshake_finished}


def op_result(request):
    connection = _session(request)
    if not connection.handshake_finished:
        raise ValueError("handshake not finished")
    protocol = connection.noise_protocol
    initiator = connection.burrow_initiator
    encrypt_key = bytes(protocol.cipher_state_encrypt.k)
    decrypt_key = bytes(protocol.cipher_state_decrypt.k)
    split_1, split_2 = (encrypt_key, decrypt_key) if initiator else (decrypt_key, encrypt_key)
    h = bytes(connection.get_handshake_hash())
    ck = protocol.burrow_chaining_key
    root = HKDF(algorithm=hashes.SHA256(), length=32, salt=h, info=RATCHET_ROOT_INFO).derive(ck)
    return {
        "handshake_hash": h.hex(),
        "chaining_key": ck.hex(),
        "ratchet_root": root.hex(),
        "split_1": split_1.hex(),
        "split_2": split_2.hex(),
        "remote_static": protocol.burrow_remote_static.hex(),
    }


def op_encrypt(request):
    return {"ciphertext": bytes(_session(request).encrypt(_hex(request, "plaintext"))).hex()}


def op_decrypt(request):
    try:
        plaintext = _session(request).decrypt(_hex(request, "ciphertext"))
    except Exception as exc:
        raise RuntimeError(type(exc).__name__) from None
    return {"plaintext": bytes(plaintext).hex()}


def op_forget(request):
    SESSIONS.pop(request["id"], None)
    return {}


OPS = {
    "ping": lambda request: {},
    "start": op_start,
    "write": op_write,
    "read": op_read,
    "result": op_result,
    "encrypt": op_encrypt,
    "decrypt": op_decrypt,
    "forget": op_forget,
}


def main():
    peer_protocol.watch_parent()
    ready = {"ok": True, "ready": True, "peer": "noiseprotocol", "version": importlib.metadata.version("noiseprotocol"),
             "ops": sorted(OPS)}
    peer_protocol.serve_requests(ready, lambda line: peer_protocol.handle(line, OPS, peer_protocol.call_directly))


if __name__ == "__main__":
    main()
