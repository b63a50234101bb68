/// NIP-59 gift wrap: rumor (unsigned) → seal (kind 13, signed by the author, NIP-44 to the
/// recipient) → gift wrap (kind 1059, signed by a one-time key, NIP-44 to the recipient).
///
/// Unwrapping checks everything the construction relies on: without the seal signature and
/// the seal.pubkey = rumor.pubkey check, anyone could forge a rumor "from" someone else.
public enum GiftWrap {
    /// Seal and wrap timestamps are drawn from [now − 2 days, now] to blur timing metadata.
    public static let maximumBackdate: Int64 = 2 * 24 * 60 * 60

    /// Encrypts `rumor` to `recipient` in a kind-13 seal signed by `sender`.
    public static func seal<R: RandomNumberGenerator>(
        rumor: Rumor, sender: Keys, recipient: PublicKey, now: Int64, rng: inout R
    ) throws -> Event {
        guard rumor.pubkey == sender.publicKey else { throw NostrError.sealAuthorMismatch }
        let key = try NIP44.conversationKey(secretKey: sender.secretKey, publicKey: recipient)
        let content = try NIP44.encrypt(plaintext: rumor.jsonString, conversationKey: key, using: &rng)
        return try Event.sign(kind: Kind.seal, content: content, tags: [],
                              createdAt: randomizedTimestamp(now: now, rng: &rng), keys: sender, rng: &rng)
    }

    /// Seals `rumor` and wraps the seal in a kind-1059 event from a fresh random key, tagged
    /// `["p", recipient]` followed by `extraTags`.
    public static func wrap<R: RandomNumberGenerator>(
        rumor: Rumor, sender: Keys, recipient: PublicKey, now: Int64, rng: inout R, extraTags: [[String]] = []
    ) throws -> Event {
        let seal = try seal(rumor: rumor, sender: sender, recipient: recipient, now: now, rng: &rng)
        return try wrap(seal: seal, recipient: recipient, now: now, rng: &rng, extraTags: extraTags)
    }

    /// Wraps an existing seal (kind 13) for `recipient`.
    public static func wrap<R: RandomNumberGenerator>(
        seal: Event, recipient: PublicKey, now: Int64, rng: inout R, extraTags: [[String]] = []
    ) throws -> Event {
        guard seal.kind == Kind.seal else { throw NostrError.sealWrongKind(seal.kind) }
        let wrapper = Keys.generate(using: &rng)
        let key = try NIP44.conversationKey(secretKey: wrapper.secretKey, publicKey: recipient)
        let content = try NIP44.encrypt(plaintext: seal.jsonString, conversationKey: key, using: &rng)
        return try Event.sign(kind: Kind.giftWrap, content: content, tags: [["p", recipient.hex]] + extraTags,
                              createdAt: randomizedTimestamp(now: now, rng: &rng), keys: wrapper, rng: &rng)
    }

    /// Opens a gift wrap addressed to `recipient` and checks the seal and the rumor.
    public static func unwrap(_ giftWrap: Event, recipient: Keys) throws -> UnwrappedGift {
        guard giftWrap.kind == Kind.giftWrap else { throw NostrError.giftWrapWrongKind(giftWrap.kind) }
        let sealJSON: String
        do {
            let key = try NIP44.conversationKey(secretKey: recipient.secretKey, publicKey: giftWrap.pubkey)
            sealJSON = try NIP44.decrypt(payload: giftWrap.content, conversationKey: key)
        } catch let error as NostrError {
            throw NostrError.giftWrapUndecryptable(error)
        }

        let seal: Event
        do {
            seal = try UnverifiedEvent(json: sealJSON).verified()
        } catch let error as NostrError {
            throw NostrError.sealInvalid(error)
        }
        guard seal.kind == Kind.seal else { throw NostrError.sealWrongKind(seal.kind) }
        guard seal.tags.isEmpty else { throw NostrError.sealTagsNotEmpty }

        let rumorJSON: String
        do {
            let key = try NIP44.conversationKey(secretKey: recipient.secretKey, publicKey: seal.pubkey)
            rumorJSON = try NIP44.decrypt(payload: seal.content, conversationKey: key)
        } catch let error as NostrError {
            throw NostrError.sealUndecryptable(error)
        }

        let rumor: Rumor
        do {
            rumor = try Rumor(json: rumorJSON)
        } catch let error as NostrError {
            throw NostrError.rumorInvalid(error)
        }
        guard rumor.pubkey == seal.pubkey else { throw NostrError.sealAuthorMismatch }
        return UnwrappedGift(rumor: rumor, seal: seal, sender: seal.pubkey)
    }

    static func randomizedTimestamp<R: RandomNumberGenerator>(now: Int64, rng: inout R) -> Int64 {
        max(0, now - Int64.random(in: 0...maximumBackdate, using: &rng))
    }
}

/// A verified NIP-59 delivery: the rumor, the seal that carried it, and its authenticated sender.
public struct UnwrappedGift: Sendable, Hashable {
    public let rumor: Rumor
    public let seal: Event
    /// The seal's signer, equal to `rumor.pubkey`.
    public let sender: PublicKey
}
