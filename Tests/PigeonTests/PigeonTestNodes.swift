import Nostr
@testable import Pigeon
import XCTest

/// Fresh nodes for the engine tests: random identity, static and Nostr keys, a card, and a
/// key source that records how many keys the engine took (scripted from random keys, so a
/// refused step can be checked not to have consumed one).
struct TestNode {
    let identity: Ed25519PrivateKey
    let staticKey: X25519PrivateKey
    let nostr: Keys
    var state: PigeonState
    var keys: ScriptedKeySource

    var id: Ed25519PublicKey { identity.publicKey }
    var card: ContactCard { state.local.card }

    init(nickname: String, createdAt: UInt64 = 1_767_225_600_000) throws {
        var rng = SystemRandomNumberGenerator()
        identity = .generate()
        staticKey = .generate()
        nostr = Keys.generate(using: &rng)
        let card = try ContactCard.issue(
            identity: identity, staticKey: staticKey.publicKey, nostr: nostr, auxRand: [UInt8](repeating: 0, count: 32),
            createdAt: createdAt, nickname: nickname, relays: ["wss://relay.example.org"])
        state = PigeonState(local: try LocalIdentity(identityKey: identity, staticKey: staticKey, card: card))
        keys = ScriptedKeySource(ephemeralKeys: (0..<8).map { _ in .generate() }, ratchetKeys: (0..<64).map { _ in .generate() })
    }

    mutating func add(_ other: TestNode) throws {
        state = try state.addContact(other.card).state
    }

    mutating func start(_ peer: TestNode, now: UInt64) throws -> [UInt8] {
        let t = try state.start(with: peer.id, now: now, keys: &keys)
        state = t.state
        return t.output.frame
    }

    @discardableResult
    mutating func deliver(_ frame: [UInt8], now: UInt64) throws -> DeliverOutput {
        let t = try state.deliver(frame: frame, now: now, keys: &keys)
        state = t.state
        return t.output
    }

    mutating func send(_ text: String, to peer: TestNode, now: UInt64, kind: UInt8 = 1) throws -> [[UInt8]] {
        let content = try MessageContent(kind: kind, msgID: (0..<16).map { _ in UInt8.random(in: 0...255) }, sentAt: now, body: Array(text.utf8))
        let t = try state.send(to: peer.id, content: content, now: now)
        state = t.state
        return t.output.frames
    }

    /// Delivers `frame` expecting the refusal `code`: asserts the code, that the transition
    /// left no trace (the state value is untouched and its encoding identical) and that the key
    /// source did not advance.
    mutating func refuse(_ frame: [UInt8], now: UInt64, _ code: PigeonError, file: StaticString = #filePath, line: UInt = #line) {
        let before = state.encoded
        var scratch = keys
        XCTAssertThrowsError(try state.deliver(frame: frame, now: now, keys: &scratch), file: file, line: line) { error in
            XCTAssertEqual(error as? PigeonError, code, file: file, line: line)
        }
        XCTAssertEqual(scratch.ephemeralIndex, keys.ephemeralIndex, "a refusal consumed an ephemeral key", file: file, line: line)
        XCTAssertEqual(scratch.ratchetIndex, keys.ratchetIndex, "a refusal consumed a ratchet key", file: file, line: line)
        XCTAssertEqual(state.encoded, before, file: file, line: line)
    }
}

/// Alice (initiator) and Bob (responder), each holding the other's card, through a complete
/// handshake at `t0`: h1, h2, h3, and Bob's ack confirming Alice's session.
func establishedPair(t0: UInt64 = 1_767_225_600_000, ack: Bool = true) throws -> (TestNode, TestNode) {
    var alice = try TestNode(nickname: "alice"), bob = try TestNode(nickname: "bob")
    try alice.add(bob)
    try bob.add(alice)
    let h1 = try alice.start(bob, now: t0)
    let h2 = try XCTUnwrap(bob.deliver(h1, now: t0 + 1).outputs.first)
    let h3 = try XCTUnwrap(alice.deliver(h2, now: t0 + 2).outputs.first)
    let out = try bob.deliver(h3, now: t0 + 3)
    XCTAssertTrue(out.ackDue)
    if ack {
        let frames = try bob.send("", to: alice, now: t0 + 4, kind: 0)
        try alice.deliver(frames[0], now: t0 + 5)
    }
    return (alice, bob)
}
