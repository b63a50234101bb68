/// NIP-59 rumor: an event with an id but deliberately no signature, so that it is deniable
/// when leaked. Decoding recomputes the id and rejects a rumor that carries a `sig`.
public struct Rumor: Sendable, Hashable, TaggedEvent {
    public let id: EventID
    public let pubkey: PublicKey
    public let createdAt: Int64
    public let kind: Int
    public let tags: [[String]]
    public let content: String

    /// Builds a rumor and computes its id.
    public init(pubkey: PublicKey, createdAt: Int64, kind: Int, tags: [[String]] = [], content: String) throws {
        guard Kind.validRange.contains(kind) else { throw NostrError.kindOutOfRange(Int64(kind)) }
        guard createdAt >= 0 else { throw NostrError.invalidField("created_at", reason: "negative") }
        self.pubkey = pubkey
        self.createdAt = createdAt
        self.kind = kind
        self.tags = tags
        self.content = content
        self.id = EventID(digestOf: EventFields.canonicalSerialization(
            pubkey: pubkey, createdAt: createdAt, kind: kind, tags: tags, content: content))
    }

    public init(json: [UInt8]) throws {
        try self.init(jsonValue: JSONValue.parse(json))
    }

    public init(json: String) throws {
        try self.init(json: Array(json.utf8))
    }

    /// Decodes an untrusted rumor: every field typed as in NIP-01, `id` required and equal to
    /// the hash of the fields, no `sig` member.
    public init(jsonValue: JSONValue) throws {
        let object = try EventFields.object(jsonValue)
        guard object["sig"] == nil else { throw NostrError.rumorSigned }
        let statedID = try EventFields.lowercaseHex(EventFields.required(object, "id"), field: "id", bytes: 32)
        try self.init(
            pubkey: EventFields.publicKey(EventFields.required(object, "pubkey"), field: "pubkey"),
            createdAt: EventFields.timestamp(EventFields.required(object, "created_at"), field: "created_at"),
            kind: EventFields.kind(EventFields.required(object, "kind")),
            tags: EventFields.tags(EventFields.required(object, "tags")),
            content: EventFields.string(EventFields.required(object, "content"), field: "content"))
        guard id.bytes == statedID else { throw NostrError.idMismatch }
    }

    public var kindClass: KindClass { KindClass(kind: kind) }

    public var canonicalSerialization: [UInt8] {
        EventFields.canonicalSerialization(pubkey: pubkey, createdAt: createdAt, kind: kind, tags: tags, content: content)
    }

    /// JSON object in rust-nostr's order: id, pubkey, created_at, kind, tags, content.
    public var jsonString: String { String(decoding: jsonBytes, as: UTF8.self) }

    public var jsonBytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(200 + content.utf8.count + tags.count * 80)
        EventFields.writeObjectFields(id: id, pubkey: pubkey, createdAt: createdAt, kind: kind, tags: tags, content: content, to: &out)
        out.append(UInt8(ascii: "}"))
        return out
    }
}
