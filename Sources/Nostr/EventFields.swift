/// Field-level decoding shared by `UnverifiedEvent`, `Rumor` and `Filter`: strict JSON types,
/// lowercase hex of exact length, kinds in 0…65535, tags as arrays of arrays of strings.
enum EventFields {
    static func object(_ value: JSONValue) throws -> JSONValue {
        guard case .object = value else { throw NostrError.expectedObject }
        return value
    }

    static func required(_ object: JSONValue, _ key: String) throws -> JSONValue {
        guard let value = object[key] else { throw NostrError.missingField(key) }
        return value
    }

    static func string(_ value: JSONValue, field: String) throws -> String {
        guard case .string(let s) = value else { throw NostrError.invalidField(field, reason: "not a string") }
        return s
    }

    /// Lowercase hex of exactly `bytes` bytes, as NIP-01 requires for ids, keys and signatures.
    static func lowercaseHex(_ value: JSONValue, field: String, bytes: Int) throws -> [UInt8] {
        guard case .string(let s) = value else { throw NostrError.invalidField(field, reason: "not a string") }
        return try lowercaseHex(s, field: field, bytes: bytes)
    }

    static func lowercaseHex(_ s: String, field: String, bytes: Int) throws -> [UInt8] {
        let utf8 = s.utf8
        guard utf8.count == bytes * 2,
              utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }),
              let decoded = try? Hex.decode(s, length: bytes)
        else { throw NostrError.invalidHex(field: field, expectedBytes: bytes) }
        return decoded
    }

    static func publicKey(_ value: JSONValue, field: String) throws -> PublicKey {
        try PublicKey(bytes: lowercaseHex(value, field: field, bytes: 32))
    }

    /// A non-negative integer timestamp (rust-nostr and most relays use unsigned seconds).
    static func timestamp(_ value: JSONValue, field: String) throws -> Int64 {
        guard case .integer(let t) = value else { throw NostrError.invalidField(field, reason: "not an integer") }
        guard t >= 0 else { throw NostrError.invalidField(field, reason: "negative") }
        return t
    }

    static func kind(_ value: JSONValue, field: String = "kind") throws -> Int {
        guard case .integer(let k) = value else { throw NostrError.invalidField(field, reason: "not an integer") }
        guard k >= 0, k <= 65_535 else { throw NostrError.kindOutOfRange(k) }
        return Int(k)
    }

    static func tags(_ value: JSONValue) throws -> [[String]] {
        guard case .array(let outer) = value else { throw NostrError.invalidField("tags", reason: "not an array") }
        var tags: [[String]] = []
        tags.reserveCapacity(outer.count)
        for element in outer {
            guard case .array(let inner) = element else {
                throw NostrError.invalidField("tags", reason: "a tag is not an array")
            }
            var tag: [String] = []
            tag.reserveCapacity(inner.count)
            for item in inner {
                guard case .string(let s) = item else {
                    throw NostrError.invalidField("tags", reason: "a tag element is not a string")
                }
                tag.append(s)
            }
            tags.append(tag)
        }
        return tags
    }

    /// `[0,"<pubkey>",<created_at>,<kind>,<tags>,"<content>"]`, the bytes whose sha256 is the id.
    /// Writes `{"id":…,"pubkey":…,"created_at":…,"kind":…,"tags":…,"content":…` (rust-nostr's field
    /// order, NIP-01 escaping) and leaves the object open: events append `sig`, rumors close it.
    static func writeObjectFields(
        id: EventID, pubkey: PublicKey, createdAt: Int64, kind: Int, tags: [[String]], content: String,
        to out: inout [UInt8]
    ) {
        out.append(contentsOf: "{\"id\":\"".utf8)
        out.append(contentsOf: id.hex.utf8)
        out.append(contentsOf: "\",\"pubkey\":\"".utf8)
        out.append(contentsOf: pubkey.hex.utf8)
        out.append(contentsOf: "\",\"created_at\":".utf8)
        JSONWriter.writeInteger(createdAt, to: &out)
        out.append(contentsOf: ",\"kind\":".utf8)
        JSONWriter.writeInteger(kind, to: &out)
        out.append(contentsOf: ",\"tags\":".utf8)
        JSONWriter.writeTags(tags, to: &out)
        out.append(contentsOf: ",\"content\":".utf8)
        JSONWriter.writeString(content, to: &out)
    }

    static func canonicalSerialization(
        pubkey: PublicKey, createdAt: Int64, kind: Int, tags: [[String]], content: String
    ) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(64 + 90 + content.utf8.count + tags.count * 80)
        out.append(contentsOf: "[0,\"".utf8)
        out.append(contentsOf: pubkey.hex.utf8)
        out.append(contentsOf: "\",".utf8)
        JSONWriter.writeInteger(createdAt, to: &out)
        out.append(UInt8(ascii: ","))
        JSONWriter.writeInteger(kind, to: &out)
        out.append(UInt8(ascii: ","))
        JSONWriter.writeTags(tags, to: &out)
        out.append(UInt8(ascii: ","))
        JSONWriter.writeString(content, to: &out)
        out.append(UInt8(ascii: "]"))
        return out
    }
}
