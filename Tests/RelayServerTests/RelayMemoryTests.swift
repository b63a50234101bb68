import Foundation
import Nostr
@testable import RelayServer
import TestSupport
import XCTest

/// The relay's memory bounds for clients it cannot trust (issue 11): bytes queued per client,
/// bytes per REQ reply and per catching-up subscription, connections per address, and AUTH.
final class RelayMemoryTests: XCTestCase {
    /// A client that never reads: the bytes queued for it stop at `outboundBytes` and it is
    /// marked for disconnection, whatever the count limit.
    func testOutboundBytesAreBoundedPerClient() {
        var limits = RelayServerConfiguration.Limits()
        limits.outboundQueue = 1_000_000
        limits.outboundBytes = 64 * 1024
        let connection = ClientConnection(number: 1, challenge: "c", limits: limits, now: 0)
        let text = String(repeating: "x", count: 1000)
        for _ in 0..<200 { connection.send(text) }
        XCTAssertTrue(connection.isOverflowed)
        XCTAssertLessThanOrEqual(connection.queuedBytes, 64 * 1024)
        XCTAssertGreaterThan(connection.queuedBytes, 60 * 1024)
    }

    /// Live events arriving while a subscription catches up are held up to `requestBytes`;
    /// past it the subscription is CLOSED after its EOSE instead of silently missing events.
    func testHeldLiveEventsBeyondTheBudgetCloseTheSubscription() async throws {
        var limits = RelayServerConfiguration.Limits()
        limits.requestBytes = 20 * 1024
        let connection = ClientConnection(number: 1, challenge: "c", limits: limits, now: 0)
        let generation = try XCTUnwrap(connection.open("s", filters: [Filter(kinds: [1])], limit: 10))
        let keys = TestEvents.keys()
        for index in 0..<10 {
            let event = try TestEvents.sign(content: String(repeating: "\(index)", count: 4000), keys: keys)
            connection.deliver(event, json: event.jsonBytes)
        }
        connection.finishCatchingUp("s", generation: generation, stored: [])
        connection.finishOutbox()
        var messages: [String] = []
        for await text in connection.outgoing { messages.append(text) }
        let decoded = messages.compactMap { try? RelayMessage(json: $0) }
        guard decoded.count == 2, case .eose("s") = decoded[0], case .closed("s", let why) = decoded[1] else {
            return XCTFail("expected EOSE then CLOSED, got \(decoded)")
        }
        XCTAssertTrue(why.hasPrefix("error:"), why)
        XCTAssertEqual(connection.subscriptionCount, 0)
    }

    /// A REQ's stored events stop at `requestBytes`, newest first, and the reply still ends
    /// with EOSE (the client pages on with `until`).
    func testStoredRepliesStopAtTheirByteBudget() async throws {
        let relay = TestRelay()
        defer { relay.remove() }
        let running = try await relay.start {
            $0.limits.maxEventBytes = 32 * 1024
            $0.limits.requestBytes = 64 * 1024
        }
        defer { Task { await running.close() } }
        let publisher = RawClient(url: running.url)
        defer { publisher.close() }
        let keys = TestEvents.keys()
        for index in 0..<20 {
            let event = try TestEvents.sign(content: String(repeating: "p", count: 10_000), createdAt: TestEvents.now() - 100 + Int64(index), keys: keys)
            publisher.send(ClientMessage.event(event).jsonString)
            let answer = try await publisher.ok(for: event.id)
            XCTAssertTrue(answer.accepted, answer.message)
        }
        let reader = RawClient(url: running.url)
        defer { reader.close() }
        reader.send(#"["REQ","all",{"kinds":[1]}]"#)
        _ = try await reader.next("EOSE") { if case .eose("all") = $0 { return true } else { return false } }
        let events = reader.relayMessages.compactMap { message -> UnverifiedEvent? in
            if case .event("all", let event) = message { return event } else { return nil }
        }
        XCTAssertEqual(events.count, 6, "64 KiB holds six 10 KB events")
        XCTAssertEqual(events.map(\.createdAt), events.map(\.createdAt).sorted(by: >), "newest first")
    }

    /// At most `maxConnectionsPerIP` connections from one address (loopback counted here).
    func testConnectionsPerAddressAreCapped() async throws {
        let relay = TestRelay()
        defer { relay.remove() }
        let running = try await relay.start {
            $0.limits.maxConnectionsPerIP = 3
            $0.limits.limitLoopback = true
        }
        defer { Task { await running.close() } }
        let clients = (0..<3).map { _ in RawClient(url: running.url) }
        defer { clients.forEach { $0.close() } }
        for client in clients { _ = try await client.next("AUTH") { if case .auth = $0 { return true } else { return false } } }
        let fourth = RawClient(url: running.url)
        defer { fourth.close() }
        let notice = try await fourth.notice(containing: "blocked")
        XCTAssertTrue(notice.contains("at most 3 connections from one address"), notice)
        try await eventually("the fourth is closed") { fourth.hasEnded }
        // One leaves; a new one gets in.
        clients[0].close()
        try await eventually("a slot frees", seconds: 10) {
            let again = RawClient(url: running.url)
            defer { again.close() }
            try await Task.sleep(for: .milliseconds(300))
            return again.challenge != nil
        }
    }

    /// AUTH is rate-limited per connection, its events are small, and one connection proves at
    /// most `maxAuthKeys` keys.
    func testAuthIsRateLimitedAndBounded() async throws {
        let relay = TestRelay()
        defer { relay.remove() }
        let running = try await relay.start {
            $0.limits.authPerMinute = 4
            $0.limits.maxAuthKeys = 2
        }
        defer { Task { await running.close() } }
        let client = RawClient(url: running.url)
        defer { client.close() }
        _ = try await client.next("AUTH") { if case .auth = $0 { return true } else { return false } }
        let challenge = try XCTUnwrap(client.challenge)
        func auth(_ keys: Keys, padding: Int = 0) throws -> Event {
            var tags = [["relay", running.url], ["challenge", challenge]]
            if padding > 0 { tags.append(["x", String(repeating: "a", count: padding)]) }
            return try TestEvents.sign(kind: 22242, content: "", tags: tags, keys: keys)
        }
        var answers: [(Bool, String)] = []
        for event in [try auth(TestEvents.keys()), try auth(TestEvents.keys()), try auth(TestEvents.keys()),
                      try auth(TestEvents.keys(), padding: 8000), try auth(TestEvents.keys())] {
            client.send(ClientMessage.auth(event).jsonString)
            answers.append(try await client.ok(for: event.id))
        }
        XCTAssertTrue(answers[0].0 && answers[1].0, "\(answers)")
        XCTAssertFalse(answers[2].0)
        XCTAssertTrue(answers[2].1.contains("at most 2 keys"), answers[2].1)
        XCTAssertFalse(answers[3].0)
        XCTAssertTrue(answers[3].1.contains("at most 4096 bytes"), answers[3].1)
        XCTAssertFalse(answers[4].0)
        XCTAssertTrue(answers[4].1.hasPrefix("rate-limited:"), answers[4].1)
    }
}

/// The acceptance test of the relay's memory bound: `burrow-relay` in its own process, five
/// clients that subscribe to everything and never read, one publisher flooding 10 KB events.
final class RelayMemoryBoundTests: XCTestCase {
    /// The stated bound: the relay's peak resident memory grows by at most this much over its
    /// idle baseline (each of the five stalled clients may cost `outboundBytes` = 8 MiB, plus
    /// the publisher, SQLite's cache and the allocator's slack).
    static let boundMiB = 96

    func testMemoryStaysBoundedWhileFiveClientsNeverRead() async throws {
        try await bounded(240) {
            let fm = FileManager.default
            let directory = fm.temporaryDirectory.appendingPathComponent("burrow-relay-memory-\(UUID().uuidString)")
            try fm.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? fm.removeItem(at: directory) }
            let config = directory.appendingPathComponent("relay.json")
            try Data(#"{"limits": {"events_per_minute": 1000000, "events_per_minute_per_key": 1000000, "requests_per_minute": 1000000}}"#.utf8)
                .write(to: config)
            let program = try BurrowRelayProgramTests.Program(
                ["--config", config.path, "--port", "0", "--data", directory.appendingPathComponent("data").path, "--log-level", "warning"])
            let url = try await program.listeningURL()
            let port = try XCTUnwrap(Int(url.split(separator: ":").last.map(String.init) ?? ""))
            let pid = program.process.processIdentifier

            let publisher = RawClient(url: url)
            defer { publisher.close() }
            let keys = TestEvents.keys()
            let content = String(repeating: "m", count: 10_000)
            // Warm up (SQLite pages, allocator arenas), then take the baseline.
            // Each content differs: equal events (same content in the same second) are one event.
            for index in 0..<50 {
                let event = try TestEvents.sign(content: "warm \(index) " + content, keys: keys)
                publisher.send(ClientMessage.event(event).jsonString)
                _ = try await publisher.ok(for: event.id)
            }
            let baseline = try Self.memoryKiB(pid, "VmRSS")

            let stalled = try (0..<5).map { _ in try StalledClient(port: port, request: #"["REQ","all",{"kinds":[1],"limit":1}]"#) }
            // 4,000 events of 10 KB: 40 MB to every stalled client, 200 MB in all without a byte budget.
            var last: EventID?
            for index in 0..<4_000 {
                let event = try TestEvents.sign(content: "\(index) " + content, keys: keys)
                publisher.send(ClientMessage.event(event).jsonString)
                last = event.id
                if index % 200 == 199 { _ = try await publisher.ok(for: event.id, seconds: 30) }
            }
            if let last {
                let answer = try await publisher.ok(for: last, seconds: 30)
                XCTAssertTrue(answer.accepted, answer.message)
            }
            try await Task.sleep(for: .seconds(1))
            let peak = try Self.memoryKiB(pid, "VmHWM")
            let grown = (peak - baseline) / 1024
            print("RelayMemoryBoundTests: baseline \(baseline / 1024) MiB, peak \(peak / 1024) MiB, grown \(grown) MiB (bound \(Self.boundMiB) MiB)")
            XCTAssertLessThan(grown, Self.boundMiB, "peak \(peak / 1024) MiB over a baseline of \(baseline / 1024) MiB")
            XCTAssertTrue(program.process.isRunning)
            withExtendedLifetime(stalled) {}

            // A fresh client is still served.
            let fresh = RawClient(url: url)
            defer { fresh.close() }
            fresh.send(#"["REQ","one",{"kinds":[1],"limit":1}]"#)
            _ = try await fresh.next("EOSE", seconds: 20) { if case .eose("one") = $0 { return true } else { return false } }
            XCTAssertEqual(fresh.relayMessages.filter { if case .event("one", _) = $0 { return true } else { return false } }.count, 1)
            program.process.terminate()
        }
    }

    /// A field of /proc/PID/status in KiB.
    static func memoryKiB(_ pid: Int32, _ field: String) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") }),
              let value = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap({ Int($0) })
        else { throw TestFailure("no \(field) in /proc/\(pid)/status") }
        return value
    }
}
