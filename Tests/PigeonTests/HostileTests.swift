import Nostr
@testable import Pigeon
import XCTest

/// The hostile cases of the profile, one by one, on freshly generated nodes: each refusal has
/// its code, leaves the state byte-identical, consumes no key, and the genuine traffic after
/// it still works.
final class HostileTests: XCTestCase {
    let t0: UInt64 = 1_767_225_600_000

    func testTamperedHeaderAndTagAreRefusedAndChangeNothing() throws {
        var (alice, bob) = try establishedPair(t0: t0)
        let frame = try XCTUnwrap(alice.send("hello", to: bob, now: t0 + 10).last)
        // Header bytes: DH (18..<50), pn (50..<54), n (54..<58); then the tag at the end.
        for index in [18, 49, 53, 57, frame.count - 1, 100] {
            var bad = frame
            bad[index] ^= 0x04
            bob.refuse(bad, now: t0 + 11, .decryptFailed)
        }
        // Session id changed: no such session.
        var bad = frame
        bad[5] ^= 0x01
        bob.refuse(bad, now: t0 + 11, .sessionUnknown)
        XCTAssertEqual(try bob.deliver(frame, now: t0 + 12).message?.content?.body, Array("hello".utf8))
    }

    func testReplayedMessageIsRefused() throws {
        var (alice, bob) = try establishedPair(t0: t0)
        let first = try XCTUnwrap(alice.send("one", to: bob, now: t0 + 10).last)
        let second = try XCTUnwrap(alice.send("two", to: bob, now: t0 + 11).last)
        try bob.deliver(second, now: t0 + 12)
        bob.refuse(second, now: t0 + 13, .messageReplayed)
        try bob.deliver(first, now: t0 + 14)  // from the skipped keys
        bob.refuse(first, now: t0 + 15, .messageReplayed)
        // After a DH step the old chain is retired.
        try alice.deliver(try XCTUnwrap(bob.send("back", to: alice, now: t0 + 16).last), now: t0 + 17)
        let third = try XCTUnwrap(alice.send("three", to: bob, now: t0 + 18).last)
        try bob.deliver(third, now: t0 + 19)
        bob.refuse(second, now: t0 + 20, .messageReplayed)
    }

    func testSkipBeyondTheBoundIsRefusedBeforeDerivation() throws {
        var (alice, bob) = try establishedPair(t0: t0)
        alice.state = try alice.state.advanceSendingChain(with: bob.id, count: 1001).state
        let frame = try XCTUnwrap(alice.send("far", to: bob, now: t0 + 10).last)
        bob.refuse(frame, now: t0 + 11, .skipLimit)
        // 1000 is still accepted.
        var (carol, dave) = try establishedPair(t0: t0)
        carol.state = try carol.state.advanceSendingChain(with: dave.id, count: 1000).state
        let ok = try XCTUnwrap(carol.send("edge", to: dave, now: t0 + 10).last)
        try dave.deliver(ok, now: t0 + 11)
        XCTAssertEqual(dave.state.ratchetSnapshot(with: carol.id)?.1.skippedCount, 1000)
    }

    func testStoredSkippedKeysAreBoundedAndExpire() throws {
        var (alice, bob) = try establishedPair(t0: t0)
        // Three chains of 900 skipped keys each: 2,700 > 2,000, the oldest are evicted.
        for round in 0..<3 {
            alice.state = try alice.state.advanceSendingChain(with: bob.id, count: 900).state
            let frame = try XCTUnwrap(alice.send("r\(round)", to: bob, now: t0 + 10).last)
            try bob.deliver(frame, now: t0 + 11 + UInt64(round))
            try alice.deliver(try XCTUnwrap(bob.send("ok", to: alice, now: t0 + 20).last), now: t0 + 21)
        }
        XCTAssertEqual(bob.state.ratchetSnapshot(with: alice.id)?.1.skippedCount, DoubleRatchet.maxStoredSkippedKeys)
        let expired = bob.state.expire(now: t0 + 11 + DoubleRatchet.skippedKeyLifetimeMs + 10)
        XCTAssertEqual(expired.state.ratchetSnapshot(with: alice.id)?.1.skippedCount, 0)
        // The session's skipped keys, and the seen-ephemeral entry of Alice's handshake1 (24 h).
        let aliceEphemeral = try XCTUnwrap(bob.state.seen.entries.keys.first)
        XCTAssertEqual(expired.changes, [.session(try XCTUnwrap(bob.state.currentSession(with: alice.id)).id), .seenEntry(aliceEphemeral)])
        XCTAssertNil(expired.state.record(.seenEntry(aliceEphemeral)), "the expired entry's record is deleted")
    }

    func testStaleAndFutureHandshake1() throws {
        var alice = try TestNode(nickname: "alice"), bob = try TestNode(nickname: "bob")
        try alice.add(bob)
        let h1 = try alice.start(bob, now: t0)
        bob.refuse(h1, now: t0 + PigeonLimits.handshakeWindowMs + 1, .handshakeStale)
        bob.refuse(h1, now: t0 - PigeonLimits.clockSkewMs - 1, .handshakeFuture)
        XCTAssertEqual(try bob.deliver(h1, now: t0 + PigeonLimits.handshakeWindowMs).outputs.count, 1)
    }

    func testReplayedHandshake1() throws {
        var alice = try TestNode(nickname: "alice"), bob = try TestNode(nickname: "bob")
        try alice.add(bob)
        let h1 = try alice.start(bob, now: t0)
        let h2 = try bob.deliver(h1, now: t0 + 1).outputs
        // A copy while pending: the same handshake2, no new keys.
        let before = bob.keys
        let again = try bob.deliver(h1, now: t0 + 2)
        XCTAssertTrue(again.duplicate)
        XCTAssertEqual(again.outputs, h2)
        XCTAssertEqual(bob.keys.ephemeralIndex, before.ephemeralIndex)
        // Once the session exists the pending state is gone: a replay has nothing to answer from.
        let h3 = try XCTUnwrap(alice.deliver(try XCTUnwrap(h2.first), now: t0 + 3).outputs.first)
        try bob.deliver(h3, now: t0 + 4)
        bob.refuse(h1, now: t0 + 5, .handshakeReplay)
        // The cache survives the store: the same refusal after an encode/decode round trip.
        bob.state = try PigeonState(encoded: bob.state.encoded)
        bob.refuse(h1, now: t0 + 6, .handshakeReplay)
    }

    /// Mallory answers Alice's handshake1 with Bob's card but her own Noise static key.
    func testIdentityMismatchOnHandshake2AndTheGenuineAnswerStillWorks() throws {
        var alice = try TestNode(nickname: "alice"), bob = try TestNode(nickname: "bob")
        let mallory = try TestNode(nickname: "mallory")
        try alice.add(bob)
        let h1 = try alice.start(bob, now: t0)
        let forged = try handshake2(answering: h1, staticKey: mallory.staticKey, card: bob.card)
        alice.refuse(forged, now: t0 + 1, .identityMismatch)
        // A genuine card and static, but not the contact Alice called.
        let other = try handshake2(answering: h1, staticKey: mallory.staticKey, card: mallory.card)
        alice.refuse(other, now: t0 + 1, .identityMismatch)
        // Tampered ciphertext.
        var tampered = forged
        tampered[tampered.count - 20] ^= 1
        alice.refuse(tampered, now: t0 + 1, .handshakeFailed)
        // The real Bob.
        let h2 = try XCTUnwrap(bob.deliver(h1, now: t0 + 2).outputs.first)
        XCTAssertNotNil(try alice.deliver(h2, now: t0 + 3).established)
    }

    /// A card whose bundle was signed without the domain prefix (Pigeon's form) is bad_signature,
    /// in a handshake as on its own.
    func testBundleWithoutDomainPrefixIsRefused() throws {
        var alice = try TestNode(nickname: "alice"), bob = try TestNode(nickname: "bob")
        try alice.add(bob)
        let card = try cardWithUnprefixedBundle(bob)
        XCTAssertThrowsError(try ContactCard(bytes: card)) { XCTAssertEqual($0 as? PigeonError, .badSignature) }
        let h1 = try alice.start(bob, now: t0)
        let read = try NoiseXX.respond(prologue: PigeonState.prologue, staticKey: bob.staticKey, message: Array(h1[18...]))
        let (_, m2) = try read.writeMessage2(ephemeral: .generate(), payload: X25519PrivateKey.generate().publicKey.bytes + card)
        alice.refuse(Frame.header(.handshake2, SessionID(valid: Array(h1[2..<18]))) + m2, now: t0 + 1, .badSignature)
    }

    /// A responder refuses a handshake3 whose static key is not its card's, and one carrying its
    /// own identity; the pending state survives both.
    func testIdentityMismatchOnHandshake3() throws {
        var alice = try TestNode(nickname: "alice"), bob = try TestNode(nickname: "bob")
        let mallory = try TestNode(nickname: "mallory")
        try alice.add(bob)
        let h1 = try alice.start(bob, now: t0)
        let h2 = try XCTUnwrap(bob.deliver(h1, now: t0 + 1).outputs.first)
        // Alice's pending Noise state, driven by hand to write message 3 with Mallory's static.
        guard case .initiator(let pending)? = alice.state.pending[SessionID(valid: Array(h1[2..<18]))] else { return XCTFail("no pending") }
        let (sentAsMallory, _) = try NoiseXX.initiate(prologue: PigeonState.prologue, staticKey: mallory.staticKey,
                                                      ephemeral: pending.ephemeral, payload: .bigEndian(t0))
        let response = try sentAsMallory.readMessage2(Array(h2[18...]))
        let (_, m3) = try response.writeMessage3(payload: X25519PrivateKey.generate().publicKey.bytes + alice.card.bytes)
        bob.refuse(Frame.header(.handshake3, SessionID(valid: Array(h1[2..<18]))) + m3, now: t0 + 2, .identityMismatch)
        // The genuine handshake3 still completes.
        let h3 = try XCTUnwrap(alice.deliver(h2, now: t0 + 3).outputs.first)
        XCTAssertTrue(try bob.deliver(h3, now: t0 + 4).contactRequest)
    }

    func testOutdatedCardIsRefused() throws {
        var alice = try TestNode(nickname: "alice"), bob = try TestNode(nickname: "bob")
        let newer = try alice.card.reissued(identity: alice.identity, staticKey: alice.staticKey.publicKey, now: t0 + 1000,
                                            nickname: "alice 2", relays: [])
        XCTAssertGreaterThan(newer.createdAt, alice.card.createdAt)
        bob.state = try bob.state.addContact(newer).state
        XCTAssertThrowsError(try bob.state.addContact(alice.card)) { XCTAssertEqual($0 as? PigeonError, .cardOutdated) }
        try alice.add(bob)
        // Alice still presents her older card in handshake3.
        let h1 = try alice.start(bob, now: t0)
        let h2 = try XCTUnwrap(bob.deliver(h1, now: t0 + 1).outputs.first)
        let h3 = try XCTUnwrap(alice.deliver(h2, now: t0 + 2).outputs.first)
        bob.refuse(h3, now: t0 + 3, .cardOutdated)
    }

    /// A kind-3 card update: applied when newer (a changed nickname), refused when of another
    /// identity, and the message key is consumed either way.
    func testCardUpdateInAMessage() throws {
        var (alice, bob) = try establishedPair(t0: t0)
        bob.state = try bob.state.setVerified(alice.id, true, now: t0).state
        let newer = try alice.card.reissued(identity: alice.identity, staticKey: alice.staticKey.publicKey, now: t0 + 50,
                                            nickname: "Alice B.", relays: [])
        let content = try MessageContent(kind: 3, msgID: [UInt8](repeating: 7, count: 16), sentAt: t0 + 50, body: newer.bytes)
        let sent = try alice.state.send(to: bob.id, content: content, now: t0 + 50)
        XCTAssertEqual(sent.state.local.card, newer)
        XCTAssertTrue(sent.changes.contains(.local))
        alice.state = sent.state
        let out = try bob.deliver(try XCTUnwrap(sent.output.frames.last), now: t0 + 51)
        XCTAssertNil(out.message?.refusal)
        XCTAssertEqual(bob.state.contacts[alice.id]?.card.nickname, "Alice B.")
        XCTAssertTrue(bob.state.contacts[alice.id]?.isVerified ?? false, "same N: the verified mark stays")

        // Alice cannot send a card of someone else as her own.
        let other = try TestNode(nickname: "eve")
        let bad = try MessageContent(kind: 3, msgID: [UInt8](repeating: 8, count: 16), sentAt: t0 + 60, body: other.card.bytes)
        XCTAssertThrowsError(try alice.state.send(to: bob.id, content: bad, now: t0 + 60)) {
            XCTAssertEqual($0 as? PigeonError, .identityMismatch)
        }
    }

    func testHeldFramesAreBoundedAndReleasedInOrder() throws {
        var alice = try TestNode(nickname: "alice"), bob = try TestNode(nickname: "bob")
        try alice.add(bob)
        let h1 = try alice.start(bob, now: t0)
        let h2 = try XCTUnwrap(bob.deliver(h1, now: t0 + 1).outputs.first)
        let h3 = try XCTUnwrap(alice.deliver(h2, now: t0 + 2).outputs.first)
        var frames: [[UInt8]] = []
        for i in 0..<(PigeonLimits.maxHeldPerSession + 1) {
            frames.append(try XCTUnwrap(alice.send("m\(i)", to: bob, now: t0 + 3).last))
        }
        for frame in frames.prefix(PigeonLimits.maxHeldPerSession) {
            XCTAssertTrue(try bob.deliver(frame, now: t0 + 4).held)
        }
        bob.refuse(frames[PigeonLimits.maxHeldPerSession], now: t0 + 4, .sessionUnknown)
        let out = try bob.deliver(h3, now: t0 + 5)
        XCTAssertEqual(out.released.count, PigeonLimits.maxHeldPerSession)
        XCTAssertEqual(try out.released.map { try $0.result.get().content?.body }, (0..<PigeonLimits.maxHeldPerSession).map { Array("m\($0)".utf8) })
    }

    func testCrossedHandshakesAgreeOnTheCurrentSession() throws {
        var alice = try TestNode(nickname: "alice"), bob = try TestNode(nickname: "bob")
        try alice.add(bob)
        try bob.add(alice)
        let a1 = try alice.start(bob, now: t0)
        let b1 = try bob.start(alice, now: t0 + 7)
        let b2 = try XCTUnwrap(bob.deliver(a1, now: t0 + 8).outputs.first)
        let a2 = try XCTUnwrap(alice.deliver(b1, now: t0 + 8).outputs.first)
        let a3 = try XCTUnwrap(alice.deliver(b2, now: t0 + 9).outputs.first)
        let b3 = try XCTUnwrap(bob.deliver(a2, now: t0 + 9).outputs.first)
        try bob.deliver(a3, now: t0 + 10)
        try alice.deliver(b3, now: t0 + 10)
        let aliceCurrent = try XCTUnwrap(alice.state.currentSession(with: bob.id))
        let bobCurrent = try XCTUnwrap(bob.state.currentSession(with: alice.id))
        XCTAssertEqual(aliceCurrent.id, bobCurrent.id)
        XCTAssertEqual(aliceCurrent.handshakeTimestamp, t0 + 7, "the newer handshake1 wins")
        XCTAssertEqual(alice.state.sessions.count, 2)
        // Both sessions still receive.
        let message = try XCTUnwrap(alice.send("hi", to: bob, now: t0 + 11).last)
        XCTAssertEqual(try bob.deliver(message, now: t0 + 12).message?.content?.body, Array("hi".utf8))
    }

    // MARK: Forgeries

    func handshake2(answering h1: [UInt8], staticKey: X25519PrivateKey, card: ContactCard) throws -> [UInt8] {
        let read = try NoiseXX.respond(prologue: PigeonState.prologue, staticKey: staticKey, message: Array(h1[18...]))
        let (_, m2) = try read.writeMessage2(ephemeral: .generate(), payload: X25519PrivateKey.generate().publicKey.bytes + card.bytes)
        return Frame.header(.handshake2, SessionID(valid: Array(h1[2..<18]))) + m2
    }

    /// `node`'s card rebuilt with the bundle signed over I ‖ S alone; link and card signature valid.
    func cardWithUnprefixedBundle(_ node: TestNode) throws -> [UInt8] {
        let card = node.card
        var out: [UInt8] = [1] + card.identityKey.bytes + card.staticKey.bytes
        out += try node.identity.sign(card.identityKey.bytes + card.staticKey.bytes)
        out += Array(card.bytes[129..<(card.bytes.count - 64)])
        out += try node.identity.sign(Array("burrow-pigeon-v1:card".utf8) + out)
        return out
    }
}
