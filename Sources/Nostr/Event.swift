/// An event as it arrives from a relay, the radio or a file: well-typed, but its id and
/// signature are not checked yet. Only `verified()` turns it into an `Event`.
public struct UnverifiedEvent: Sendable, Hashable, TaggedEvent {
    public let id: EventID
    public let pubkey: PublicKey
    public let createdAt: Int64
    public let kind: Int
    public let tags: [[String]]
    public let content: String
    public let sig: [UInt8]

    /// Decodes a NIP-01 event object from untrusted JSON bytes.
    public init(json: [UInt8]) throws {
        try self.init(jsonValue: JSONValue.parse(json))
    }

    public init(json: String) throws {
        try self.init(json: Array(json.utf8))
    }

    /// Decodes from an already parsed JSON value (e.g. the third element of `["EVENT",…]`).
    /// Unknown members are ignored; every NIP-01 member must be present with its exact type.
    public init(jsonValue: JSONValue) throws {
        let object = try EventFields.object(jsonValue)
        id = try EventID(bytes: EventFields.lowercaseHex(EventFields.required(object, "id"), field: "id", bytes: 32))
        pubkey = try EventFields.publicKey(EventFields.required(object, "pubkey"), field: "pubkey")
        createdAt = try EventFields.timestamp(EventFields.required(object, "created_at"), field: "created_at")
        kind = try EventFields.kind(EventFields.required(object, "kind"))
        tags = try EventFields.tags(EventFields.required(object, "tags"))
        content = try EventFields.string(EventFields.required(object, "content"), field: "content")
        sig = try EventFields.lowercaseHex(EventFields.required(object, "sig"), field: "sig", bytes: 64)
    }

    /// The NIP-01 canonical serialization of this event's fields.
    public var canonicalSerialization: [UInt8] {
        EventFields.canonicalSerialization(pubkey: pubkey, createdAt: createdAt, kind: kind, tags: tags, content: content)
    }

    /// Checks id = sha256(canonical serialization) and the BIP-340 signature over the id.
    public func verified() throws -> Event {
        let computed = EventID(digestOf: canonicalSerialization)
        guard computed == id else { throw NostrError.idMismatch }
        guard Schnorr.verify(signature: sig, message: id.bytes, publicKey: pubkey) else {
            throw NostrError.invalidSignature
        }
        return Event(id: id, pubkey: pubkey, createdAt: createdAt, kind: kind, tags: tags, content: content, sig: sig)
    }
}

/// A NIP-01 event whose id and signature have been checked (or that we signed ourselves).
/// The only event type the rest of Burrow accepts.
public struct Event: Sendable, Hashable, TaggedEvent {
    public let id: EventID
    public let pubkey: PublicKey
    public let createdAt: Int64
    public let kind: Int
    public let tags: [[String]]
    public let content: String
    /// The 64-byte BIP-340 signature over `id`.
    public let sig: [UInt8]

    init(id: EventID, pubkey: PublicKey, createdAt: Int64, kind: Int, tags: [[String]], content: String, sig: [UInt8]) {
        self.id = id
        self.pubkey = pubkey
        self.createdAt = createdAt
        self.kind = kind
        self.tags = tags
        self.content = content
        self.sig = sig
    }

    /// Builds, hashes and signs an event; aux randomness for BIP-340 comes from `rng`.
    public static func sign<R: RandomNumberGenerator>(
        kind: Int, content: String, tags: [[String]] = [], createdAt: Int64, keys: Keys, rng: inout R
    ) throws -> Event {
        guard Kind.validRange.contains(kind) else { throw NostrError.kindOutOfRange(Int64(kind)) }
        guard createdAt >= 0 else { throw NostrError.invalidField("created_at", reason: "negative") }
        let pubkey = keys.publicKey
        let id = EventID(digestOf: EventFields.canonicalSerialization(
            pubkey: pubkey, createdAt: createdAt, kind: kind, tags: tags, content: content))
        let sig = try keys.sign(id.bytes, using: &rng)
        return Event(id: id, pubkey: pubkey, createdAt: createdAt, kind: kind, tags: tags, content: content, sig: sig)
    }

    /// As above with the given 32 bytes of BIP-340 aux randomness (reproducible events: vectors).
    public static func sign(kind: Int, content: String, tags: [[String]] = [], createdAt: Int64, keys: Keys, auxRand: [UInt8]) throws -> Event {
        guard Kind.validRange.contains(kind) else { throw NostrError.kindOutOfRange(Int64(kind)) }
        guard createdAt >= 0 else { throw NostrError.invalidField("created_at", reason: "negative") }
        let pubkey = keys.publicKey
        let id = EventID(digestOf: EventFields.canonicalSerialization(
            pubkey: pubkey, createdAt: createdAt, kind: kind, tags: tags, content: content))
        let sig = try keys.sign(id.bytes, auxRand: auxRand)
        return Event(id: id, pubkey: pubkey, createdAt: createdAt, kind: kind, tags: tags, content: content, sig: sig)
    }

    public var kindClass: KindClass { KindClass(kind: kind) }

    /// The NIP-01 canonical serialization `[0,pubkey,created_at,kind,tags,content]`.
    public var canonicalSerialization: [UInt8] {
        EventFields.canonicalSerialization(pubkey: pubkey, createdAt: createdAt, kind: kind, tags: tags, content: content)
    }

    /// The event as a NIP-01 JSON object (id, pubkey, created_at, kind, tags, content, sig).
    public var jsonString: String { String(decoding: jsonBytes, as: UTF8.self) }

    public var jsonBytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(260 + content.utf8.count + tags.count * 80)
        write(to: &out)
        return out
    }

    /// Appends the JSON object to `out` (relay messages embed events without re-parsing).
    public func write(to out: inout [UInt8]) {
        EventFields.writeObjectFields(id: id, pubkey: pubkey, createdAt: createdAt, kind: kind, tags: tags, content: content, to: &out)
        out.append(contentsOf: ",\"sig\":\"".utf8)
        out.append(contentsOf: Hex.encode(sig).utf8)
        out.append(contentsOf: "\"}".utf8)
    }

    /// The event as a parsed JSON value, for callers composing larger JSON documents.
    public var jsonValue: JSONValue {
        .object([
            JSONMember("id", .string(id.hex)),
            JSONMember("pubkey", .string(pubkey.hex)),
            JSONMember("created_at", .integer(createdAt)),
            JSONMember("kind", .integer(Int64(kind))),
            JSONMember("tags", .array(tags.map { .array($0.map { .string($0) }) })),
            JSONMember("content", .string(content)),
            JSONMember("sig", .string(Hex.encode(sig))),
        ])
    }

    /// The same event as untrusted input (e.g. to re-verify something read back from storage).
    public var unverified: UnverifiedEvent {
        UnverifiedEvent(id: id, pubkey: pubkey, createdAt: createdAt, kind: kind, tags: tags, content: content, sig: sig)
    }
}

extension UnverifiedEvent {
    init(id: EventID, pubkey: PublicKey, createdAt: Int64, kind: Int, tags: [[String]], content: String, sig: [UInt8]) {
        self.id = id
        self.pubkey = pubkey
        self.createdAt = createdAt
        self.kind = kind
        self.tags = tags
        self.content = content
        self.sig = sig
    }

    public var kindClass: KindClass { KindClass(kind: kind) }
}
