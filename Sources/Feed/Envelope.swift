import Crypto

/// Where an envelope comes from, for step 7 of feed.md 4.4.
public enum EnvelopeOrigin: Sendable {
    /// A peer or a relay: `self` audiences are refused (`self_audience`).
    case peer
    /// The author's own journal: only `self` audiences belong there.
    case journal
}

/// An envelope's nine members, each checked against its rule (feed.md 4.1).
public struct EnvelopeFields: Equatable, Sendable {
    public let audience: String
    public let contentEncoded: [UInt8]
    public let feedID: [UInt8]
    public let previous: [UInt8]?
    public let sequence: UInt32
    public let signature: [UInt8]
    public let timestamp: Int64
    public let type: String
    public let version: Int64

    public var audienceName: Substring { audience.split(separator: ":", maxSplits: 1).first ?? "" }
}

/// Envelope bytes that passed steps 1–7 of feed.md 4.4: strict, canonical, every member in its
/// rule. Not yet proof of anything: only `verify` with the author's key yields an `Envelope`.
public struct UnverifiedEnvelope: Sendable {
    public static let maximumBytes = 64_000
    public static let domain = Array("burrow-feed-v1:envelope".utf8)
    static let members: Set<String> = ["audience", "content_enc", "feed_id", "previous", "sequence", "signature", "timestamp", "type", "version"]
    static let maximumSequence: Int64 = 0xFFFF_FFFE

    public let bytes: [UInt8]
    public let fields: EnvelopeFields
    let value: FeedJSON

    public static func decode(_ bytes: [UInt8], origin: EnvelopeOrigin = .peer) throws(FeedError) -> UnverifiedEnvelope {
        guard bytes.count <= maximumBytes else { throw .tooLarge }
        let value = try CanonicalJSON.parse(bytes)
        guard case .object(let members) = value else { throw .badJSON }
        guard let version = value["version"] else { throw .badEnvelope }
        guard case .integer(let versionNumber) = version else { throw .badEnvelope }
        guard versionNumber == 1 else { throw .unknownVersion }
        // The parser refused duplicate names: nine known names are the nine members.
        guard members.count == Self.members.count, members.allSatisfy({ Self.members.contains($0.name) }) else {
            throw .badEnvelope
        }
        let fields = try Self.fields(value)
        let canonical: [UInt8]
        do { canonical = try CanonicalJSON.serialize(value) } catch { throw .nonCanonical }
        guard canonical == bytes else { throw .nonCanonical }
        let isSelf = fields.audience == "self"
        switch origin {
        case .peer: if isSelf { throw .selfAudience }
        case .journal: if !isSelf { throw .badEnvelope }
        }
        return UnverifiedEnvelope(bytes: bytes, fields: fields, value: value)
    }

    private static func fields(_ value: FeedJSON) throws(FeedError) -> EnvelopeFields {
        guard let audience = value["audience"]?.string, Self.validAudience(audience) else { throw .badEnvelope }
        guard let contentText = value["content_enc"]?.string, let content = Base64URL.decode(contentText), !content.isEmpty else {
            throw .badEnvelope
        }
        guard let feedText = value["feed_id"]?.string, let feedID = Base64URL.decode(feedText, count: 32) else { throw .badEnvelope }
        guard let sequence = value["sequence"]?.integer, (0...maximumSequence).contains(sequence) else { throw .badEnvelope }
        var previous: [UInt8]?
        switch value["previous"] {
        case .null?: guard sequence == 0 else { throw .badEnvelope }
        case .string(let text)?:
            guard sequence > 0, let id = Base64URL.decode(text, count: 32) else { throw .badEnvelope }
            previous = id
        default: throw .badEnvelope
        }
        guard let signatureText = value["signature"]?.string, let signature = Base64URL.decode(signatureText, count: 64) else {
            throw .badEnvelope
        }
        guard let timestamp = value["timestamp"]?.integer, (0...CanonicalJSON.maximumInteger).contains(timestamp) else { throw .badEnvelope }
        guard let sequenceNumber = UInt32(exactly: sequence) else { throw .badEnvelope }
        guard let type = value["type"]?.string, Self.matches(type, 1...64, allowed: Self.lowerDigitUnderscore) else { throw .badEnvelope }
        return EnvelopeFields(audience: audience, contentEncoded: content, feedID: feedID, previous: previous, sequence: sequenceNumber,
                              signature: signature, timestamp: timestamp, type: type, version: 1)
    }

    static func lowerDigitUnderscore(_ b: UInt8) -> Bool { (b >= 0x61 && b <= 0x7A) || (b >= 0x30 && b <= 0x39) || b == 0x5F }
    static func base64URLCharacter(_ b: UInt8) -> Bool {
        (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || (b >= 0x30 && b <= 0x39) || b == 0x2D || b == 0x5F
    }

    static func matches(_ text: some StringProtocol, _ length: ClosedRange<Int>, allowed: (UInt8) -> Bool) -> Bool {
        let bytes = Array(text.utf8)
        return length.contains(bytes.count) && bytes.allSatisfy(allowed)
    }

    /// `name` or `name:arg` (4.1); `self` and `contacts` take no argument, `group` and `direct` an id.
    static func validAudience(_ audience: String) -> Bool {
        let parts = audience.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        guard let name = parts.first, matches(name, 1...32, allowed: lowerDigitUnderscore) else { return false }
        let argument = parts.count > 1 ? parts[1] : nil
        if let argument, !matches(argument, 1...86, allowed: base64URLCharacter) { return false }
        switch name {
        case "self", "contacts": return argument == nil
        case "group", "direct": return argument.flatMap { Base64URL.decode(String($0), count: 32) } != nil
        default: return true
        }
    }

    static let signatureMember = Array(#","signature":""#.utf8)

    /// The domain and the canonical envelope without its signature member (4.2). The bytes are
    /// canonical (checked in `decode`) and no value may hold a quote, so the member is the one
    /// `,"signature":"` followed by 86 base64url characters and a quote: cut out, not serialized.
    func signingInput() throws(FeedError) -> [UInt8] {
        let needle = Self.signatureMember
        let length = needle.count + 86 + 1
        var start: Int?
        bytes.withUnsafeBufferPointer { buffer in
            var index = 0
            while index + length <= buffer.count {
                if buffer[index] == 0x2C, buffer[index + 1] == 0x22, buffer[index + 2] == 0x73,
                   needle.indices.allSatisfy({ buffer[index + $0] == needle[$0] }) {
                    start = index
                    return
                }
                index += 1
            }
        }
        guard let start, bytes[start + length - 1] == 0x22 else { throw .badEnvelope }
        var input = Self.domain
        input.reserveCapacity(Self.domain.count + bytes.count - length)
        input += bytes[..<start]
        input += bytes[(start + length)...]
        return input
    }

    /// Steps 8 and 9: `feed_id` is SHA-256 of `identityKey` (the Pigeon `I` held for the feed),
    /// and the signature verifies under it.
    public func verify(identityKey: [UInt8]) throws(FeedError) -> Envelope {
        guard Array(SHA256.hash(data: identityKey)) == fields.feedID else { throw .feedIDMismatch }
        guard let key = try? Curve25519.Signing.PublicKey(rawRepresentation: identityKey) else { throw .feedIDMismatch }
        guard key.isValidSignature(fields.signature, for: try signingInput()) else { throw .badSignature }
        return Envelope(bytes: bytes, fields: fields, value: value)
    }
}

/// A verified envelope: its author's key signed exactly these bytes.
public struct Envelope: Sendable, Equatable {
    public let bytes: [UInt8]
    public let fields: EnvelopeFields
    let value: FeedJSON

    /// SHA-256 of the envelope's canonical bytes, signature included (4.2).
    public var messageID: [UInt8] { Array(SHA256.hash(data: bytes)) }

    /// The associated data of every AEAD of section 5: the envelope without `content_enc` and `signature`.
    public var binding: [UInt8] { (try? Self.canonical(value, without: ["content_enc", "signature"])) ?? [] }

    public static func == (a: Envelope, b: Envelope) -> Bool { a.bytes == b.bytes }

    static func canonical(_ value: FeedJSON, without names: Set<String>) throws(FeedError) -> [UInt8] {
        guard case .object(let members) = value else { throw .badEnvelope }
        return try CanonicalJSON.serialize(.object(members.filter { !names.contains($0.name) }))
    }

    /// The binding (4.2) an author seals the content under, before the envelope exists.
    public static func binding(audience: String, feedID: [UInt8], previous: [UInt8]?, sequence: UInt32, timestamp: Int64,
                               type: String) throws -> [UInt8] {
        try CanonicalJSON.serialize(.object([
            FeedJSONMember("audience", .string(audience)), FeedJSONMember("feed_id", .string(Base64URL.encode(feedID))),
            FeedJSONMember("previous", previous.map { .string(Base64URL.encode($0)) } ?? .null),
            FeedJSONMember("sequence", .integer(Int64(sequence))), FeedJSONMember("timestamp", .integer(timestamp)),
            FeedJSONMember("type", .string(type)), FeedJSONMember("version", .integer(1)),
        ]))
    }

    /// The envelope of `fields` (binding members and `content_enc`) signed with `identity`, as an
    /// author makes it (4.3).
    public static func sign(audience: String, contentEncoded: [UInt8], feedID: [UInt8], previous: [UInt8]?, sequence: UInt32,
                            timestamp: Int64, type: String, identity: Curve25519.Signing.PrivateKey) throws -> Envelope {
        var members: [FeedJSONMember] = [
            FeedJSONMember("audience", .string(audience)), FeedJSONMember("content_enc", .string(Base64URL.encode(contentEncoded))),
            FeedJSONMember("feed_id", .string(Base64URL.encode(feedID))),
            FeedJSONMember("previous", previous.map { .string(Base64URL.encode($0)) } ?? .null),
            FeedJSONMember("sequence", .integer(Int64(sequence))), FeedJSONMember("timestamp", .integer(timestamp)),
            FeedJSONMember("type", .string(type)), FeedJSONMember("version", .integer(1)),
        ]
        let unsigned = try CanonicalJSON.serialize(.object(members))
        let signature = try identity.signature(for: UnverifiedEnvelope.domain + unsigned)
        members.append(FeedJSONMember("signature", .string(Base64URL.encode(Array(signature)))))
        let bytes = try CanonicalJSON.serialize(.object(members))
        return try UnverifiedEnvelope.decode(bytes, origin: audience == "self" ? .journal : .peer)
            .verify(identityKey: Array(identity.publicKey.rawRepresentation))
    }
}
