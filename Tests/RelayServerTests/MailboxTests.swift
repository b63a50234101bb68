import Foundation
import Logging
import Nostr
import SQLite
import Synchronization
import TestSupport
import XCTest
@testable import RelayServer

/// burrow-relay as a gift-wrap mailbox (Docs/protocols/pigeon-dm.md 6.3), each rule against a relay running
/// in this process on a free port, with real signed NIP-59 wraps, NIP-42 AUTH and kind-5
/// deletions sent over WebSocket.
final class MailboxTests: XCTestCase {
    // MARK: - One recipient per wrap

    func testAGiftWrapMustNameExactlyOneRecipient() async throws {
        let relay = TestRelay()
        defer { relay.remove() }
        let running = try await relay.start()
        let client = try await MailboxClient.connect(running)
        defer { client.raw.close() }
        let sender = TestEvents.keys()
        let recipient = TestEvents.keys().publicKey
        let other = TestEvents.keys().publicKey
        let now = TestEvents.now()

        let none = try TestEvents.sign(kind: Kind.giftWrap, content: "sealed", tags: [], keys: TestEvents.keys())
        let two = try Mailbox.wrap(to: recipient, from: sender, now: now, extraTags: [["p", other.hex]])
        let empty = try TestEvents.sign(kind: Kind.giftWrap, content: "sealed", tags: [["p"]], keys: TestEvents.keys())
        let notAKey = try TestEvents.sign(kind: Kind.giftWrap, content: "sealed", tags: [["p", "recipient"]], keys: TestEvents.keys())
        let upperCase = try TestEvents.sign(kind: Kind.giftWrap, content: "sealed", tags: [["p", recipient.hex.uppercased()]], keys: TestEvents.keys())
        for (name, event) in [("no p tag", none), ("two p tags", two), ("an empty p tag", empty), ("a p tag that is no key", notAKey), ("an upper-case key", upperCase)] {
            let answer = try await client.publish(event)
            XCTAssertFalse(answer.accepted, name)
            XCTAssertTrue(answer.message.hasPrefix("invalid: a gift wrap"), "\(name): \(answer.message)")
        }
        let exactlyOne = try await client.publish(try Mailbox.wrap(to: recipient, from: sender, now: now))
        XCTAssertEqual(exactlyOne.accepted, true, exactlyOne.message)
        let count = try await running.storedEventCount()
        XCTAssertEqual(count, 1, "only the wrap with one recipient is stored")
        await running.close()
    }

    // MARK: - Quotas

    func testTheDefaultQuotaIsAThousandWrapsAndSixteenMiBAndCanBeConfigured() throws {
        let defaults = RelayServerConfiguration()
        XCTAssertEqual(defaults.limits.mailboxWraps, 1000)
        XCTAssertEqual(defaults.limits.mailboxBytes, 16 * 1024 * 1024)
        let configured = try RelayServerConfiguration(json: Array(#"{"limits": {"mailbox_wraps": 5, "mailbox_bytes": 65536}}"#.utf8)).validated()
        XCTAssertEqual(configured.limits.mailboxWraps, 5)
        XCTAssertEqual(configured.limits.mailboxBytes, 65536)
        XCTAssertEqual(MailboxQuota(configured.limits), MailboxQuota(wraps: 5, bytes: 65536))
        for bad in [#"{"limits": {"mailbox_wraps": 0}}"#, #"{"limits": {"mailbox_bytes": 100}}"#] {
            XCTAssertThrowsError(try RelayServerConfiguration(json: Array(bad.utf8)).validated(), bad)
        }
        let example = try RelayServerConfiguration(
            jsonFile: Fixtures.repositoryRoot.appendingPathComponent("Relays/burrow-relay.example.json").path).validated()
        XCTAssertEqual(example.limits.mailboxWraps, 1000)
        XCTAssertEqual(example.limits.mailboxBytes, 16 << 20)
    }

    func testTheMailboxHoldsAtMostTheConfiguredNumberOfWrapsPerRecipient() async throws {
        let relay = TestRelay()
        defer { relay.remove() }
        let running = try await relay.start { $0.limits.mailboxWraps = 5 }
        let publisher = try await MailboxClient.connect(running)
        defer { publisher.raw.close() }
        let sender = TestEvents.keys()
        let full = TestEvents.keys()
        let other = TestEvents.keys()
        let now = TestEvents.now()

        let wraps = try (0..<6).map { try Mailbox.wrap(to: full.publicKey, from: sender, text: "frame \($0)", now: now) }
        for wrap in wraps.prefix(5) {
            let answer = try await publisher.publish(wrap)
            XCTAssertTrue(answer.accepted, answer.message)
        }
        let sixth = try await publisher.publish(wraps[5])
        XCTAssertFalse(sixth.accepted)
        XCTAssertEqual(sixth.message, "rate-limited: mailbox full")
        let again = try await publisher.publish(wraps[0])
        XCTAssertTrue(again.accepted && again.message.hasPrefix("duplicate:"), "a wrap already stored is a duplicate, not a refusal: \(again)")

        // Another recipient's mailbox is its own.
        for i in 0..<5 {
            let answer = try await publisher.publish(try Mailbox.wrap(to: other.publicKey, from: sender, text: "other \(i)", now: now))
            XCTAssertTrue(answer.accepted, answer.message)
        }

        // The recipient reads its five, deletes one, and the sixth now fits.
        let reader = try await MailboxClient.connect(running)
        defer { reader.raw.close() }
        try await reader.authenticate(full, now: TestEvents.now())
        let held = try await reader.wraps(for: full.publicKey).get()
        XCTAssertEqual(held, Set(wraps.prefix(5).map(\.id)))
        let deletion = try TestEvents.sign(kind: Kind.deletion, tags: [["e", wraps[0].id.hex]], keys: full)
        let deleted = try await reader.publish(deletion)
        XCTAssertTrue(deleted.accepted, deleted.message)
        let retried = try await publisher.publish(wraps[5])
        XCTAssertTrue(retried.accepted, retried.message)
        let after = try await reader.wraps(for: full.publicKey).get()
        XCTAssertEqual(after, Set(wraps[1...5].map(\.id)))
        await running.close()
    }

    func testTheMailboxHoldsAtMostTheConfiguredBytesPerRecipient() async throws {
        let sender = TestEvents.keys()
        let full = TestEvents.keys()
        let other = TestEvents.keys()
        let now = TestEvents.now()
        let large = try (0..<4).map { try Mailbox.wrap(to: full.publicKey, from: sender, text: String(repeating: "\($0)", count: 6000), now: now) }
        let sizes = large.map(\.jsonBytes.count)
        // Room for the first three and not quite the fourth.
        let quota = sizes[0] + sizes[1] + sizes[2] + sizes[3] - 1
        let small = try Mailbox.wrap(to: full.publicKey, from: sender, text: "short", now: now)
        XCTAssertLessThan(small.jsonBytes.count, sizes[3] - 1, "the test needs a wrap that fits the rest")

        let relay = TestRelay()
        defer { relay.remove() }
        let running = try await relay.start { $0.limits.mailboxBytes = quota }
        let publisher = try await MailboxClient.connect(running)
        defer { publisher.raw.close() }
        for wrap in large.prefix(3) {
            let answer = try await publisher.publish(wrap)
            XCTAssertTrue(answer.accepted, answer.message)
        }
        let fourth = try await publisher.publish(large[3])
        XCTAssertFalse(fourth.accepted)
        XCTAssertEqual(fourth.message, "rate-limited: mailbox full")
        let fits = try await publisher.publish(small)
        XCTAssertTrue(fits.accepted, "a smaller wrap fits the bytes left: \(fits.message)")
        let elsewhere = try await publisher.publish(try Mailbox.wrap(to: other.publicKey, from: sender, text: String(repeating: "o", count: 6000), now: now))
        XCTAssertTrue(elsewhere.accepted, "another recipient is unaffected: \(elsewhere.message)")
        let stored = try await running.storedEventCount()
        XCTAssertEqual(stored, 5)
        await running.close()
    }

    // MARK: - Deletion by the recipient

    func testOnlyTheAuthenticatedRecipientDeletesItsWrapsAndOnlyThoseItNames() async throws {
        let relay = TestRelay()
        defer { relay.remove() }
        let logs = RecordedLogs()
        let running = try await RunningRelay.start(relay.configuration(), logger: logs.logger)
        let sender = TestEvents.keys()
        let recipient = TestEvents.keys()
        let someoneElse = TestEvents.keys()
        let thirdParty = TestEvents.keys()
        let now = TestEvents.now()

        let publisher = try await MailboxClient.connect(running)
        defer { publisher.raw.close() }
        let mine = try (0..<4).map { try Mailbox.wrap(to: recipient.publicKey, from: sender, text: "mine \($0)", now: now) }
        let theirs = try Mailbox.wrap(to: someoneElse.publicKey, from: sender, text: "theirs", now: now)
        for wrap in mine + [theirs] {
            let answer = try await publisher.publish(wrap)
            XCTAssertTrue(answer.accepted, answer.message)
        }
        let note = try TestEvents.sign(kind: 1, content: "a note", keys: recipient)
        let stored = try await publisher.publish(note)
        XCTAssertTrue(stored.accepted, stored.message)

        let reader = try await MailboxClient.connect(running)
        defer { reader.raw.close() }
        try await reader.authenticate(recipient, now: TestEvents.now())
        let before = try await reader.wraps(for: recipient.publicKey).get()
        XCTAssertEqual(before, Set(mine.map(\.id)))

        // A third party's kind 5 naming them, authenticated as itself: a plain NIP-09
        // deletion of its own events, which these are not.
        let meddler = try await MailboxClient.connect(running)
        defer { meddler.raw.close() }
        try await meddler.authenticate(thirdParty, now: TestEvents.now())
        let thirdPartyDeletion = try TestEvents.sign(kind: Kind.deletion, tags: (mine + [theirs]).map { ["e", $0.id.hex] }, keys: thirdParty)
        let thirdAnswer = try await meddler.publish(thirdPartyDeletion)
        XCTAssertTrue(thirdAnswer.accepted, thirdAnswer.message)
        let afterThirdParty = try await reader.wraps(for: recipient.publicKey).get()
        XCTAssertEqual(afterThirdParty, Set(mine.map(\.id)), "a third party deletes nothing")

        // The recipient's own kind 5 on a connection that has not authenticated as it, and on
        // one authenticated as someone else: refused, nothing deleted.
        let recipientsDeletion = try TestEvents.sign(kind: Kind.deletion, tags: [["e", mine[0].id.hex]], keys: recipient)
        let unauthenticated = try await publisher.publish(recipientsDeletion)
        XCTAssertFalse(unauthenticated.accepted)
        XCTAssertTrue(unauthenticated.message.hasPrefix("auth-required:"), unauthenticated.message)
        let relayed = try await meddler.publish(recipientsDeletion)
        XCTAssertFalse(relayed.accepted)
        XCTAssertTrue(relayed.message.hasPrefix("auth-required:"), relayed.message)
        let afterUnauthenticated = try await reader.wraps(for: recipient.publicKey).get()
        XCTAssertEqual(afterUnauthenticated, Set(mine.map(\.id)))

        // Authenticated as the recipient: exactly its named wraps go; another recipient's wrap
        // named alongside stays; its own note named alongside goes by NIP-09 as usual.
        let deletion = try TestEvents.sign(
            kind: Kind.deletion, tags: [["e", mine[0].id.hex], ["e", mine[1].id.hex], ["e", theirs.id.hex], ["e", note.id.hex]], keys: recipient)
        let deleted = try await reader.publish(deletion)
        XCTAssertTrue(deleted.accepted, deleted.message)
        let after = try await reader.wraps(for: recipient.publicKey).get()
        XCTAssertEqual(after, Set([mine[2].id, mine[3].id]))
        let others = try await MailboxClient.connect(running)
        defer { others.raw.close() }
        try await others.authenticate(someoneElse, now: TestEvents.now())
        let theirsAfter = try await others.wraps(for: someoneElse.publicKey).get()
        XCTAssertEqual(theirsAfter, [theirs.id], "another recipient's wrap cannot be deleted")
        let notes = try await reader.query(Filter(ids: [note.id])).get()
        XCTAssertEqual(notes, [], "the recipient's own note named in the same deletion is deleted (NIP-09)")
        let served = try await others.query(Filter(authors: [recipient.publicKey], kinds: [Kind.deletion])).get()
        XCTAssertEqual(served, [], "a deletion of wraps is not served: it would show which wraps the recipient read")

        // A sender's retry of the same bytes is not delivered again; the recipient's retry of
        // its deletion is accepted and still not served; without AUTH it is still refused.
        // The answer is the one a stored wrap gets: a sender must not learn when it was read.
        let resent = try await publisher.publish(mine[0])
        XCTAssertTrue(resent.accepted, resent.message)
        XCTAssertEqual(resent.message, "duplicate: already have this event")
        let notStoredAgain = try await reader.wraps(for: recipient.publicKey).get()
        XCTAssertEqual(notStoredAgain, Set([mine[2].id, mine[3].id]), "and it is not stored again")
        let deletedAgain = try await reader.publish(deletion)
        XCTAssertTrue(deletedAgain.accepted, deletedAgain.message)
        let retriedUnauthenticated = try await publisher.publish(deletion)
        XCTAssertTrue(!retriedUnauthenticated.accepted && retriedUnauthenticated.message.hasPrefix("auth-required:"), "\(retriedUnauthenticated)")
        let servedAfterRetry = try await others.query(Filter(authors: [recipient.publicKey], kinds: [Kind.deletion])).get()
        XCTAssertEqual(servedAfterRetry, [], "a retried deletion of wraps is not served either")
        let stillThere = try await reader.wraps(for: recipient.publicKey).get()
        XCTAssertEqual(stillThere, Set([mine[2].id, mine[3].id]))

        // A full workout of the mailbox, and the logs name no recipient, wrap id or content.
        let text = logs.text
        XCTAssertFalse(text.isEmpty, "the relay logged something (at trace level)")
        for wrap in mine + [theirs] {
            XCTAssertFalse(text.contains(wrap.id.hex), "a wrap id is in the logs")
            XCTAssertFalse(text.contains(String(wrap.content.prefix(24))), "wrap content is in the logs")
        }
        for key in [recipient.publicKey, someoneElse.publicKey] {
            XCTAssertFalse(text.contains(key.hex), "a recipient is in the logs")
        }
        await running.close()
    }

    // MARK: - Purge

    /// Issue 19, finding 3: one-time wrap keys and fresh recipients defeat the per-recipient
    /// quota, so the relay also bounds the wraps it holds for everyone together.
    func testTheRelayHoldsAtMostTheConfiguredNumberOfWrapsForAllRecipients() async throws {
        let relay = TestRelay()
        defer { relay.remove() }
        let running = try await relay.start {
            $0.limits.mailboxWraps = 2
            $0.limits.relayWraps = 5
        }
        let publisher = try await MailboxClient.connect(running)
        defer { publisher.raw.close() }
        let now = TestEvents.now()
        let recipients = (0..<6).map { _ in TestEvents.keys() }
        for recipient in recipients.prefix(5) {
            let answer = try await publisher.publish(try Mailbox.wrap(to: recipient.publicKey, from: TestEvents.keys(), now: now))
            XCTAssertTrue(answer.accepted, answer.message)
        }
        let sixth = try await publisher.publish(try Mailbox.wrap(to: recipients[5].publicKey, from: TestEvents.keys(), now: now))
        XCTAssertFalse(sixth.accepted)
        XCTAssertEqual(sixth.message, "rate-limited: the relay holds all the gift wraps it can")
        let stored = try await running.storedEventCount()
        XCTAssertEqual(stored, 5)
        await running.close()
        XCTAssertThrowsError(try relay.configuration { $0.limits.mailboxWraps = 10; $0.limits.relayWraps = 9 }.validated())
    }

    /// Issue 19, finding 11: the memory of which wraps a recipient read is purged with the
    /// wraps (thirty days), not kept forever.
    func testTheMemoryOfReadWrapsIsPurgedWithTheWraps() async throws {
        let relay = TestRelay()
        defer { relay.remove() }
        try FileManager.default.createDirectory(at: relay.directory, withIntermediateDirectories: true)
        let store = try EventStore(directory: relay.directory.path)
        defer { store.close() }
        let recipient = TestEvents.keys()
        let now = TestEvents.now()
        let wrap = try Mailbox.wrap(to: recipient.publicKey, from: TestEvents.keys(), now: now)
        let stored = try await store.run { try EventStore.save(wrap, json: wrap.jsonBytes, receivedAt: now, in: $0) }
        XCTAssertEqual(stored, .stored)
        let deletion = try TestEvents.sign(kind: Kind.deletion, tags: [["e", wrap.id.hex]], keys: recipient)
        let deleted = try await store.run {
            try EventStore.save(deletion, json: deletion.jsonBytes, receivedAt: now, authenticated: [recipient.publicKey], in: $0)
        }
        XCTAssertEqual(deleted, .deletedWraps(1))
        let remembered = try await store.run { db in try db.query("SELECT COUNT(*) FROM deleted_wraps") { $0.int(0) }.first }
        XCTAssertEqual(remembered, 1)
        let again = try await store.run { try EventStore.save(wrap, json: wrap.jsonBytes, receivedAt: now + 1, in: $0) }
        XCTAssertEqual(again, .wrapAlreadyRead)
        _ = try await store.run { try EventStore.purge(now: deletion.createdAt + GiftWrapMailbox.lifetimeSeconds, retention: [], in: $0) }
        let forgotten = try await store.run { db in try db.query("SELECT COUNT(*) FROM deleted_wraps") { $0.int(0) }.first }
        XCTAssertEqual(forgotten, 0)
    }

    func testWrapsArePurgedAtTheirExpirationOrThirtyDaysAfterArrival() async throws {
        let relay = TestRelay()
        defer { relay.remove() }
        let start = TestEvents.now()
        let clock = ManualClock(start)
        var logger = Logger(label: "burrow.relay.test")
        logger.logLevel = .warning
        let running = try await RunningRelay.start(relay.configuration { $0.purgeIntervalSeconds = 1 }, logger: logger, clock: { clock.now })
        let sender = TestEvents.keys()
        let recipient = TestEvents.keys()
        let hour: Int64 = 3600
        let day: Int64 = 24 * hour

        let client = try await MailboxClient.connect(running)
        defer { client.raw.close() }
        try await client.authenticate(recipient, now: clock.now)
        let expiresInAnHour = try Mailbox.wrap(to: recipient.publicKey, from: sender, text: "a", now: start, expiration: start + hour)
        let noExpiry = try Mailbox.wrap(to: recipient.publicKey, from: sender, text: "b", now: start)
        let expiresInSixtyDays = try Mailbox.wrap(to: recipient.publicKey, from: sender, text: "c", now: start, expiration: start + 60 * day)
        for wrap in [expiresInAnHour, noExpiry, expiresInSixtyDays] {
            let answer = try await client.publish(wrap)
            XCTAssertTrue(answer.accepted, answer.message)
        }

        // Two hours on: the first expired and is gone from the database, not just hidden.
        clock.advance(by: 2 * hour)
        try await eventually("the expired wrap is purged") { try await running.storedEventCount() == 2 }
        let afterTwoHours = try await client.wraps(for: recipient.publicKey).get()
        XCTAssertEqual(afterTwoHours, [noExpiry.id, expiresInSixtyDays.id])
        let later = try Mailbox.wrap(to: recipient.publicKey, from: sender, text: "d", now: clock.now)
        let laterAnswer = try await client.publish(later)
        XCTAssertTrue(laterAnswer.accepted, laterAnswer.message)

        // Thirty days after the first arrivals: those go (the later expiry does not save the
        // third), the one that arrived two hours later stays.
        clock.advance(by: 30 * day - 2 * hour)
        try await eventually("wraps thirty days old are purged") { try await running.storedEventCount() == 1 }
        let afterThirtyDays = try await client.wraps(for: recipient.publicKey).get()
        XCTAssertEqual(afterThirtyDays, [later.id])
        clock.advance(by: 2 * hour)
        try await eventually("the last wrap is purged thirty days after it arrived") { try await running.storedEventCount() == 0 }
        await running.close()
    }

    func testAVersion1DatabaseIsMigratedAndItsWrapsAgeFromTheirCreatedAt() async throws {
        let relay = TestRelay()
        defer { relay.remove() }
        try FileManager.default.createDirectory(at: relay.directory, withIntermediateDirectories: true)
        let recipient = TestEvents.keys()
        let createdAt = TestEvents.now() - 3 * 86_400
        let wrap = try Mailbox.wrap(to: recipient.publicKey, from: TestEvents.keys(), now: createdAt)
        // A relay database as the version before the mailbox wrote it.
        let old = try SQLiteConnection(
            path: relay.directory.appendingPathComponent(EventStore.fileName).path,
            options: .init(create: true, serialized: false), mapError: RelayServerError.init(sqlite:))
        try old.transaction { try EventStore.createVersion1(old) }
        try old.execute("INSERT INTO events(id, pubkey, created_at, kind, json) VALUES (?, ?, ?, ?, ?)",
                        [.blob(wrap.id.bytes), .blob(wrap.pubkey.bytes), .integer(wrap.createdAt), .integer(Int64(wrap.kind)), .blob(wrap.jsonBytes)])
        try old.execute("INSERT INTO tags(seq, name, value) VALUES (?, 'p', ?)", [.integer(old.lastInsertRowID), .text(recipient.publicKey.hex)])
        let deletedNote = try TestEvents.sign(kind: 1, content: "deleted before the migration", keys: recipient)
        try old.execute("INSERT INTO deleted_events(id, pubkey) VALUES (?, ?)", [.blob(deletedNote.id.bytes), .blob(recipient.publicKey.bytes)])
        old.close()

        let store = try EventStore(directory: relay.directory.path)
        let version = try await store.run { db in try db.query("PRAGMA user_version") { $0.int64(0) }.first }
        XCTAssertEqual(version, EventStore.schemaVersion)
        let now = TestEvents.now()
        let served = try await store.run {
            try EventStore.query([Filter(kinds: [Kind.giftWrap])], limit: 10, now: now, authenticated: [recipient.publicKey.hex], in: $0)
        }
        XCTAssertEqual(served.map(\.id), [wrap.id.bytes])
        let tombstone = try await store.run { try EventStore.save(deletedNote, json: deletedNote.jsonBytes, in: $0) }
        XCTAssertEqual(tombstone, .deleted, "NIP-09 deletions survive the migration")
        let usage = try await store.run { try EventStore.mailboxUsage(of: recipient.publicKey, now: now, in: $0) }
        XCTAssertEqual(usage.wraps, 1)
        XCTAssertEqual(usage.bytes, wrap.jsonBytes.count)
        let early = try await store.run { try EventStore.purge(now: wrap.createdAt + GiftWrapMailbox.lifetimeSeconds - 1, retention: [], in: $0) }
        XCTAssertEqual(early, 0)
        let due = try await store.run { try EventStore.purge(now: wrap.createdAt + GiftWrapMailbox.lifetimeSeconds, retention: [], in: $0) }
        XCTAssertEqual(due, 1)
        store.close()
        // Opened again at the current version: nothing to migrate.
        let reopened = try EventStore(directory: relay.directory.path)
        reopened.close()
    }

    // MARK: - Reading

    func testReadingWrapsStillNeedsAuthenticationAsTheirRecipient() async throws {
        let relay = TestRelay()
        defer { relay.remove() }
        let running = try await relay.start()
        let recipient = TestEvents.keys()
        let stranger = TestEvents.keys()
        let wrap = try Mailbox.wrap(to: recipient.publicKey, from: TestEvents.keys(), now: TestEvents.now())
        let client = try await MailboxClient.connect(running)
        defer { client.raw.close() }
        let published = try await client.publish(wrap)
        XCTAssertTrue(published.accepted, published.message)

        let anonymous = try await client.wraps(for: recipient.publicKey)
        guard case .failure(let refusal) = anonymous else { return XCTFail("wraps served without AUTH") }
        XCTAssertTrue(refusal.reason.hasPrefix("auth-required:"), refusal.reason)
        let byID = try await client.query(Filter(ids: [wrap.id])).get()
        XCTAssertEqual(byID, [], "not by id either")
        try await client.authenticate(stranger, now: TestEvents.now())
        let asStranger = try await client.wraps(for: recipient.publicKey)
        guard case .failure(let restricted) = asStranger else { return XCTFail("wraps served to a stranger") }
        XCTAssertTrue(restricted.reason.hasPrefix("restricted:"), restricted.reason)
        try await client.authenticate(recipient, now: TestEvents.now())
        let asRecipient = try await client.wraps(for: recipient.publicKey).get()
        XCTAssertEqual(asRecipient, [wrap.id])
        await running.close()
    }
}

// MARK: - Helpers

enum Mailbox {
    /// A NIP-59 wrap as Burrow sends a DM frame (rumor kind 1590, spec 6.1) from `sender` to
    /// `recipient`, optionally with an `expiration` tag.
    static func wrap(
        to recipient: PublicKey, from sender: Keys, text: String = "frame", now: Int64,
        expiration: Int64? = nil, extraTags: [[String]] = []
    ) throws -> Event {
        var rng = SystemRandomNumberGenerator()
        let rumor = try Rumor(pubkey: sender.publicKey, createdAt: now, kind: 1590, content: Data(text.utf8).base64EncodedString())
        let tags = extraTags + (expiration.map { [["expiration", "\($0)"]] } ?? [])
        return try GiftWrap.wrap(rumor: rumor, sender: sender, recipient: recipient, now: now, rng: &rng, extraTags: tags)
    }
}

/// A REQ answered with CLOSED instead of events.
struct QueryRefused: Error {
    let reason: String
}

/// A bare WebSocket client with the steps these tests repeat: publish, AUTH, query.
struct MailboxClient {
    let raw: RawClient
    let url: String

    static func connect(_ relay: RunningRelay) async throws -> MailboxClient {
        let client = MailboxClient(raw: RawClient(url: relay.url), url: relay.url)
        try await eventually("the AUTH challenge") { client.raw.challenge != nil }
        return client
    }

    /// Sends the event and returns the relay's answer to this sending (an event sent again
    /// gets a second OK; `RawClient.ok(for:)` would find the first).
    func publish(_ event: Event) async throws -> (accepted: Bool, message: String) {
        let seen = raw.messages.count
        raw.send(ClientMessage.event(event).jsonString)
        var answer: (accepted: Bool, message: String)?
        try await eventually("OK for \(event.id.hex.prefix(8))") {
            for text in raw.messages.dropFirst(seen) {
                if case .ok(event.id, let accepted, let message)? = try? RelayMessage(json: text) {
                    answer = (accepted, message)
                    return true
                }
            }
            return false
        }
        guard let answer else { throw TestFailure("no OK") }
        return answer
    }

    func authenticate(_ keys: Keys, now: Int64) async throws {
        guard let challenge = raw.challenge else { throw TestFailure("no challenge") }
        var rng = SystemRandomNumberGenerator()
        let auth = try NIP42.authEvent(challenge: challenge, relayURL: url, createdAt: now, keys: keys, rng: &rng)
        raw.send(ClientMessage.auth(auth).jsonString)
        let answer = try await raw.ok(for: auth.id)
        guard answer.accepted else { throw TestFailure("AUTH refused: \(answer.message)") }
    }

    /// The ids of the stored events matching `filter`, or the CLOSED reason. The subscription
    /// is closed after its EOSE.
    func query(_ filter: Filter) async throws -> Result<Set<EventID>, QueryRefused> {
        let id = "q-\(UUID().uuidString.prefix(8))"
        raw.send(ClientMessage.req(subscriptionID: id, filters: [filter]).jsonString)
        let end = try await raw.next("EOSE or CLOSED for \(id)") {
            switch $0 {
            case .eose(let subscription), .closed(let subscription, _): return subscription == id
            default: return false
            }
        }
        if case .closed(_, let reason) = end { return .failure(QueryRefused(reason: reason)) }
        raw.send(ClientMessage.close(subscriptionID: id).jsonString)
        var ids = Set<EventID>()
        for message in raw.relayMessages {
            if case .event(let subscription, let event) = message, subscription == id { ids.insert(event.id) }
        }
        return .success(ids)
    }

    func wraps(for recipient: PublicKey) async throws -> Result<Set<EventID>, QueryRefused> {
        try await query(Filter(kinds: [Kind.giftWrap], tags: ["p": [recipient.hex]]))
    }
}

/// The relay's wall clock, moved by the test.
final class ManualClock: Sendable {
    private let seconds: Mutex<Int64>

    init(_ start: Int64) { seconds = Mutex(start) }

    var now: Int64 { seconds.withLock { $0 } }

    func advance(by delta: Int64) { seconds.withLock { $0 += delta } }
}

/// Every log line the relay writes at any level, with its metadata, as text.
final class RecordedLogs: Sendable {
    private let lines = Mutex<[String]>([])

    var text: String { lines.withLock { $0.joined(separator: "\n") } }

    var logger: Logger {
        Logger(label: "burrow.relay.test") { label in Handler(label: label, sink: self) }
    }

    fileprivate func append(_ line: String) { lines.withLock { $0.append(line) } }

    private struct Handler: LogHandler {
        let label: String
        let sink: RecordedLogs
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let all = metadata.merging(event.metadata ?? [:]) { $1 }
            sink.append("\(event.level) \(label): \(event.message) \(all) \(event.error.map { "\($0)" } ?? "")")
        }
    }
}
