import Nostr
import Pigeon

/// A fixed two-node Pigeon setup for the Pigeon fuzz targets: Alice and Bob from constant keys
/// (so every run and every seed is the same), Bob holding an established session with Alice
/// (S1) and a pending responder state for Alice's second handshake (S2). Frames Alice made
/// and Bob has not seen are the generated seeds.
struct PigeonFixture: Sendable {
    /// Bob's state: the one every fuzz input is delivered to.
    let bob: PigeonState
    let bobKeys: ScriptedKeySource
    /// When inputs arrive (ms).
    let now: UInt64
    /// Frames Bob has not processed, by name: S1 messages, S2's handshake3, an S2 message.
    let frames: [(name: String, bytes: [UInt8])]
    let aliceCard: ContactCard
    let bobCard: ContactCard

    static let shared: PigeonFixture? = try? make()

    static func key(_ tag: UInt8, _ i: Int) -> [UInt8] { (0..<32).map { UInt8(truncatingIfNeeded: Int(tag) &* 31 &+ $0 &* 7 &+ i) } }

    static func node(_ tag: UInt8, nickname: String) throws -> (PigeonState, ScriptedKeySource, ContactCard) {
        let identity = try Ed25519PrivateKey(seed: key(tag, 0))
        let staticKey = try X25519PrivateKey(bytes: key(tag, 1))
        let nostr = Keys(secretKey: try SecretKey(bytes: key(tag, 2)))
        let card = try ContactCard.issue(identity: identity, staticKey: staticKey.publicKey, nostr: nostr,
                                         auxRand: [UInt8](repeating: 0, count: 32), createdAt: 1_767_225_600_000,
                                         nickname: nickname, relays: ["wss://relay.example.org"])
        let keys = ScriptedKeySource(
            ephemeralKeys: try (10..<14).map { try X25519PrivateKey(bytes: key(tag, $0)) },
            ratchetKeys: try (20..<60).map { try X25519PrivateKey(bytes: key(tag, $0)) })
        return (PigeonState(local: try LocalIdentity(identityKey: identity, staticKey: staticKey, card: card)), keys, card)
    }

    static func make() throws -> PigeonFixture {
        var (alice, aliceKeys, aliceCard) = try node(0xA1, nickname: "alice")
        var (bob, bobKeys, bobCard) = try node(0xB0, nickname: "bob")
        alice = try alice.addContact(bobCard).state
        bob = try bob.addContact(aliceCard).state
        let t0: UInt64 = 1_767_225_600_000

        func deliver(_ state: inout PigeonState, _ keys: inout ScriptedKeySource, _ frame: [UInt8], _ now: UInt64) throws -> [[UInt8]] {
            let t = try state.deliver(frame: frame, now: now, keys: &keys)
            state = t.state
            return t.output.outputs
        }
        func send(_ text: String, _ i: UInt8, _ now: UInt64) throws -> [UInt8] {
            let content = try MessageContent(kind: 1, msgID: [UInt8](repeating: i, count: 16), sentAt: now, body: Array(text.utf8))
            let t = try alice.send(to: bobCard.identityKey, content: content, now: now)
            alice = t.state
            return t.output.frames[t.output.frames.count - 1]
        }

        // S1: a full handshake and Bob's ack.
        let start1 = try alice.start(with: bobCard.identityKey, now: t0, keys: &aliceKeys)
        alice = start1.state
        let h2 = try deliver(&bob, &bobKeys, start1.output.frame, t0 + 1)
        let h3 = try deliver(&alice, &aliceKeys, h2[0], t0 + 2)
        _ = try deliver(&bob, &bobKeys, h3[0], t0 + 3)
        let ack = try bob.send(to: aliceCard.identityKey, content: MessageContent(kind: 0, msgID: [UInt8](repeating: 0xAC, count: 16), sentAt: t0 + 4, body: []), now: t0 + 4)
        bob = ack.state
        _ = try deliver(&alice, &aliceKeys, ack.output.frames[0], t0 + 5)
        var frames: [(String, [UInt8])] = [("message-s1-0", try send("hello", 1, t0 + 6)), ("message-s1-1", try send(String(repeating: "x", count: 300), 2, t0 + 7))]

        // S2: Alice's second handshake, answered by Bob, not finished.
        let start2 = try alice.start(with: bobCard.identityKey, now: t0 + 10, keys: &aliceKeys)
        var a2 = start2.state
        let h2b = try deliver(&bob, &bobKeys, start2.output.frame, t0 + 11)
        let h3b = try deliver(&a2, &aliceKeys, h2b[0], t0 + 12)
        frames.append(("handshake1-s2", start2.output.frame))
        frames.append(("handshake3-s2", h3b[0]))
        let m = try a2.send(to: bobCard.identityKey, content: MessageContent(kind: 1, msgID: [UInt8](repeating: 3, count: 16), sentAt: t0 + 13, body: Array("early".utf8)), now: t0 + 13)
        frames.append(("message-s2", m.output.frames[m.output.frames.count - 1]))
        return PigeonFixture(bob: bob, bobKeys: bobKeys, now: t0 + 20, frames: frames, aliceCard: aliceCard, bobCard: bobCard)
    }
}
