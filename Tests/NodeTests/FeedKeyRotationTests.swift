import Feed
import Foundation
import Store
import TestSupport
import XCTest
@_spi(StoreAccess) @testable import Node

/// Feed keys across rotations and introductions (feed.md 5.3, 6), between homes in one process:
/// feed-keys bodies are handed from one node to the other as the DM session would carry them
/// (the DM transport has its own tests), so each step of the exchange is visible.
final class FeedKeyRotationTests: NodeRelayTestCase {
    private struct Member {
        let node: BurrowNode
        let identityKey: [UInt8]
        let card: String
        var feedID: [UInt8] { FeedKeys.feedID(identityKey: identityKey) }
    }

    private func member(_ name: String) async throws -> Member {
        let home = try self.node()
        let card = try await home.directMessages.contactCard(nickname: name, relays: nil, timeout: timeout)
        let key = try home.store.transaction { try home.feeds.identity($0).identityKey }
        return Member(node: home, identityKey: key, card: card.card)
    }

    private func befriend(_ a: Member, _ b: Member) throws {
        _ = try a.node.directMessages.addContact(card: b.card, name: nil)
        _ = try b.node.directMessages.addContact(card: a.card, name: nil)
    }

    /// The body `from` sends `to` at step 1 (its bundle, and an encapsulation when it has one to make).
    private func firstBody(_ from: Member, to: Member) throws -> [UInt8] {
        try from.node.store.transaction { tx in
            let feeds = from.node.feeds
            let identity = try feeds.identity(tx)
            var exchange = try feeds.exchange(identity, tx)
            let body = try exchange.body(for: to.identityKey, encapsulate: FeedKeyExchange.encapsulateFresh).bytes
            try feeds.saveExchange(exchange, identity, tx, now: FeedService.nowMilliseconds())
            return body
        }
    }

    /// Hands `body` to `to` as a DM from `from` would arrive; returns the reply `to` owes, if any.
    private func deliver(_ body: [UInt8], from: Member, to: Member) throws -> [UInt8]? {
        try to.node.store.transaction { tx in
            try to.node.feeds.receivedFeedKeys(from: from.identityKey, body: body, tx)
            guard let owed = try tx.feedKeys.lastSent(to: from.identityKey), owed.at == FeedService.replyDue else { return nil }
            try tx.feedKeys.setSent(to: from.identityKey, body: owed.body, at: FeedService.nowMilliseconds())
            return owed.body
        }
    }

    /// `from` starts; replies go back and forth until nobody owes one.
    private func exchangeKeys(_ from: Member, _ to: Member) throws {
        var body: [UInt8]? = try firstBody(from, to: to)
        var sender = from, receiver = to
        var bodies = 0
        while let next = body {
            bodies += 1
            XCTAssertLessThan(bodies, 6, "an exchange ends")
            body = try deliver(next, from: sender, to: receiver)
            swap(&sender, &receiver)
        }
    }

    private func established(_ a: Member, with b: Member) throws -> Bool {
        try a.node.store.transaction { tx in try a.node.feeds.exchange(try a.node.feeds.identity(tx), tx).isEstablished(with: b.identityKey) }
    }

    private func currentBundle(_ m: Member) throws -> PQBundle? {
        try m.node.store.transaction { tx in try m.node.feeds.exchange(try m.node.feeds.identity(tx), tx).currentBundle }
    }

    /// `author`'s own entries handed to `reader` as a session's chunks would bring them.
    private func sync(_ author: Member, to reader: Member) throws {
        let rows = try author.node.store.transaction { try $0.feeds.messages(feedID: author.feedID) }
        for row in rows {
            _ = reader.node.feeds.receive(messageID: row.messageID, envelope: row.envelope, requested: [author.feedID])
        }
    }

    private func statuses(_ reader: Member, of author: Member) throws -> [String] {
        try reader.node.store.transaction { try $0.feeds.messages(feedID: author.feedID).map { "\($0.type) \($0.contentStatus ?? "held")" } }
    }

    func testRemovingAContactRotatesTheBundleAndTheRemovedContactReadsNothingNew() async throws {
        let alice = try await member("Alice"), bob = try await member("Bob"), carol = try await member("Carol")
        try befriend(alice, bob)
        try befriend(alice, carol)
        try exchangeKeys(alice, bob)
        try exchangeKeys(carol, alice)
        XCTAssertTrue(try established(alice, with: bob))
        XCTAssertTrue(try established(alice, with: carol))
        let before = try XCTUnwrap(try currentBundle(alice))
        let presenceBefore = try alice.node.feeds.presence().own

        _ = try alice.node.directMessages.removeContact("Carol")

        let after = try XCTUnwrap(try currentBundle(alice))
        XCTAssertNotEqual(after.hash, before.hash, "removing a contact makes a new bundle")
        XCTAssertGreaterThan(after.createdAt, before.createdAt)
        XCTAssertNotEqual(try alice.node.feeds.presence().own, presenceBefore, "a new presence key hides Alice from Carol")
        let (carolKeys, carolFeed, ownEntries) = try alice.node.store.transaction { tx in
            (try tx.feedKeys.pairKeys().filter { $0.peerFeedID == carol.feedID }.count, try tx.feeds.feed(carol.feedID),
             try tx.feeds.messages(feedID: alice.feedID))
        }
        XCTAssertEqual(carolKeys, 0, "the removed contact's pair keys are deleted")
        XCTAssertEqual(carolFeed?.following, false)
        XCTAssertEqual(ownEntries.map { "\($0.type) \($0.contentStatus ?? "-")" }, ["key_rotation ok"])
        XCTAssertFalse(try established(alice, with: bob), "Bob is owed the new bundle")

        // Bob's pair key with Alice's old bundle still opens the rotation entry; the next
        // exchange makes a pair key for the new bundle.
        try sync(alice, to: bob)
        XCTAssertEqual(try statuses(bob, of: alice), ["key_rotation ok"])
        try exchangeKeys(alice, bob)
        XCTAssertTrue(try established(alice, with: bob))
        XCTAssertTrue(try established(bob, with: alice))
        let aliceKeysWithBob = try alice.node.store.transaction { try $0.feedKeys.pairKeys().filter { $0.peerFeedID == bob.feedID } }
        XCTAssertEqual(aliceKeysWithBob.count, 2)
        XCTAssertEqual(aliceKeysWithBob.filter { $0.supersededAt == nil }.count, 1, "the old pair key is superseded, kept 30 days")

        // A post after the removal: Bob reads it, Carol (who still follows Alice) holds it unread.
        _ = try await alice.node.feeds.post("After Carol left", audience: .contacts, replyTo: nil, mentions: [], timeout: timeout)
        try sync(alice, to: bob)
        try sync(alice, to: carol)
        XCTAssertEqual(try statuses(bob, of: alice), ["key_rotation ok", "post ok"])
        XCTAssertEqual(try statuses(carol, of: alice), ["key_rotation no_key", "post no_key"])
    }

    func testAReaderOfAKeyRotationSendsTheAuthorABodyAndThePairKeyFollows() async throws {
        let alice = try await member("Alice"), bob = try await member("Bob")
        try befriend(alice, bob)
        try exchangeKeys(alice, bob)
        let oldPresence = try bob.node.feeds.presence().contacts.first?.presenceKey

        // Alice rotates; her feed-keys body to Bob (with her ciphertext to his bundle) is lost,
        // her key_rotation entry arrives.
        try alice.node.store.transaction { tx in
            let feeds = alice.node.feeds
            let identity = try feeds.identity(tx)
            var exchange = try feeds.exchange(identity, tx)
            try feeds.rotate(&exchange, identity, reason: "scheduled_rotation", tx, now: FeedService.nowMilliseconds())
        }
        let rotated = try XCTUnwrap(try currentBundle(alice))
        let lost = try FeedKeysBody.decode(try firstBody(alice, to: bob))
        XCTAssertEqual(lost.bundle.hash, rotated.hash)
        XCTAssertNotNil(lost.encapsulation)
        try sync(alice, to: bob)
        XCTAssertEqual(try statuses(bob, of: alice), ["key_rotation ok"])

        // Bob learnt the new bundle from the entry: his body encapsulates to it.
        let learnt = try bob.node.store.transaction { tx in
            try bob.node.feeds.exchange(try bob.node.feeds.identity(tx), tx).record(of: alice.identityKey)?.bundle
        }
        XCTAssertEqual(learnt?.hash, rotated.hash)
        XCTAssertFalse(try established(bob, with: alice))
        let body = try firstBody(bob, to: alice)
        XCTAssertEqual(try FeedKeysBody.decode(body).encapsulation?.target, rotated.hash, "Bob's body carries a ciphertext to Alice's new bundle")

        // Alice had already encapsulated to Bob (the lost body), so she owes no reply and holds
        // the pair key; Bob, without her ciphertext, does not.
        XCTAssertNil(try deliver(body, from: bob, to: alice))
        XCTAssertTrue(try established(alice, with: bob))
        XCTAssertFalse(try established(bob, with: alice))

        // Bob's resend (the same bytes, 5.3 step 1) tells Alice hers was lost: she sends it again.
        XCTAssertEqual(try firstBody(bob, to: alice), body, "a resend is the same bytes")
        let again = try XCTUnwrap(try deliver(body, from: bob, to: alice))
        XCTAssertEqual(try FeedKeysBody.decode(again).encapsulation?.ciphertext, lost.encapsulation?.ciphertext)
        XCTAssertNil(try deliver(again, from: alice, to: bob), "the exchange ends")
        XCTAssertTrue(try established(bob, with: alice))
        XCTAssertNil(try deliver(body, from: bob, to: alice), "a second resend within a day is not answered again")

        let newPresence = try bob.node.feeds.presence().contacts.first { $0.identityKey == alice.identityKey }?.presenceKey
        XCTAssertEqual(newPresence, try alice.node.feeds.presence().own, "Bob has Alice's new presence key from her body")
        XCTAssertNotEqual(newPresence, oldPresence)
        let bobKeys = try bob.node.store.transaction { try $0.feedKeys.pairKeys().filter { $0.peerFeedID == alice.feedID } }
        XCTAssertEqual(bobKeys.count, 2)
    }

    func testAnIntroductionIsCheckedAgainstTheCardAddedLater() async throws {
        let alice = try await member("Alice"), bob = try await member("Bob"), dave = try await member("Dave"), eve = try await member("Eve")
        try befriend(alice, bob)
        try befriend(alice, dave)
        try exchangeKeys(alice, bob)
        try exchangeKeys(alice, dave)

        // Before the introduction Bob has nothing on Dave.
        XCTAssertEqual(try bob.node.feeds.introductions(ofCard: dave.card), [])
        _ = try await alice.node.feeds.introduce("Dave", to: "Bob", note: "my brother", timeout: timeout)
        try sync(alice, to: bob)
        XCTAssertEqual(try statuses(bob, of: alice), ["contact_introduction ok"])

        XCTAssertEqual(try bob.node.feeds.introductions(ofCard: dave.card),
                       [FeedIntroductionView(by: "Alice", note: "my brother", keysMatch: true)])
        XCTAssertEqual(try bob.node.feeds.introductions(ofCard: eve.card), [], "nobody introduced Eve")
        XCTAssertEqual(try alice.node.feeds.introductions(ofCard: dave.card), [], "one's own introductions are not a check")
    }

    /// An entry held without its key (a group post that arrived before the member recorded the
    /// epoch's secret) is shown once, when the key comes: `run` and `sync` print it then.
    func testAnEntryOpenedLateIsShownOnceWhenItsKeyArrives() async throws {
        let alice = try await member("Alice"), bob = try await member("Bob")
        try befriend(alice, bob)
        try exchangeKeys(alice, bob)
        _ = try await group("Family", by: alice.node, with: [bob.node])
        let post = try await alice.node.feeds.post("The gate code is 4711", audience: .group("Family"), replyTo: nil, mentions: [],
                                                   timeout: timeout)
        try sync(alice, to: bob)
        XCTAssertEqual(try statuses(bob, of: alice), ["post no_key"], "Bob has not recorded Family's secrets yet")
        XCTAssertEqual(bob.node.feeds.takeReopened(), [])

        try bob.node.feeds.recordGroupSecrets()
        let shown = bob.node.feeds.takeReopened()
        XCTAssertEqual(shown.map(\.id), [post.id])
        XCTAssertEqual(shown.first?.body, "The gate code is 4711")
        XCTAssertEqual(shown.first?.status, "ok")
        XCTAssertEqual(bob.node.feeds.takeReopened(), [], "once")
    }
}
