import Nostr
import TestSupport
import XCTest
@testable import RelayClient

/// Bad input from a relay (`Tests/Interop/peers/hostile_ws.py`): oversized frames and
/// messages, malformed JSON, forged events, garbage types, lies and silence. Each is a typed
/// error or a dropped event; the process never crashes and no wait is unbounded.
/// `@unchecked Sendable`: XCTest runs one test method at a time on an instance; its stored
/// properties are set in setUp and only read while a test's tasks run.
final class HostileRelayTests: XCTestCase, @unchecked Sendable {
    private static let limit = 1 << 20

    /// Connects one raw connection, sends a REQ, and returns everything until the end.
    private func drain(_ server: HostileServer, configuration: RelayConfiguration = .forTests) async throws -> [RelayConnection.Inbound] {
        let connection = RelayConnection(url: try RelayURL(server.url), configuration: configuration)
        try await connection.connect()
        try await connection.send(ClientMessage.req(subscriptionID: "s", filters: [Filter(kinds: [1])]).jsonString)
        var items: [RelayConnection.Inbound] = []
        for await item in connection.inbound { items.append(item) }
        await connection.close()
        return items
    }

    func testOversizedFrameIsATypedErrorAndDropsTheConnection() async throws {
        try await bounded(60) {
            let server = try await HostileServer(steps: [["await": "REQ"], ["text": "[\"EOSE\",\"%SUB%\"]"], ["oversized": 1_500_000]])
            defer { server.stop() }
            let items = try await self.drain(server)
            XCTAssertEqual(items, [.text("[\"EOSE\",\"s\"]"), .closed(.frameTooLarge(limit: Self.limit))])
        }
    }

    func testFrameFarBeyondTheLimitIsDroppedUnread() async throws {
        try await bounded(60) {
            // 64 MiB announced: the WebSocket layer refuses it from the header, never buffering it.
            let server = try await HostileServer(steps: [["await": "REQ"], ["oversized": 64 << 20]])
            defer { server.stop() }
            let items = try await self.drain(server)
            XCTAssertEqual(items.count, 1)
            guard case .closed(.connectionClosed) = items.first else { return XCTFail("\(items)") }
        }
    }

    func testOversizedFragmentedMessageIsATypedError() async throws {
        try await bounded(60) {
            let half = String(repeating: "a", count: 700_000)
            let server = try await HostileServer(steps: [["await": "REQ"], ["fragments": ["[\"NOTICE\",\"" + half, half + "\"]"]]])
            defer { server.stop() }
            let items = try await self.drain(server)
            XCTAssertEqual(items, [.closed(.frameTooLarge(limit: Self.limit))])
        }
    }

    func testLargeFragmentedMessageWithinTheLimitArrives() async throws {
        try await bounded(60) {
            let part = String(repeating: "b", count: 300_000)
            let server = try await HostileServer(steps: [
                ["await": "REQ"], ["fragments": ["[\"NOTICE\",\"" + part, part, part + "\"]"]], ["close": 1000],
            ])
            defer { server.stop() }
            let items = try await self.drain(server)
            guard items.count == 2, case .text(let text) = items[0] else { return XCTFail("\(items.count) items") }
            XCTAssertEqual(try RelayMessage(json: text), .notice(part + part + part))
            guard case .closed(.connectionClosed) = items[1] else { return XCTFail("\(items[1])") }
        }
    }

    /// Marmot events can be large; anything up to the 1 MiB limit is accepted and verified.
    func testEventOfThreeHundredKilobytesIsAccepted() async throws {
        try await bounded(60) {
            let keys = TestEvents.keys()
            let big = try TestEvents.sign(kind: 445, content: String(repeating: "q", count: 300_000), tags: [["h", "g"]], keys: keys)
            let server = try await HostileServer(steps: [
                ["await": "REQ"], ["text": "[\"EVENT\",\"%SUB%\",\(big.jsonString)]"], ["text": "[\"EOSE\",\"%SUB%\"]"],
            ])
            defer { server.stop() }
            try await withPool([server.url]) { pool in
                let fetched = try await pool.fetch(Filter(kinds: [445]), timeout: .seconds(10))
                XCTAssertEqual(fetched.events, [big])
                // Ours are bounded too: an event over the limit is never sent.
                let huge = try TestEvents.sign(content: String(repeating: "z", count: 1_100_000), keys: keys)
                let results = await pool.publish(huge, timeout: .seconds(5))
                XCTAssertEqual(results.first?.error, .outboundTooLarge(limit: Self.limit))
                XCTAssertFalse(server.received.contains { $0.hasPrefix("[\"EVENT\"") })
            }
        }
    }

    func testInvalidUTF8TextIsATypedError() async throws {
        try await bounded(60) {
            let server = try await HostileServer(steps: [["await": "REQ"], ["text_hex": "5b22c328225d"]])
            defer { server.stop() }
            let items = try await self.drain(server)
            XCTAssertEqual(items, [.closed(.malformedMessage("text frame is not valid UTF-8"))])
        }
    }

    /// Garbage, forgeries and a good event on one subscription: the good event arrives once,
    /// everything else is reported, and the connection keeps working.
    func testGarbageAndForgeriesAreReportedAndDropped() async throws {
        try await bounded(60) {
            let keys = TestEvents.keys()
            let good = try TestEvents.sign(content: "the real one", keys: keys)
            let forgedSig = try TestEvents.tampered(good, field: "sig", value: String(repeating: "cd", count: 64))
            let forgedContent = try TestEvents.tampered(good, field: "content", value: "forged")
            let wrongKind = try TestEvents.sign(kind: 7, content: "not asked for", keys: keys)
            let garbage: [String] = [
                "not json", "{}", "[]", "[1,2,3]", "[\"EVENT\",\"%SUB%\",{}]", "[\"EVENT\",\"%SUB%\"]",
                "[\"EVENT\",\"%SUB%\",[1]]", "[\"OK\",\"zz\",true,\"\"]", "[\"WHAT\",\"%SUB%\"]", "[\"EOSE\",5]",
                String(repeating: "[", count: 5000),
            ]
            let steps: [[String: Any]] = [["await": "REQ"]]
                + garbage.map { ["text": $0] }
                + [
                    ["binary_hex": "deadbeef"],
                    ["text": "[\"EVENT\",\"%SUB%\",\(forgedSig)]"],
                    ["text": "[\"EVENT\",\"%SUB%\",\(forgedContent)]"],
                    ["text": "[\"EVENT\",\"%SUB%\",\(wrongKind.jsonString)]"],
                    ["text": "[\"EVENT\",\"other-sub\",\(good.jsonString)]"],
                    ["text": "[\"EVENT\",\"%SUB%\",\(good.jsonString)]"],
                    ["text": "[\"EVENT\",\"%SUB%\",\(good.jsonString)]"],
                    ["text": "[\"NOTICE\",\"still here\"]"],
                    ["text": "[\"EOSE\",\"%SUB%\"]"],
                ]
            let server = try await HostileServer(steps: steps)
            defer { server.stop() }
            try await withPool([server.url]) { pool in
                let probe = StreamProbe(pool.subscribe([Filter(authors: [keys.publicKey], kinds: [1])]))
                try await probe.wait("EOSE after the garbage") { $0.contains { $0.isEOSEAll } }
                XCTAssertEqual(probe.events, [good])
                let malformed = probe.errors.filter { if case .malformedMessage = $0 { return true } else { return false } }
                XCTAssertEqual(malformed.count, garbage.count + 1, "\(probe.errors)")  // + the binary frame
                let invalid = probe.errors.compactMap { error -> String? in
                    if case .invalidEvent(let why) = error { return why } else { return nil }
                }
                XCTAssertEqual(invalid.count, 3, "\(invalid)")
                XCTAssertTrue(invalid.contains { $0.contains("invalidSignature") })
                XCTAssertTrue(invalid.contains { $0.contains("idMismatch") })
                XCTAssertTrue(invalid.contains { $0.contains("does not match") })
                XCTAssertTrue(probe.items.contains {
                    if case .notice(_, "still here") = $0 { return true } else { return false }
                })
                probe.stop()
            }
        }
    }

    func testOKWithoutAnIdAnswersTheOldestPublish() async throws {
        try await bounded(60) {
            // nostr-relay refuses with an empty id; the pool pairs it with the waiting event.
            let server = try await HostileServer(steps: [["await": "EVENT"], ["text": "[\"OK\",\"\",false,\"invalid: refused\"]"]])
            defer { server.stop() }
            let event = try TestEvents.sign(keys: TestEvents.keys())
            try await withPool([server.url]) { pool in
                let results = await pool.publish(event, timeout: .seconds(5))
                XCTAssertEqual(results, [PublishResult(url: server.url, accepted: false, message: "invalid: refused")])
            }
        }
    }

    func testOKForAnotherEventIsIgnoredAndTheWaitIsBounded() async throws {
        try await bounded(60) {
            let other = try TestEvents.sign(content: "other", keys: TestEvents.keys())
            let server = try await HostileServer(steps: [["await": "EVENT"], ["text": "[\"OK\",\"\(other.id.hex)\",true,\"\"]"]])
            defer { server.stop() }
            let event = try TestEvents.sign(keys: TestEvents.keys())
            try await withPool([server.url]) { pool in
                let started = ContinuousClock.now
                let results = await pool.publish(event, timeout: .seconds(1))
                XCTAssertLessThan(ContinuousClock.now - started, .seconds(5))
                XCTAssertEqual(results.first?.accepted, false)
                guard case .timeout = results.first?.error else { return XCTFail("\(results)") }
            }
        }
    }

    func testSilentRelayTimesOutFetch() async throws {
        try await bounded(60) {
            let server = try await HostileServer(steps: [["await": "REQ"]])
            defer { server.stop() }
            try await withPool([server.url]) { pool in
                do {
                    _ = try await pool.fetch(Filter(kinds: [1]), timeout: .seconds(1))
                    XCTFail("a relay that never sends EOSE made fetch succeed")
                } catch RelayClientError.noRelayAnswered(let failures) {
                    XCTAssertEqual(failures, [RelayFailure(url: server.url, error: .timeout("EOSE"))])
                }
                // A live subscription is not held hostage either: the overall EOSE comes on time.
                var configuration = RelayConfiguration.forTests
                configuration.eoseTimeout = .seconds(1)
                try await withPool([server.url], configuration: configuration) { quick in
                    let probe = StreamProbe(quick.subscribe([Filter(kinds: [1])]))
                    try await probe.wait("the EOSE timeout") { $0.contains { $0.isEOSEAll } }
                    XCTAssertTrue(probe.errors.contains(.timeout("EOSE")))
                    probe.stop()
                }
            }
        }
    }

    func testRelayThatHangsUpIsRetriedWithBackoff() async throws {
        try await bounded(60) {
            let server = try await HostileServer(steps: [["await": "REQ"], ["drop": true]])
            defer { server.stop() }
            try await withPool([server.url]) { pool in
                let probe = StreamProbe(pool.subscribe([Filter(kinds: [1])]))
                try await probe.wait("three lost connections") { items in
                    items.filter { if case .error(_, .connectionClosed) = $0 { return true } else { return false } }.count >= 3
                }
                try await probe.wait("the overall EOSE despite the failures") { $0.contains { $0.isEOSEAll } }
                XCTAssertGreaterThanOrEqual(server.received.filter { $0.hasPrefix("[\"REQ\"") }.count, 3)
                probe.stop()
            }
        }
    }

    func testNothingListeningIsUnreachable() async throws {
        try await bounded(60) {
            let server = try await HostileServer(steps: [])
            let url = server.url
            server.stop()
            try await withPool([url]) { pool in
                let results = await pool.publish(try TestEvents.sign(keys: TestEvents.keys()), timeout: .seconds(3))
                guard case .unreachable = results.first?.error else { return XCTFail("\(results)") }
                do {
                    _ = try await pool.fetch(Filter(kinds: [1]), timeout: .seconds(3))
                    XCTFail("fetch from nothing succeeded")
                } catch RelayClientError.noRelayAnswered(let failures) {
                    guard case .unreachable = failures.first?.error else { return XCTFail("\(failures)") }
                }
            }
        }
    }
}
