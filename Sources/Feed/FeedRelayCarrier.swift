import Crypto
import Nostr

/// The relay carrier (feed.md 9): a feed envelope as a Nostr event of kind 1591, signed by the
/// author's Nostr key, tagged with its feed id. The event's signer is not trusted: the envelope
/// authenticates itself, through 4.4, as the feed the tag names.
public enum FeedRelayCarrier {
    public static let kind = 1591
    static let members: Set<String> = ["id", "pubkey", "created_at", "kind", "tags", "content", "sig"]

    /// The event for `envelope` (never a journal entry), published at `createdAt`.
    public static func event(for envelope: Envelope, keys: Keys, createdAt: Int64, auxRand: [UInt8]? = nil) throws -> Event {
        guard envelope.fields.audience != "self" else { throw FeedError.selfAudience }
        let content = String(decoding: envelope.bytes, as: UTF8.self)
        let tags = [["f", Base64URL.encode(envelope.fields.feedID)]]
        if let auxRand { return try Event.sign(kind: kind, content: content, tags: tags, createdAt: createdAt, keys: keys, auxRand: auxRand) }
        var rng = SystemRandomNumberGenerator()
        return try Event.sign(kind: kind, content: content, tags: tags, createdAt: createdAt, keys: keys, rng: &rng)
    }

    /// A relay event's envelope, verified under the key of the followed feed its tag names
    /// (`follows`: feed id → identity key): `bad_event` unless it is exactly the seven NIP-01
    /// members, kind 1591, one `f` tag naming a followed feed, a valid id and signature.
    public static func open(_ json: [UInt8], follows: [[UInt8]: [UInt8]]) throws(FeedError) -> Envelope {
        guard let value = try? JSONValue.parse(json), let object = value.objectValue,
              object.count == members.count, Set(object.map(\.key)) == members,
              let event = try? UnverifiedEvent(jsonValue: value).verified(),
              event.kind == kind, event.tags.count == 1, event.tags[0].count == 2, event.tags[0][0] == "f",
              let feedID = Base64URL.decode(event.tags[0][1], count: 32), let identityKey = follows[feedID] else { throw .badEvent }
        let envelope = try UnverifiedEnvelope.decode(Array(event.content.utf8), origin: .peer)
        guard envelope.fields.feedID == feedID else { throw .feedIDMismatch }
        return try envelope.verify(identityKey: identityKey)
    }
}
