import Foundation
import Nostr
import RelayClient
import RelayServer
import XCTest
import TestSupport

/// Burrow's own client (`RelayPool`) against the relay: publishing, paginated fetches past the
/// relay's result cap, live subscriptions, NIP-42 on demand for gift wraps, per-key limits.
/// `@unchecked Sendable`: XCTest runs one test method at a time on an instance; its stored
/// properties are set in setUp and only read while a test's tasks run.
final class RelayPoolAgainstRelayServerTests: XCTestCase, @unchecked Sendable {
    private var poolConfiguration: RelayConfiguration {
        var configuration = RelayConfiguration()
        configuration.connectTimeout = .seconds(5)
        configuration.eoseTimeout = .seconds(10)
        configuration.authTimeout = .seconds(5)
        return configuration
    }

    private func withPool<T: Sendable>(_ url: String, keys: Keys? = nil, _ body: (RelayPool) async throws -> T) async throws -> T {
        let pool = try RelayPool(urls: [url], authKeys: keys, configuration: poolConfiguration)
        do {
            let result = try await body(pool)
            await pool.close()
            return result
        } catch {
            await pool.close()
            throw error
        }
    }

    func testRelayPoolPublishesFetchesPastTheCapAndReadsGiftWrapsAfterAuth() async throws {
        try await bounded(180) {
            let test = TestRelay()
            defer { test.remove() }
            let relay = try await test.start { $0.limits.queryLimit = 100 }
            let sender = TestEvents.keys()
            let recipient = TestEvents.keys()
            let now = TestEvents.now()

            // 250 group events, more than the relay returns per filter.
            let notes = try (0..<250).map { i in
                try TestEvents.sign(kind: 445, content: "m\(i)", tags: [["h", "family"]], createdAt: now - 1000 + Int64(i / 3), keys: TestEvents.keys())
            }
            let wraps = try (0..<3).map { i in
                try TestEvents.sign(kind: 1059, content: "sealed \(i)", tags: [["p", recipient.publicKey.hex]],
                                    createdAt: now - Int64(i) * 20 * 3600, keys: TestEvents.keys())
            }
            try await self.withPool(relay.url, keys: sender) { pool in
                for event in notes + wraps {
                    let answer = await pool.publish(event, timeout: .seconds(10))
                    XCTAssertEqual(answer.first?.accepted, true, "\(answer)")
                }
                let again = await pool.publish(notes[0], timeout: .seconds(10))
                XCTAssertEqual(again.first?.accepted, true)
                XCTAssertEqual(again.first?.reasonPrefix, "duplicate")
            }

            try await self.withPool(relay.url) { anonymous in
                let fetched = try await anonymous.fetch(Filter(kinds: [445], tags: ["h": ["family"]]), timeout: .seconds(10))
                XCTAssertEqual(fetched.errors, [])
                XCTAssertEqual(Set(fetched.events), Set(notes), "paginated with until past the 100-event cap")
                let capped = try await anonymous.fetch(Filter(kinds: [445], limit: 30, tags: ["h": ["family"]]), timeout: .seconds(10))
                XCTAssertEqual(capped.events.count, 30)

                // Gift wraps: refused without authentication.
                do {
                    _ = try await anonymous.fetch(Filter(kinds: [1059], tags: ["p": [recipient.publicKey.hex]]), timeout: .seconds(10))
                    XCTFail("an unauthenticated read of gift wraps succeeded")
                } catch RelayClientError.noRelayAnswered(let failures) {
                    guard case .rejected(let reason) = failures.first?.error else { return XCTFail("\(failures)") }
                    XCTAssertEqual(RelayReason.prefix(of: reason), "auth-required")
                }
            }

            // The recipient: AUTH, then stored wraps, then live ones.
            try await self.withPool(relay.url, keys: recipient) { pool in
                let fetched = try await pool.fetch(Filter(kinds: [1059], tags: ["p": [recipient.publicKey.hex]]), timeout: .seconds(10))
                XCTAssertEqual(fetched.errors, [])
                XCTAssertEqual(Set(fetched.events), Set(wraps))

                let stream = pool.subscribe([Filter(kinds: [1059], since: now - 3600, tags: ["p": [recipient.publicKey.hex]])])
                let collector = Collector(stream)
                try await eventually("EOSE from the relay") { collector.sawEOSE }
                let fresh = try TestEvents.sign(kind: 1059, content: "fresh", tags: [["p", recipient.publicKey.hex]], createdAt: now - 60, keys: TestEvents.keys())
                try await self.withPool(relay.url) { publisher in
                    let answer = await publisher.publish(fresh, timeout: .seconds(10))
                    XCTAssertEqual(answer.first?.accepted, true, "\(answer)")
                }
                try await eventually("the live gift wrap") { collector.events.contains(fresh) }
                XCTAssertEqual(Set(collector.events), [wraps[0], fresh], "stored since the cutoff, then live")
                collector.stop()
            }

            // Someone else, authenticated as themselves: the relay closes the subscription.
            try await self.withPool(relay.url, keys: TestEvents.keys()) { pool in
                let collector = Collector(pool.subscribe([Filter(kinds: [1059], tags: ["p": [recipient.publicKey.hex]])]))
                try await eventually("the refusal") { collector.closedReasons.contains { RelayReason.prefix(of: $0) == "restricted" } }
                XCTAssertEqual(collector.events, [])
                collector.stop()
            }
            await relay.close()
        }
    }

    func testPerKeyRateLimitSpansConnections() async throws {
        try await bounded(90) {
            let test = TestRelay()
            defer { test.remove() }
            let relay = try await test.start { $0.limits.eventsPerMinutePerKey = 5 }
            let author = TestEvents.keys()
            var answers: [PublishResult] = []
            for _ in 0..<2 {
                try await self.withPool(relay.url) { pool in
                    for i in 0..<4 {
                        let event = try TestEvents.sign(kind: 1, content: "n\(i)", keys: author)
                        answers += await pool.publish(event, timeout: .seconds(10))
                    }
                }
            }
            // Five at once, then one every 12 s: a slow run may see one refilled.
            XCTAssertTrue((5...6).contains(answers.filter(\.accepted).count), "\(answers)")
            let refused = answers.filter { !$0.accepted }
            XCTAssertTrue(refused.allSatisfy { $0.reasonPrefix == "rate-limited" && $0.message.contains("per key") }, "\(refused)")
            try await self.withPool(relay.url) { pool in
                let other = try TestEvents.sign(kind: 1, content: "another key", keys: TestEvents.keys())
                let answer = await pool.publish(other, timeout: .seconds(10))
                XCTAssertEqual(answer.first?.accepted, true, "other keys are not slowed down")
            }
            await relay.close()
        }
    }
}

/// Consumes a pool subscription in the background.
private final class Collector: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [RelayPoolEvent] = []
    private var task: Task<Void, Never>?

    init(_ stream: AsyncStream<RelayPoolEvent>) {
        task = Task { [weak self] in
            for await item in stream { self?.lock.withLock { self?.items.append(item) } }
        }
    }

    deinit { task?.cancel() }

    var events: [Event] {
        lock.withLock { items.compactMap { if case .event(let event, _) = $0 { return event } else { return nil } } }
    }

    var sawEOSE: Bool {
        lock.withLock { items.contains { if case .eose = $0 { return true } else { return false } } }
    }

    var closedReasons: [String] {
        lock.withLock { items.compactMap { if case .closed(_, let reason) = $0 { return reason } else { return nil } } }
    }

    func stop() { task?.cancel() }
}
