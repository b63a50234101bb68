import Foundation
import Nostr
import Pigeon
import RelayClient

/// Someone who knows a Burrow user's card and nothing else: its own Pigeon engine and Nostr
/// key, talking to the real program through a relay. It can put any value the wire allows in
/// the fields Burrow must survive (a card's created_at, a message's sent_at).
final class StrangerPeer {
    let nostr: Keys
    private(set) var state: PigeonState
    private var keys = SystemKeySource()
    let pool: RelayPool

    /// `pool`: a publisher shared by many strangers (a flood), else one of its own.
    init(nickname: String, relay: String, cardCreatedAt: UInt64 = UInt64(Date().timeIntervalSince1970 * 1000), pool: RelayPool? = nil) throws {
        var rng = SystemRandomNumberGenerator()
        nostr = Keys.generate(using: &rng)
        let identity = Ed25519PrivateKey.generate(), staticKey = X25519PrivateKey.generate()
        let card = try ContactCard.issue(identity: identity, staticKey: staticKey.publicKey, nostr: nostr,
                                         auxRand: (0..<32).map { _ in UInt8.random(in: 0...255) }, createdAt: cardCreatedAt,
                                         nickname: nickname, relays: [relay])
        state = PigeonState(local: try LocalIdentity(identityKey: identity, staticKey: staticKey, card: card))
        self.pool = try pool ?? RelayPool(urls: [relay], authKeys: nostr)
    }

    var card: ContactCard { state.local.card }

    static func now() -> UInt64 { UInt64(Date().timeIntervalSince1970 * 1000) }

    /// Handshake1 to the owner of `cardText`.
    func handshake1(to cardText: String) throws -> (frame: [UInt8], to: ContactCard) {
        let target = try ContactCard(text: cardText)
        state = try state.addContact(target).state
        let started = try state.start(with: target.identityKey, now: Self.now(), keys: &keys)
        state = started.state
        return (started.output.frame, target)
    }

    /// A frame in a fresh gift wrap sealed by `sealer` (our own key unless told otherwise).
    func wrap(_ frame: [UInt8], to recipient: PublicKey, sealer: Keys? = nil) throws -> Event {
        var rng = SystemRandomNumberGenerator()
        let now = Int64(Date().timeIntervalSince1970)
        let rumor = try NostrCarrier.rumor(frame: frame, sender: (sealer ?? nostr).publicKey, now: now)
        return try GiftWrap.wrap(rumor: rumor, sender: sealer ?? nostr, recipient: recipient, now: now, rng: &rng)
    }

    func publish(_ event: Event) async throws {
        let results = await pool.publish(event, timeout: .seconds(10))
        guard results.contains(where: \.accepted) else { throw StrangerError.refused(results.map(\.message).joined(separator: "; ")) }
    }

    /// The frames in the gift wraps the relay holds for us.
    func receivedFrames() async throws -> [[UInt8]] {
        let result = try await pool.fetch(Filter(kinds: [Kind.giftWrap], tags: ["p": [nostr.publicKey.hex]]), timeout: .seconds(10))
        return result.events.compactMap { event in
            guard let unwrapped = try? GiftWrap.unwrap(event, recipient: nostr) else { return nil }
            return try? NostrCarrier.frame(from: unwrapped.rumor)
        }
    }

    /// Steps a received frame; returns the replies.
    func deliver(_ frame: [UInt8]) throws -> DeliverOutput {
        let delivered = try state.deliver(frame: frame, now: Self.now(), keys: &keys)
        state = delivered.state
        return delivered.output
    }

    /// A text on the session with `contact`, with the sent_at we choose.
    func text(_ text: String, to contact: Ed25519PublicKey, sentAt: UInt64) throws -> [[UInt8]] {
        let content = try MessageContent(kind: MessageContent.Kind.text.rawValue, msgID: (0..<16).map { _ in UInt8.random(in: 0...255) },
                                         sentAt: sentAt, body: Array(text.utf8))
        let sent = try state.send(to: contact, content: content, now: Self.now())
        state = sent.state
        return sent.output.frames
    }

    func close() async { await pool.close() }
}

enum StrangerError: Error { case refused(String) }
