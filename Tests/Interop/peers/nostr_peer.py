"""JSON-lines driver over rust-nostr's Python bindings (nostr-sdk 0.45.1).

Burrow's interop tests start this script from the interop venv and talk to it over stdin/stdout:
one JSON request per line in, one JSON response per line out. The first line it prints is
{"ok": true, "ready": true, ...} once nostr_sdk is imported. Every response carries "ok";
failures are {"ok": false, "error": "..."} and the driver keeps serving.

Requests ("op" selects the operation; keys and ids are lowercase hex; events are JSON strings
exactly as nostr-sdk produced them, so the caller sees their bytes):

  ping                                       -> {}
  generate_keys                              -> {secret_key, public_key}
  public_key   {secret_key}                  -> {public_key}
  sign_event   {secret_key, kind, content, tags, created_at}
                                             -> {event}
  verify_event {event}                       -> {valid, id_valid, signature_valid}
  nip44_encrypt {secret_key, public_key, plaintext}
                                             -> {payload}
  nip44_decrypt {secret_key, public_key, payload}
                                             -> {plaintext}
  gift_wrap    {secret_key, recipient, rumor: JSON string of an unsigned event}
            or {secret_key, recipient, kind, content, tags, created_at}
                                             -> {gift_wrap, rumor}
  unwrap       {secret_key, gift_wrap}       -> {rumor, sender, seal}

It exits on EOF on stdin, or when its parent dies, with os._exit(0): tearing down UniFFI
objects at interpreter exit can crash. It never prints secret keys or plaintexts on errors.
"""

import importlib.metadata

import nostr_sdk as ns

import peer_protocol


def _secret(request):
    return ns.SecretKey.parse(request["secret_key"])


def _keys(request):
    return ns.Keys(_secret(request))


def _tags(raw):
    if not isinstance(raw, list) or not all(isinstance(t, list) and t for t in raw):
        raise ValueError("tags must be a list of non-empty lists of strings")
    return [ns.Tag.parse([str(v) for v in tag]) for tag in raw]


def _builder(request):
    builder = ns.EventBuilder(ns.Kind(int(request["kind"])), request["content"])
    builder = builder.tags(_tags(request.get("tags", [])))
    if "created_at" in request:
        builder = builder.custom_created_at(ns.Timestamp.from_secs(int(request["created_at"])))
    return builder


def op_ping(_request):
    return {}


def op_generate_keys(_request):
    keys = ns.Keys.generate()
    return {"secret_key": keys.secret_key().to_hex(), "public_key": keys.public_key().to_hex()}


def op_public_key(request):
    return {"public_key": _keys(request).public_key().to_hex()}


def op_sign_event(request):
    return {"event": _builder(request).finalize(_keys(request)).as_json()}


def op_verify_event(request):
    # Event.from_json parses without checking; verify_id recomputes the id from the fields,
    # verify_signature checks the signature over the id field.
    event = ns.Event.from_json(request["event"])
    id_valid = event.verify_id()
    signature_valid = event.verify_signature()
    return {"valid": event.verify(), "id_valid": id_valid, "signature_valid": signature_valid}


def op_nip44_encrypt(request):
    payload = ns.nip44_encrypt(
        _secret(request), ns.PublicKey.parse(request["public_key"]), request["plaintext"], ns.Nip44Version.V2
    )
    return {"payload": payload}


def op_nip44_decrypt(request):
    plaintext = ns.nip44_decrypt(_secret(request), ns.PublicKey.parse(request["public_key"]), request["payload"])
    return {"plaintext": plaintext}


def op_gift_wrap(request):
    keys = _keys(request)
    if "rumor" in request:
        rumor = ns.UnsignedEvent.from_json(request["rumor"])
    else:
        rumor = _builder(request).finalize_unsigned(keys.public_key())
    rumor = rumor.ensure_id()
    wrap = ns.nip59_make_gift_wrap(keys, ns.PublicKey.parse(request["recipient"]), rumor)
    return {"gift_wrap": wrap.as_json(), "rumor": rumor.as_json()}


def op_unwrap(request):
    keys = _keys(request)
    wrap = ns.Event.from_json(request["gift_wrap"])
    unwrapped = ns.UnwrappedGift.from_gift_wrap(keys, wrap)
    # UnwrappedGift exposes rumor and sender only; the seal is the gift wrap's NIP-44 content.
    seal = ns.nip44_decrypt(keys.secret_key(), wrap.author(), wrap.content())
    return {"rumor": unwrapped.rumor().as_json(), "sender": unwrapped.sender().to_hex(), "seal": seal}


OPS = {name[3:]: fn for name, fn in globals().items() if name.startswith("op_")}


def main():
    peer_protocol.watch_parent()
    ready = {"ok": True, "ready": True, "peer": "nostr-sdk", "version": importlib.metadata.version("nostr-sdk"), "ops": sorted(OPS)}
    peer_protocol.serve_requests(ready, lambda line: peer_protocol.handle(line, OPS, peer_protocol.call_directly))


if __name__ == "__main__":
    main()
