import Nostr
import TestSupport
import XCTest
@testable import RelayClient

/// NIP-42 against LocalRelay with `nip42` (write) and `auth_dm`: publishing needs an
/// authenticated connection, and kind-1059 events are served only to their `p` recipient,
/// after an `AUTH` challenge and `CLOSED "auth-required: …"`.
final class NIP42RelayTests: XCTestCase {
    func testAuthenticatesToPublishAndToReadGiftWraps() async throws {
        try await bounded(90) {
            let relay = try await RelayProcess.start(RelayProcess.Options(nip42: .write, authDM: true))
            defer { relay.stop() }
            let sender = TestEvents.keys()
            let recipient = TestEvents.keys()
            let wrapKey = TestEvents.keys()
            let wraps = try (0..<3).map { i in
                try TestEvents.sign(kind: 1059, content: "sealed \(i)", tags: [["p", recipient.publicKey.hex]],
                                    createdAt: TestEvents.now() - Int64(i) * 3600 * 20, keys: wrapKey)
            }

            // Without a key, the relay's refusal comes back as is.
            try await withPool([relay.url]) { anonymous in
                let refused = await anonymous.publish(wraps[0], timeout: .seconds(10))
                XCTAssertEqual(refused.first?.accepted, false)
                XCTAssertEqual(refused.first?.reasonPrefix, "auth-required")
            }

            // With a key: OK false auth-required → AUTH → the event again → accepted.
            try await withPool([relay.url], keys: sender) { pool in
                for wrap in wraps {
                    let result = await pool.publish(wrap, timeout: .seconds(10))
                    XCTAssertEqual(result.first?.accepted, true, "\(result)")
                }
            }

            // Reading: anonymous → CLOSED auth-required, reported, nothing delivered.
            try await withPool([relay.url]) { anonymous in
                do {
                    _ = try await anonymous.fetch(Filter(kinds: [1059], tags: ["p": [recipient.publicKey.hex]]), timeout: .seconds(10))
                    XCTFail("an unauthenticated read of gift wraps succeeded")
                } catch RelayClientError.noRelayAnswered(let failures) {
                    XCTAssertEqual(failures.count, 1)
                    guard case .rejected(let reason) = failures.first?.error else { return XCTFail("\(failures)") }
                    XCTAssertEqual(RelayReason.prefix(of: reason), "auth-required")
                }
            }

            // The recipient: AUTH challenge → CLOSED auth-required → authenticate → events.
            try await withPool([relay.url], keys: recipient) { pool in
                let fetched = try await pool.fetch(Filter(kinds: [1059], tags: ["p": [recipient.publicKey.hex]]), timeout: .seconds(10))
                XCTAssertEqual(fetched.errors, [])
                XCTAssertEqual(Set(fetched.events), Set(wraps))

                let probe = StreamProbe(pool.subscribe([Filter(kinds: [1059], tags: ["p": [recipient.publicKey.hex]])]))
                try await probe.wait("stored gift wraps and EOSE") { $0.contains { $0.isEOSEAll } }
                XCTAssertEqual(Set(probe.events), Set(wraps))
                probe.stop()
            }

            // Someone else, authenticated as themselves, is refused the recipient's wraps.
            try await withPool([relay.url], keys: TestEvents.keys()) { pool in
                let probe = StreamProbe(pool.subscribe([Filter(kinds: [1059], tags: ["p": [recipient.publicKey.hex]])]))
                try await probe.wait("the refusal") { items in
                    items.contains { if case .closed = $0 { return true } else { return false } }
                }
                XCTAssertEqual(probe.events, [])
                // The only relay closed it: the stream ends.
                try await probe.wait("the end of the stream") { _ in probe.ended }
                probe.stop()
            }
        }
    }

    /// Without answering challenges eagerly, both refusals (OK false for the EVENT, CLOSED for
    /// the REQ) lead to authentication and one retry.
    func testAuthenticatesOnlyWhenRequiredIfConfigured() async throws {
        try await bounded(60) {
            let relay = try await RelayProcess.start(RelayProcess.Options(nip42: .both, authDM: true))
            defer { relay.stop() }
            let recipient = TestEvents.keys()
            let note = try TestEvents.sign(kind: 1, content: "readable after auth", keys: TestEvents.keys())
            var configuration = RelayConfiguration.forTests
            configuration.authenticateWhenChallenged = false
            try await withPool([relay.url], keys: recipient, configuration: configuration) { pool in
                let answer = await pool.publish(note, timeout: .seconds(10)).first?.accepted
                XCTAssertEqual(answer, true)
                let fetched = try await pool.fetch(Filter(ids: [note.id], kinds: [1]), timeout: .seconds(10))
                XCTAssertEqual(fetched.events, [note])
            }
        }
    }
}
