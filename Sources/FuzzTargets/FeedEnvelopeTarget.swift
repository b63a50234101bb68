import Crypto
import Feed

/// Feed envelopes as a peer or relay delivers them (feed.md 4.4 steps 1–7), and the canonical
/// JSON beneath them.
///
/// Properties: an envelope that decodes is exactly its own canonical serialization; any JSON
/// that parses serializes to a fixed point (parsing the canonical bytes gives the same value,
/// which serializes to the same bytes).
public enum FeedEnvelopeTarget: FuzzTarget {
    public static let name = "feed-envelope"

    public static func run(_ bytes: [UInt8]) throws -> FuzzOutcome {
        if let value = try? CanonicalJSON.parse(bytes), let canonical = try? CanonicalJSON.serialize(value) {
            guard let again = try? CanonicalJSON.parse(canonical), (try? CanonicalJSON.serialize(again)) == canonical else {
                throw PropertyViolation(name, "canonical JSON is not a fixed point")
            }
        }
        do {
            let envelope = try UnverifiedEnvelope.decode(bytes)
            guard let value = try? CanonicalJSON.parse(bytes), (try? CanonicalJSON.serialize(value)) == envelope.bytes else {
                throw PropertyViolation(name, "a decoded envelope is not canonical")
            }
            return .accepted("envelope")
        } catch let error as FeedError {
            return .rejected(error.rawValue)
        }
    }

    /// Envelopes signed here with a fixed key: a genesis post for contacts and a later one for a group.
    static func seeds() throws -> [FuzzSeeds.Seed] {
        let identity = try Curve25519.Signing.PrivateKey(rawRepresentation: [UInt8](repeating: 7, count: 32))
        let feedID = FeedKeys.feedID(identityKey: Array(identity.publicKey.rawRepresentation))
        let first = try Envelope.sign(audience: "contacts", contentEncoded: Array(repeating: 1, count: 120), feedID: feedID, previous: nil,
                                      sequence: 0, timestamp: 1_795_000_000, type: "post", identity: identity)
        let second = try Envelope.sign(audience: FeedKeys.groupAudience(mlsGroupID: Array(repeating: 2, count: 32)),
                                       contentEncoded: Array(repeating: 3, count: 80), feedID: feedID, previous: first.messageID, sequence: 1,
                                       timestamp: 1_795_000_060, type: "reaction", identity: identity)
        return [("genesis", first.bytes), ("group", second.bytes)]
    }
}
