import Foundation
import Nostr
import TestSupport
import XCTest
@testable import RelayClient

/// A relay that restarts or drops the connection in the middle of a publish or fetch costs a
/// moment, not the operation: it is tried again until the timeout passes without progress.
/// A relay that was down before the operation began does not hold up what live relays served.
final class ReconnectWithinTimeoutTests: XCTestCase {
    // MARK: - The window itself

    func testWindowPausesWithBackoffUntilTheTimeoutPassesWithoutProgress() {
        let start = ContinuousClock.now
        var rng = SystemRandomNumberGenerator()
        var window = ReconnectWindow(
            timeout: .seconds(2), backoff: Backoff(initial: .milliseconds(200), maximum: .seconds(1), jitter: 0), now: start)
        let refused = RelayClientError.unreachable("connection refused")
        XCTAssertEqual(window.pause(after: refused, now: start, using: &rng), .milliseconds(200))
        XCTAssertEqual(window.pause(after: .connectionClosed("reset"), now: start + .milliseconds(200), using: &rng), .milliseconds(400))
        XCTAssertEqual(window.remaining(now: start + .milliseconds(600)), .milliseconds(1400))
        XCTAssertEqual(window.pause(after: refused, now: start + .milliseconds(600), using: &rng), .milliseconds(800))
        // The last pause is cut short so one more try fits in the window ...
        XCTAssertEqual(window.pause(after: refused, now: start + .milliseconds(1400), using: &rng), .milliseconds(350))
        // ... and after it the window is over.
        XCTAssertNil(window.pause(after: refused, now: start + .milliseconds(1800), using: &rng))
        XCTAssertEqual(window.remaining(now: start + .seconds(3)), .zero)

        // Progress (an answered page, an OK) opens a fresh window with the first pause again.
        window.progressed(now: start + .seconds(3))
        XCTAssertEqual(window.remaining(now: start + .seconds(3)), .seconds(2))
        XCTAssertEqual(window.pause(after: refused, now: start + .seconds(3), using: &rng), .milliseconds(200))
    }

    func testFinalFailuresAreNotTriedAgain() {
        var rng = SystemRandomNumberGenerator()
        let final: [RelayClientError] = [
            .rejected("blocked"), .tlsFailed("bad certificate"), .invalidURL("x"), .frameTooLarge(limit: 10),
            .malformedMessage("x"), .authenticationFailed("x"), .outboundTooLarge(limit: 10), .shutDown,
        ]
        for error in final {
            var window = ReconnectWindow(timeout: .seconds(10), backoff: Backoff())
            XCTAssertNil(window.pause(after: error, using: &rng), "\(error)")
        }
        for error in [RelayClientError.unreachable("x"), .connectionClosed("x"), .timeout("connecting")] {
            var window = ReconnectWindow(timeout: .seconds(10), backoff: Backoff())
            XCTAssertNotNil(window.pause(after: error, using: &rng), "\(error)")
        }
    }

    // MARK: - Dropped connections

    func testPageCutMidwayIsAskedForAgain() async throws {
        try await bounded(60) {
            let event = try TestEvents.sign(content: "survives the cut", keys: TestEvents.keys())
            // The first connection sends the event and drops before EOSE; later ones answer fully.
            let server = try await HostileServer(steps: [
                ["await": "REQ"], ["text": "[\"EVENT\",\"%SUB%\",\(event.jsonString)]"],
                ["drop": true, "on_connections": [1]], ["text": "[\"EOSE\",\"%SUB%\"]"],
            ])
            defer { server.stop() }
            try await withPool([server.url]) { pool in
                let fetched = try await pool.fetch(Filter(kinds: [1]), timeout: .seconds(5))
                XCTAssertEqual(fetched.events, [event])
                XCTAssertEqual(fetched.errors, [])
                XCTAssertEqual(fetched.completedRelays, [server.url])
            }
            XCTAssertEqual(server.received.filter { $0.hasPrefix("[\"REQ\"") }.count, 2, "the page was asked for again")
        }
    }

    func testPublishCutBeforeItsOKIsSentAgain() async throws {
        try await bounded(60) {
            let server = try await HostileServer(steps: [
                ["await": "EVENT"], ["drop": true, "on_connections": [1]], ["text": "[\"OK\",\"%ID%\",true,\"duplicate: already have this event\"]"],
            ])
            defer { server.stop() }
            let event = try TestEvents.sign(content: "sent twice, stored once", keys: TestEvents.keys())
            try await withPool([server.url]) { pool in
                let results = await pool.publish(event, timeout: .seconds(5))
                XCTAssertEqual(results.map(\.accepted), [true], "\(results)")
                XCTAssertNil(results.first?.error)
            }
            XCTAssertEqual(server.received.filter { $0.hasPrefix("[\"EVENT\"") }.count, 2)
        }
    }

    /// A relay that accepts connections and drops every one still ends the operation within
    /// its timeout (reconnecting is not progress).
    func testRelayThatDropsEveryConnectionEndsWithinTheTimeout() async throws {
        try await bounded(60) {
            let server = try await HostileServer(steps: [["await": "REQ"], ["drop": true]])
            defer { server.stop() }
            try await withPool([server.url]) { pool in
                let started = ContinuousClock.now
                do {
                    _ = try await pool.fetch(Filter(kinds: [1]), timeout: .seconds(2))
                    XCTFail("a relay that never answers served a fetch")
                } catch RelayClientError.noRelayAnswered(let failures) {
                    guard case .connectionClosed = failures.first?.error else { return XCTFail("\(failures)") }
                }
                XCTAssertLessThan(ContinuousClock.now - started, .seconds(10))
            }
            XCTAssertGreaterThanOrEqual(server.received.filter { $0.hasPrefix("[\"REQ\"") }.count, 2, "it was tried again")
        }
    }

    // MARK: - A real relay restarting

    /// rust-nostr's LocalRelay is killed after the pool used it and comes back two seconds
    /// later on the same port with the same database; a fetch and a publish started while it
    /// is down both complete once it is back.
    func testFetchAndPublishStartedWhileTheRelayRestartsComplete() async throws {
        try await bounded(120) {
            let relay = try await RelayProcess.start(RelayProcess.Options(persistent: true))
            defer { relay.stop() }
            let keys = TestEvents.keys()
            let before = try TestEvents.sign(content: "before the restart", keys: keys)
            let during = try TestEvents.sign(content: "during the restart", keys: keys)
            try await withPool([relay.url]) { pool in
                let first = await pool.publish(before, timeout: .seconds(10))
                XCTAssertEqual(first.map(\.accepted), [true])
                relay.kill()
                let comeback = Task {
                    try await Task.sleep(for: .seconds(2))
                    try await relay.restart()
                }
                async let published = pool.publish(during, timeout: .seconds(15))
                async let fetched = pool.fetch(Filter(authors: [keys.publicKey]), timeout: .seconds(15))
                let answers = await published
                XCTAssertEqual(answers.map(\.accepted), [true], "\(answers)")
                let result = try await fetched
                XCTAssertTrue(result.events.contains(before), "\(result.events.map(\.content))")
                XCTAssertEqual(result.completedRelays, [relay.url])
                try await comeback.value
                let after = try await pool.fetch(Filter(authors: [keys.publicKey]), timeout: .seconds(10))
                XCTAssertEqual(Set(after.events), [before, during])
            }
        }
    }

    // MARK: - Dead relays among live ones

    func testDeadRelayDoesNotHoldWhatALiveRelayServed() async throws {
        try await bounded(120) {
            let live = try await RelayProcess.start()
            defer { live.stop() }
            let gone = try await RelayProcess.start()
            let keys = TestEvents.keys()
            var count = 0
            func note() throws -> Event {
                count += 1
                return try TestEvents.sign(content: "note \(count)", keys: keys)
            }
            // A relay nobody ever reached: the operation ends when the live one has answered.
            let neverUp = "ws://127.0.0.1:9"
            try await withPool([live.url, neverUp]) { pool in
                let started = ContinuousClock.now
                let results = await pool.publish(try note(), timeout: .seconds(20))
                XCTAssertEqual(results.map(\.accepted), [true, false])
                let fetched = try await pool.fetch(Filter(authors: [keys.publicKey]), timeout: .seconds(20))
                XCTAssertEqual(fetched.events.count, 1)
                XCTAssertLessThan(ContinuousClock.now - started, .seconds(10), "waited for a relay that was never there")
            }

            // A relay that went away after the pool used it: the first operation after that
            // waits for it within its timeout; later ones no longer do.
            try await withPool([live.url, gone.url]) { pool in
                let both = await pool.publish(try note(), timeout: .seconds(5))
                XCTAssertEqual(both.map(\.accepted), [true, true])
                gone.stop()
                var started = ContinuousClock.now
                let first = await pool.publish(try note(), timeout: .seconds(3))
                XCTAssertEqual(first.map(\.accepted), [true, false])
                XCTAssertGreaterThan(ContinuousClock.now - started, .seconds(1), "gave up on a relay that was up a moment ago")
                started = ContinuousClock.now
                let later = await pool.publish(try note(), timeout: .seconds(20))
                XCTAssertEqual(later.map(\.accepted), [true, false])
                let fetched = try await pool.fetch(Filter(authors: [keys.publicKey]), timeout: .seconds(20))
                XCTAssertEqual(fetched.events.count, 4)
                XCTAssertLessThan(ContinuousClock.now - started, .seconds(10), "waited again for a relay known to be down")
            }
        }
    }
}
