import Foundation
import Nostr
import Pigeon
import RelayClient
import Store
import TestSupport
import XCTest
@_spi(StoreAccess) @testable import Node

/// Issue 19 at the node: the DM outbox's bounds (expiry, attempts, backoff, strangers' rows,
/// one deadline per flush), the relays taken from someone else's inbox list, and a mailbox
/// that every processed wrap leaves.
final class StrangerBoundsTests: NodeRelayTestCase {
    func randomKey() -> PublicKey {
        var rng = SystemRandomNumberGenerator()
        return Keys.generate(using: &rng).publicKey
    }

    /// A handshake2-shaped frame (only the type byte and length matter to the outbox).
    func frame(type: FrameType, byte: UInt8 = 0) -> [UInt8] {
        [1, type.rawValue] + [UInt8](repeating: byte, count: 120)
    }

    func testInboxRelaysOfSomeoneElseAreAtMostFourSharedFirstAndNeverPrivateUnlessOursAre() {
        let listed = (0..<100).map { "wss://relay\($0).example.org" } + ["ws://127.0.0.1:9", "ws://10.0.0.5", "ws://192.168.1.2:7447",
                                                                          "ws://169.254.1.1", "ws://[fd00::1]", "ws://printer.local"]
        let publicOnly = DirectMessageService.inboxRoute(listed, ours: ["wss://relay42.example.org"])
        XCTAssertEqual(publicOnly.count, DMOutboxPolicy.maxInboxRelays)
        XCTAssertEqual(publicOnly.first, "wss://relay42.example.org", "a relay we share comes first")
        XCTAssertTrue(publicOnly.allSatisfy { !$0.contains("127.") && !$0.contains("10.0") && !$0.contains("192.168") })
        let privateOnly = DirectMessageService.inboxRoute(["ws://127.0.0.1:9", "ws://10.0.0.5", "ws://[fe80::1]"], ours: ["wss://relay.example.org"])
        XCTAssertEqual(privateOnly, [], "no private address unless we use one ourselves")
        let home = DirectMessageService.inboxRoute(["ws://127.0.0.1:9", "ws://192.168.1.2:7447"], ours: ["ws://127.0.0.1:7447"])
        XCTAssertEqual(home.count, 2, "a home or test setup with a private relay of its own may dial others")
    }

    func testOutboxRowsExpireGiveUpAndBackOff() throws {
        let node = try node()
        let now = BurrowNode.now()
        let ids = try node.store.transaction { tx -> [Int64] in
            [
                try tx.dmOutbox.insert(recipient: randomKey().bytes, contact: nil, frame: frame(type: .handshake2, byte: 1), msgID: nil,
                                       at: now - DMOutboxPolicy.handshakeLifetime - 1),
                try tx.dmOutbox.insert(recipient: randomKey().bytes, contact: nil, frame: frame(type: .message, byte: 2), msgID: nil,
                                       at: now - DMOutboxPolicy.handshakeLifetime - 1),
                try tx.dmOutbox.insert(recipient: randomKey().bytes, contact: nil, frame: frame(type: .message, byte: 3), msgID: nil,
                                       at: now - DMOutboxPolicy.messageLifetime - 1),
                try tx.dmOutbox.insert(recipient: randomKey().bytes, contact: nil, frame: frame(type: .handshake2, byte: 4), msgID: nil, at: now),
            ]
        }
        let expired = try node.store.transaction { tx in
            try tx.dmOutbox.expire(handshakesBefore: now - DMOutboxPolicy.handshakeLifetime,
                                   messagesBefore: now - DMOutboxPolicy.messageLifetime, maxAttempts: DMOutboxPolicy.maxAttempts)
        }
        XCTAssertEqual(expired, 2, "a day-old handshake and a month-old message expire; a day-old message does not")
        var due = try node.store.transaction { try $0.dmOutbox.due(at: now, limit: 10).map(\.id) }
        XCTAssertEqual(due, [ids[1], ids[3]])

        // Failed attempts: the first few are retried at once, then the row waits.
        for attempt in 1...DMOutboxPolicy.immediateAttempts {
            try node.store.transaction { try $0.dmOutbox.deferAttempt(id: ids[3], until: now + DMOutboxPolicy.retryDelay(afterAttempts: attempt)) }
        }
        due = try node.store.transaction { try $0.dmOutbox.due(at: now, limit: 10).map(\.id) }
        XCTAssertEqual(due, [ids[1]], "after \(DMOutboxPolicy.immediateAttempts) failures the row backs off")
        XCTAssertEqual(DMOutboxPolicy.retryDelay(afterAttempts: DMOutboxPolicy.immediateAttempts), 15)
        XCTAssertEqual(DMOutboxPolicy.retryDelay(afterAttempts: 100), DMOutboxPolicy.maxRetryDelay)
        // And after the cap of attempts it is given up.
        for _ in 0..<DMOutboxPolicy.maxAttempts { try node.store.transaction { try $0.dmOutbox.deferAttempt(id: ids[1], until: now) } }
        _ = try node.store.transaction { tx in
            try tx.dmOutbox.expire(handshakesBefore: now - DMOutboxPolicy.handshakeLifetime,
                                   messagesBefore: now - DMOutboxPolicy.messageLifetime, maxAttempts: DMOutboxPolicy.maxAttempts)
        }
        XCTAssertEqual(try node.store.transaction { try $0.dmOutbox.count(state: .failed) }, 3)
    }

    func testStrangersOutboxRowsAreCappedAndContactsGoFirst() throws {
        let node = try node()
        let contactKey = Ed25519PrivateKey.generate().publicKey
        try node.store.transaction { tx in
            for i in 0..<(DMOutboxPolicy.maxStrangerRows + 30) {
                try tx.dmOutbox.insert(recipient: randomKey().bytes, contact: nil, frame: frame(type: .handshake2, byte: UInt8(i & 0xff)),
                                       msgID: nil, at: BurrowNode.now())
                try tx.dmOutbox.capStrangerRows(DMOutboxPolicy.maxStrangerRows)
            }
            try tx.dmOutbox.insert(recipient: randomKey().bytes, contact: contactKey.bytes, frame: frame(type: .message), msgID: nil,
                                   at: BurrowNode.now())
        }
        let due = try node.store.transaction { try $0.dmOutbox.due(at: BurrowNode.now(), limit: 1000) }
        XCTAssertEqual(due.count, DMOutboxPolicy.maxStrangerRows + 1)
        XCTAssertEqual(due.first?.contact, contactKey.bytes, "a contact's frame goes before every stranger's")
    }

    func testOneFlushHasOneDeadlineHoweverManyStrangersItOwes() async throws {
        let node = try node()
        let hole = try Blackhole()
        defer { hole.close() }
        _ = try node.removeRelay(relay.url)
        _ = try node.addRelays([hole.url])
        try node.store.transaction { tx in
            for i in 0..<40 {
                try tx.dmOutbox.insert(recipient: randomKey().bytes, contact: nil, frame: frame(type: .handshake2, byte: UInt8(i)), msgID: nil,
                                       at: BurrowNode.now())
            }
        }
        let started = ContinuousClock.now
        await node.directMessages.flushDMOutbox(timeout: .seconds(1))
        let elapsed = ContinuousClock.now - started
        XCTAssertLessThan(elapsed, .seconds(4), "40 recipients behind a blackhole took \(elapsed), not 40 timeouts")
    }

    func testJoinRequestsAreCappedSettledOnesFirst() throws {
        let node = try node()
        func row(_ i: Int, _ state: StoredJoinRequest.State) -> StoredJoinRequest {
            var id = [UInt8](repeating: 0, count: 32)
            id[0] = UInt8(i >> 8)
            id[1] = UInt8(i & 0xff)
            return StoredJoinRequest(id: id, wrapperID: id, mlsGroupID: [1], requester: id, name: nil, keyPackageJSON: "{}",
                                     createdAt: Int64(i), receivedAt: Int64(i), state: state)
        }
        try node.store.transaction { tx in
            for i in 0..<10 { try tx.joinRequests.insert(row(i, .approved)) }
            for i in 10..<(GroupService.maxStoredJoinRequests + 5) { try tx.joinRequests.insert(row(i, .pending)) }
            try tx.joinRequests.cap(GroupService.maxStoredJoinRequests)
        }
        let kept = try node.store.transaction { try $0.joinRequests.list() }
        XCTAssertEqual(kept.count, GroupService.maxStoredJoinRequests)
        XCTAssertEqual(kept.filter { $0.state == .approved }.count, 5, "the five oldest settled rows made room")
    }

    /// Finding 5: strangers whose handshakes complete become contact requests, at most
    /// `maxContactRequests` of them (the oldest go); an added contact is never evicted.
    func testContactRequestsAreCappedAndAddedContactsStay() async throws {
        let node = try node()
        let ourCard = try ContactCard(text: try await node.directMessages.contactCard(nickname: "Bob", relays: nil, timeout: timeout).card)
        var rng = SystemRandomNumberGenerator()
        var keys = SystemKeySource()
        func completeHandshake(nickname: String) throws -> (identity: Ed25519PublicKey, card: ContactCard) {
            let nostr = Keys.generate(using: &rng)
            let identity = Ed25519PrivateKey.generate(), staticKey = X25519PrivateKey.generate()
            let card = try ContactCard.issue(identity: identity, staticKey: staticKey.publicKey, nostr: nostr,
                                             auxRand: [UInt8](repeating: 1, count: 32), createdAt: 1, nickname: nickname, relays: [])
            var peer = PigeonState(local: try LocalIdentity(identityKey: identity, staticKey: staticKey, card: card))
            peer = try peer.addContact(ourCard).state
            let started = try peer.start(with: ourCard.identityKey, now: DirectMessageService.nowMilliseconds(), keys: &keys)
            peer = started.state
            var report = SyncReport()
            _ = try node.directMessages.deliverDMFrame(started.output.frame, from: .nostr(nostr.publicKey), processedMark: nil, report: &report)
            let h2 = try XCTUnwrap(try node.store.transaction { try $0.dmOutbox.pending() }.last?.frame)
            let answered = try peer.deliver(frame: h2, now: DirectMessageService.nowMilliseconds(), keys: &keys)
            _ = try node.directMessages.deliverDMFrame(try XCTUnwrap(answered.output.outputs.first), from: .nostr(nostr.publicKey), processedMark: nil,
                                        report: &report)
            return (identity.publicKey, card)
        }
        let friend = try completeHandshake(nickname: "friend")
        _ = try node.directMessages.addContact(card: friend.card.text, name: nil)
        var requests: [Ed25519PublicKey] = []
        for i in 0..<(DirectMessageService.maxContactRequests + 5) { requests.append(try completeHandshake(nickname: "s\(i)").identity) }
        let contacts = try node.directMessages.contacts()
        XCTAssertEqual(contacts.filter { $0.state == "request" }.count, DirectMessageService.maxContactRequests)
        XCTAssertEqual(contacts.filter { $0.state == "added" }.map(\.identity), [friend.identity.hex])
        XCTAssertFalse(contacts.contains { $0.identity == requests[0].hex }, "the oldest request went")
        XCTAssertTrue(contacts.contains { $0.identity == requests.last?.hex }, "the newest stayed")
        XCTAssertTrue(contacts.filter { $0.state == "request" }.allSatisfy { $0.name.hasPrefix("request-") })
    }
}
