import Foundation
import Nostr
import RelayServer
import TestSupport
import XCTest

/// The relay in this process on 127.0.0.1, driven by rust-nostr's client (nostr-sdk 0.45.1
/// through `relay_client_peer.py`): publishing, tag queries, live delivery, NIP-11, NIP-42 and
/// the gift-wrap rule, replacement, deletion, expiration, protected events, restarts.
/// `@unchecked Sendable`: XCTest runs one test method at a time on an instance; its stored
/// properties are set in setUp and only read while a test's tasks run.
final class NostrSDKRelayTests: XCTestCase, @unchecked Sendable {
    private func ids(_ events: [UnverifiedEvent]) -> Set<String> { Set(events.map(\.id.hex)) }

    func testNostrSDKPublishesQueriesByTagsAndReceivesLiveEvents() async throws {
        try await bounded(120) {
            let test = TestRelay()
            defer { test.remove() }
            let relay = try await test.start()
            let alice = try await SDKClient.connect(relay.url)
            defer { alice.close() }
            let bob = try await SDKClient.connect(relay.url)
            defer { bob.close() }

            // NIP-11, read by nostr-sdk's own document type.
            let info = try await alice.request("nip11", ["url": relay.url])
            XCTAssertEqual(try info.string("name"), "burrow-relay")
            XCTAssertEqual(Set(info["supported_nips"] as? [Int] ?? []), [1, 9, 11, 40, 42, 70])

            let group = Hex.encode((0..<32).map { _ in UInt8.random(in: 0...255) })
            let groupEvent = try await alice.publish(kind: 445, content: "ciphertext", tags: [["h", group]])
            let mention = try await alice.publish(kind: 1, content: "hi bob", tags: [["p", bob.publicKey]])
            let keyPackage = try await alice.publish(kind: 30443, content: "kp", tags: [["d", "slot-1"], ["relays", relay.url]])
            for published in [groupEvent, mention, keyPackage] { XCTAssertTrue(published.accepted, published.message) }

            let byH = try await bob.fetch([["kinds": [445], "#h": [group]]])
            XCTAssertEqual(self.ids(byH), [groupEvent.id])
            let byP = try await bob.fetch([["#p": [bob.publicKey]]])
            XCTAssertEqual(self.ids(byP), [mention.id])
            let byD = try await bob.fetch([["kinds": [30443], "authors": [alice.publicKey], "#d": ["slot-1"]]])
            XCTAssertEqual(self.ids(byD), [keyPackage.id])
            XCTAssertEqual(try byD.first?.verified().content, "kp", "served events verify in Burrow's Nostr module")
            let nothing = try await bob.fetch([["kinds": [445], "#h": [String(repeating: "0", count: 64)]]])
            XCTAssertEqual(nothing.count, 0)

            // Live: only new events, as they arrive.
            try await bob.subscribe("live", [["kinds": [445], "#h": [group], "limit": 0]])
            let caughtUp = try await bob.wait("live", eose: true)
            XCTAssertTrue(caughtUp.eose)
            XCTAssertEqual(caughtUp.events.count, 0)
            var sent: Set<String> = []
            for i in 0..<3 {
                let event = try await alice.publish(kind: 445, content: "live \(i)", tags: [["h", group]])
                XCTAssertTrue(event.accepted, event.message)
                sent.insert(event.id)
            }
            let live = try await bob.wait("live", count: 3)
            XCTAssertFalse(live.timedOut)
            XCTAssertEqual(self.ids(live.events), sent)
            let storedCount = try await relay.storedEventCount()
            XCTAssertEqual(storedCount, 6)
            await relay.close()
        }
    }

    func testGiftWrapsAreServedOnlyToTheirAuthenticatedRecipient() async throws {
        try await bounded(150) {
            let test = TestRelay()
            defer { test.remove() }
            let relay = try await test.start()
            let recipientKeys = TestEvents.keys()
            let recipient = recipientKeys.publicKey.hex
            let now = TestEvents.now()

            let sender = try await SDKClient.connect(relay.url)
            defer { sender.close() }
            var stored: Set<String> = []
            for backdate in [86_400, 3600] as [Int64] {
                // A gift wrap is signed by a throwaway key and back-dated (NIP-59).
                let wrap = try await sender.publish(kind: 1059, content: "sealed", tags: [["p", recipient]],
                                                    createdAt: now - backdate, keys: TestEvents.keys())
                XCTAssertTrue(wrap.accepted, wrap.message)
                stored.insert(wrap.id)
            }
            let note = try await sender.publish(kind: 1, content: "public", tags: [["p", recipient]])
            XCTAssertTrue(note.accepted)

            // Not authenticated: AUTH challenge and CLOSED auth-required, nothing served; a
            // filter that does not ask for kind 1059 gets everything else.
            let anonymous = try await SDKClient.connect(relay.url, authenticate: false)
            defer { anonymous.close() }
            try await anonymous.subscribe("wraps", [["kinds": [1059], "#p": [recipient]]])
            let refused = try await anonymous.wait("wraps", closed: true)
            XCTAssertEqual(refused.closed.flatMap(RelayReason.prefix(of:)), "auth-required", "\(refused)")
            XCTAssertEqual(refused.events.count, 0)
            try await anonymous.subscribe("all", [["#p": [recipient]]])
            let everythingElse = try await anonymous.wait("all", eose: true)
            XCTAssertEqual(self.ids(everythingElse.events), [note.id])
            let messages = try await anonymous.messages()
            XCTAssertTrue(messages.contains { $0.hasPrefix("[\"AUTH\",") }, "the relay challenges on connect")

            // Authenticated as someone else: refused too.
            let eve = try await SDKClient.connect(relay.url)
            defer { eve.close() }
            try await eve.subscribe("peek", [["kinds": [1059], "#p": [recipient]]])
            var peek: SDKClient.SubscriptionState?
            try await eventually("eve's refusal as an authenticated stranger", seconds: 15) {
                peek = try await eve.wait("peek", closed: true, timeout: 2)
                return peek?.closed.flatMap(RelayReason.prefix(of:)) == "restricted"
            }
            XCTAssertEqual(peek?.events.count, 0)

            // The recipient, after nostr-sdk answers the challenge: stored wraps, then live ones.
            let owner = try await SDKClient.connect(relay.url, keys: recipientKeys)
            defer { owner.close() }
            var fetched: [UnverifiedEvent] = []
            try await eventually("the recipient's stored gift wraps", seconds: 15) {
                fetched = try await owner.fetch([["kinds": [1059], "#p": [recipient]]])
                return fetched.count == 2
            }
            XCTAssertEqual(self.ids(fetched), stored)
            try await owner.subscribe("inbox", [["kinds": [1059], "#p": [recipient], "limit": 0]])
            _ = try await owner.wait("inbox", eose: true)
            try await anonymous.subscribe("all-live", [["#p": [recipient], "limit": 0]])
            _ = try await anonymous.wait("all-live", eose: true)
            let fresh = try await sender.publish(kind: 1059, content: "new", tags: [["p", recipient]],
                                                 createdAt: now - 7200, keys: TestEvents.keys())
            XCTAssertTrue(fresh.accepted, fresh.message)
            let inbox = try await owner.wait("inbox", count: 1)
            XCTAssertEqual(self.ids(inbox.events), [fresh.id])
            let leaked = try await anonymous.wait("all-live", count: 1, timeout: 1.5)
            XCTAssertTrue(leaked.timedOut)
            XCTAssertEqual(leaked.events.count, 0, "a live gift wrap reached someone it does not name")
            await relay.close()
        }
    }

    func testReplaceableAddressableDeletionAndExpiration() async throws {
        try await bounded(120) {
            let test = TestRelay()
            defer { test.remove() }
            let relay = try await test.start { $0.purgeIntervalSeconds = 1 }
            let alice = try await SDKClient.connect(relay.url)
            defer { alice.close() }
            let me = alice.publicKey
            let now = TestEvents.now()

            let old = try await alice.publish(kind: 0, content: "{\"name\":\"old\"}", createdAt: now - 10)
            let new = try await alice.publish(kind: 0, content: "{\"name\":\"new\"}", createdAt: now)
            XCTAssertTrue(old.accepted && new.accepted)
            let stale = try await alice.publish(kind: 0, content: "{\"name\":\"stale\"}", createdAt: now - 5)
            XCTAssertTrue(stale.accepted, "an older version is acknowledged, not stored: \(stale.message)")
            let profiles = try await alice.fetch([["kinds": [0], "authors": [me]]])
            XCTAssertEqual(self.ids(profiles), [new.id])

            let x1 = try await alice.publish(kind: 30443, content: "x1", tags: [["d", "x"]], createdAt: now - 10)
            let x2 = try await alice.publish(kind: 30443, content: "x2", tags: [["d", "x"]], createdAt: now)
            let y = try await alice.publish(kind: 30443, content: "y", tags: [["d", "y"]], createdAt: now)
            XCTAssertTrue(x1.accepted && x2.accepted && y.accepted)
            let addressable = try await alice.fetch([["kinds": [30443], "authors": [me]]])
            XCTAssertEqual(self.ids(addressable), [x2.id, y.id])

            // NIP-09: by id and by address; the deleted event cannot come back.
            let doomed = try await alice.publish(kind: 1, content: "regret")
            let deletion = try await alice.publish(kind: 5, content: "", tags: [["e", doomed.id], ["a", "30443:\(me):y"]])
            XCTAssertTrue(deletion.accepted, deletion.message)
            let gone = try await alice.fetch([["ids": [doomed.id, y.id]]])
            XCTAssertEqual(gone.count, 0)
            let remaining = try await alice.fetch([["kinds": [30443], "authors": [me]]])
            XCTAssertEqual(self.ids(remaining), [x2.id])
            let again = try await alice.publish(try UnverifiedEvent(json: doomed.event).verified())
            XCTAssertFalse(again.accepted)
            XCTAssertTrue(again.message.contains("deleted"), again.message)

            // NIP-40: refused when already expired; served until it expires, then purged.
            let expired = try await alice.publish(kind: 1, content: "late", tags: [["expiration", "\(now - 1)"]])
            XCTAssertFalse(expired.accepted)
            XCTAssertTrue(expired.message.hasPrefix("invalid:"), expired.message)
            let soon = try await alice.publish(kind: 1, content: "brief", tags: [["expiration", "\(TestEvents.now() + 4)"]])
            XCTAssertTrue(soon.accepted, soon.message)
            let present = try await alice.fetch([["ids": [soon.id]]])
            XCTAssertEqual(present.count, 1)
            let before = try await relay.storedEventCount()
            try await Task.sleep(for: .seconds(5.5))
            let after = try await alice.fetch([["ids": [soon.id]]])
            XCTAssertEqual(after.count, 0, "served after its expiration")
            try await eventually("the purge of the expired event") {
                try await relay.storedEventCount() == before - 1
            }
            await relay.close()
        }
    }

    func testProtectedEventsAreAcceptedOnlyFromTheirAuthenticatedAuthor() async throws {
        try await bounded(90) {
            let test = TestRelay()
            defer { test.remove() }
            let relay = try await test.start()
            let author = try await SDKClient.connect(relay.url)
            defer { author.close() }
            let own = try await author.publish(kind: 1, content: "mine only", tags: [["-"]])
            XCTAssertTrue(own.accepted, own.message)
            let foreign = try await author.publish(kind: 1, content: "someone else's", tags: [["-"]], keys: TestEvents.keys())
            XCTAssertFalse(foreign.accepted)
            XCTAssertTrue(foreign.message.hasPrefix("restricted:"), foreign.message)

            let anonymous = try await SDKClient.connect(relay.url, authenticate: false)
            defer { anonymous.close() }
            let unproven = try await anonymous.publish(kind: 1, content: "unproven", tags: [["-"]])
            XCTAssertFalse(unproven.accepted)
            XCTAssertTrue(unproven.message.hasPrefix("auth-required:"), unproven.message)
            let readable = try await anonymous.fetch([["ids": [own.id]]])
            XCTAssertEqual(readable.count, 1, "protected events are readable by anyone")
            await relay.close()
        }
    }

    func testRestartKeepsEventsReplacementsAndDeletions() async throws {
        try await bounded(120) {
            let test = TestRelay()
            defer { test.remove() }
            var relay = try await test.start()
            let keys = TestEvents.keys()
            let now = TestEvents.now()
            let writer = try await SDKClient.connect(relay.url, keys: keys)
            let note = try await writer.publish(kind: 1, content: "kept", tags: [["h", "family"]])
            _ = try await writer.publish(kind: 10051, content: "", tags: [["relay", "ws://old"]], createdAt: now - 60)
            let list = try await writer.publish(kind: 10051, content: "", tags: [["relay", relay.url]], createdAt: now)
            let doomed = try await writer.publish(kind: 1, content: "deleted")
            let deletion = try await writer.publish(kind: 5, content: "", tags: [["e", doomed.id]])
            XCTAssertTrue(note.accepted && list.accepted && doomed.accepted && deletion.accepted)
            writer.close()
            await relay.close()

            relay = try await test.start()
            let reader = try await SDKClient.connect(relay.url, keys: keys)
            defer { reader.close() }
            let kept = try await reader.fetch([["#h": ["family"]]])
            XCTAssertEqual(self.ids(kept), [note.id])
            let lists = try await reader.fetch([["kinds": [10051], "authors": [keys.publicKey.hex]]])
            XCTAssertEqual(self.ids(lists), [list.id])
            let deleted = try await reader.fetch([["ids": [doomed.id]]])
            XCTAssertEqual(deleted.count, 0)
            let again = try await reader.publish(try UnverifiedEvent(json: doomed.event).verified())
            XCTAssertFalse(again.accepted, "the deletion survived the restart")
            let count = try await relay.storedEventCount()
            XCTAssertEqual(count, 3)
            await relay.close()
        }
    }
}
