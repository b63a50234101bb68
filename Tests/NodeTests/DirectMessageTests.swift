import Foundation
import Nostr
import Pigeon
import Store
import TestSupport
import XCTest
@_spi(StoreAccess) @testable import Node

/// Pigeon DMs between two homes through burrow-relay: cards, the handshake across syncs,
/// messages both ways, receipts, and refusals that change nothing.
final class DirectMessageTests: NodeRelayTestCase {
    /// Alice and Bob, each holding the other's card.
    func pair() async throws -> (alice: BurrowNode, bob: BurrowNode) {
        let alice = try node(), bob = try node()
        let aliceCard = try await alice.directMessages.contactCard(nickname: "Alice", relays: nil, timeout: timeout)
        let bobCard = try await bob.directMessages.contactCard(nickname: "Bob", relays: nil, timeout: timeout)
        XCTAssertEqual(try alice.directMessages.addContact(card: bobCard.card, name: nil).name, "Bob")
        XCTAssertEqual(try bob.directMessages.addContact(card: aliceCard.card, name: nil).name, "Alice")
        return (alice, bob)
    }

    func records(_ node: BurrowNode) throws -> [String: [UInt8]] {
        try node.store.transaction { tx in Dictionary(uniqueKeysWithValues: try tx.pigeonRecords.all().map { ($0.key, $0.value) }) }
    }

    func testHandshakeAcrossSyncsThenMessagesBothWaysWithReceipts() async throws {
        let (alice, bob) = try await pair()
        // Nobody answers within a short wait: the message stays queued with handshake1 sent.
        let queued = try await alice.sendDM(to: "Bob", text: "hi Bob", timeout: .milliseconds(300))
        XCTAssertEqual(queued.status, "queued")
        XCTAssertNil(try alice.directMessages.contact("Bob").session)

        let bobFirst = try await bob.sync(timeout: timeout)  // handshake1 → handshake2
        XCTAssertTrue(bobFirst.errors.isEmpty, "\(bobFirst.errors)")
        XCTAssertNil(try bob.directMessages.contact("Alice").session, "the responder has no session before handshake3")

        let aliceSecond = try await alice.sync(timeout: timeout)  // handshake2 → handshake3 + the message
        XCTAssertTrue(aliceSecond.errors.isEmpty, "\(aliceSecond.errors)")
        let aliceSession = try XCTUnwrap(try alice.directMessages.contact("Bob").session)
        XCTAssertEqual(aliceSession.role, "initiator")
        XCTAssertFalse(aliceSession.confirmed)
        XCTAssertEqual(try alice.directMessages.readDMs(contact: "Bob", limit: nil).map(\.status), ["sent"])

        let bobSecond = try await bob.sync(timeout: timeout)  // handshake3 (+ its copy) and the message
        XCTAssertTrue(bobSecond.errors.isEmpty, "\(bobSecond.errors)")
        let received = try bob.directMessages.readDMs(contact: "Alice", limit: nil)
        XCTAssertEqual(received.map(\.text), ["hi Bob"])
        XCTAssertEqual(received.first?.direction, "in")
        XCTAssertEqual(received.first?.status, "received")
        XCTAssertEqual(received.first?.id, queued.id, "msg_id names the message on both sides")
        XCTAssertEqual(try bob.directMessages.contact("Alice").session?.id, aliceSession.id)
        XCTAssertFalse(received.first?.verified ?? true)

        // Bob answers on the established session at once; Alice's sync reads it, the ack
        // confirms her session and the receipt marks her message delivered.
        let reply = try await bob.sendDM(to: "Alice", text: "hi Alice", timeout: timeout)
        XCTAssertEqual(reply.status, "sent")
        _ = try await alice.sync(timeout: timeout)
        XCTAssertEqual(try alice.directMessages.readDMs(contact: "Bob", limit: nil).map { "\($0.direction) \($0.text) \($0.status)" },
                       ["out hi Bob delivered", "in hi Alice received"])
        XCTAssertTrue(try XCTUnwrap(try alice.directMessages.contact("Bob").session).confirmed)
        _ = try await bob.sync(timeout: timeout)
        XCTAssertEqual(try bob.directMessages.readDMs(contact: "Alice", limit: nil).last?.status, "delivered")

        // A resync reads nothing twice.
        _ = try await bob.sync(timeout: timeout)
        XCTAssertEqual(try bob.directMessages.readDMs(contact: nil, limit: nil).count, 2)
        XCTAssertEqual(try bob.directMessages.readDMs(contact: nil, limit: 1).map(\.text), ["hi Alice"])
    }

    func testSafetyNumbersMatchAndVerificationNeedsTheRightDigits() async throws {
        let (alice, bob) = try await pair()
        let (_, fromAlice) = try alice.directMessages.verifyContact("Bob", match: nil, confirm: false, unverify: false)
        let (_, fromBob) = try bob.directMessages.verifyContact("Alice", match: nil, confirm: false, unverify: false)
        XCTAssertEqual(fromAlice, fromBob)
        XCTAssertEqual(fromAlice.filter(\.isNumber).count, 60)
        XCTAssertThrowsError(try alice.directMessages.verifyContact("Bob", match: String(repeating: "1", count: 60), confirm: false, unverify: false)) {
            guard case .safetyNumberMismatch = $0 as? NodeError else { return XCTFail("\($0)") }
        }
        XCTAssertFalse(try alice.directMessages.contact("Bob").verified)
        let (verified, _) = try alice.directMessages.verifyContact("Bob", match: fromBob.replacingOccurrences(of: "\n", with: " "), confirm: false, unverify: false)
        XCTAssertTrue(verified.verified)
        XCTAssertFalse(try alice.directMessages.verifyContact("Bob", match: nil, confirm: false, unverify: true).0.verified)
    }

    func testContactsResolveByNamePrefixAndNostrKey() async throws {
        let (alice, bob) = try await pair()
        let bobView = try alice.directMessages.contact("Bob")
        XCTAssertEqual(try alice.directMessages.contact(String(bobView.identity.prefix(8))).name, "Bob")
        XCTAssertEqual(try alice.directMessages.contact(bob.publicKey.npub).name, "Bob")
        XCTAssertEqual(try alice.directMessages.contact(bob.publicKey.hex).name, "Bob")
        XCTAssertThrowsError(try alice.directMessages.contact("Carol")) { guard case .unknownContact = $0 as? NodeError else { return XCTFail("\($0)") } }
        XCTAssertThrowsError(try alice.directMessages.contact(String(bobView.identity.prefix(7)))) {
            guard case .unknownContact = $0 as? NodeError else { return XCTFail("\($0)") }
        }
        XCTAssertThrowsError(try alice.directMessages.addContact(card: try alice.contactCardText(), name: nil))
        XCTAssertThrowsError(try alice.directMessages.addContact(card: "burrowcard1qqqq", name: nil)) { XCTAssertEqual($0 as? PigeonError, .badCard) }
        _ = try alice.directMessages.removeContact("Bob")
        XCTAssertTrue(try alice.directMessages.contacts().isEmpty)
    }

    func testATamperedFrameIsRefusedWithItsCodeAndChangesNothing() async throws {
        let (alice, bob) = try await pair()
        _ = try await alice.sendDM(to: "Bob", text: "one", timeout: .milliseconds(300))
        _ = try await bob.sync(timeout: timeout)
        _ = try await alice.sync(timeout: timeout)
        _ = try await bob.sync(timeout: timeout)
        let before = try records(bob)
        let messagesBefore = try bob.directMessages.readDMs(contact: nil, limit: nil)

        // Alice's next frame, with one ciphertext byte flipped, sealed by Alice as usual.
        let (session, frame) = try alice.store.transaction { tx -> (SessionID, [UInt8]) in
            let state = try XCTUnwrap(try alice.directMessages.loadPigeon(tx))
            let bobKey = try XCTUnwrap(state.contacts.values.first).identityKey
            let content = try MessageContent(kind: 1, msgID: DirectMessageService.randomMessageID(), sentAt: DirectMessageService.nowMilliseconds(), body: Array("two".utf8))
            let sent = try state.send(to: bobKey, content: content, now: DirectMessageService.nowMilliseconds())
            return (sent.output.sessionID, try XCTUnwrap(sent.output.frames.last))
        }
        XCTAssertEqual(session.hex, try bob.directMessages.contact("Alice").session?.id)
        var tampered = frame
        tampered[tampered.count - 1] ^= 0x01
        var rng = SystemRandomNumberGenerator()
        let rumor = try NostrCarrier.rumor(frame: tampered, sender: alice.publicKey, now: BurrowNode.now())
        let wrap = try GiftWrap.wrap(rumor: rumor, sender: alice.keys, recipient: bob.publicKey, now: BurrowNode.now(), rng: &rng)
        var report = SyncReport()
        bob.handleGiftWrap(wrap, report: &report)
        XCTAssertEqual(report.errors.map(\.reason), ["decrypt_failed"])
        XCTAssertEqual(try records(bob), before, "a refused frame changes no DM state")
        XCTAssertEqual(try bob.directMessages.readDMs(contact: nil, limit: nil), messagesBefore)

        // Garbage inside a valid seal is bad_frame.
        let junk = try Rumor(pubkey: alice.publicKey, createdAt: BurrowNode.now(), kind: 1590, tags: [], content: "not base64!")
        var report2 = SyncReport()
        bob.handleGiftWrap(try GiftWrap.wrap(rumor: junk, sender: alice.keys, recipient: bob.publicKey, now: BurrowNode.now(), rng: &rng),
                           report: &report2)
        XCTAssertEqual(report2.errors.map(\.reason), ["bad_frame"])
        XCTAssertEqual(try records(bob), before)
    }
}

extension BurrowNode {
    /// The own card's text (tests).
    func contactCardText() throws -> String {
        try store.transaction { try directMessages.pigeon($0).local.card.text }
    }
}
