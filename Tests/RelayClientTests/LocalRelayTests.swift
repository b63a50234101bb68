import Nostr
import TestSupport
import XCTest
@testable import RelayClient

/// The relay pool against a real relay: rust-nostr's LocalRelay (nostr-sdk 0.45.1 wheel),
/// started per test on a free 127.0.0.1 port and stopped whatever happens.
final class LocalRelayTests: XCTestCase {
    func testPublishGetsOK() async throws {
        try await bounded(60) {
            let relay = try await RelayProcess.start()
            defer { relay.stop() }
            let keys = TestEvents.keys()
            let event = try TestEvents.sign(content: "first", keys: keys)
            try await withPool([relay.url]) { pool in
                let results = await pool.publish(event, timeout: .seconds(10))
                XCTAssertEqual(results, [PublishResult(url: relay.url, accepted: true, message: "")])
                // The relay says so when it already has it.
                let again = await pool.publish(event, timeout: .seconds(10))
                XCTAssertEqual(again.first?.accepted, true)
                XCTAssertEqual(again.first?.reasonPrefix, "duplicate")
                // The same event twice at once: both callers get the relay's answer.
                let twin = try TestEvents.sign(content: "twin", keys: keys)
                async let first = pool.publish(twin, timeout: .seconds(10))
                async let second = pool.publish(twin, timeout: .seconds(10))
                let both = await [first, second]
                XCTAssertEqual(both.map { $0.first?.accepted }, [true, true], "\(both)")
                XCTAssertEqual(both.compactMap { $0.first?.error }, [])
            }
        }
    }

    func testTagFiltersAndEOSE() async throws {
        try await bounded(60) {
            let relay = try await RelayProcess.start()
            defer { relay.stop() }
            let author = TestEvents.keys()
            let member = TestEvents.keys()
            let group = String(repeating: "ab", count: 32)
            let chat = try TestEvents.sign(kind: 445, content: "in group", tags: [["h", group]], keys: author)
            let other = try TestEvents.sign(kind: 445, content: "other group", tags: [["h", "ff"]], keys: author)
            let invite = try TestEvents.sign(kind: 1059, content: "wrap", tags: [["p", member.publicKey.hex]],
                                             createdAt: TestEvents.now() - 86_400, keys: author)
            let keyPackage = try TestEvents.sign(kind: 30443, content: "kp", tags: [["d", "slot-1"], ["p", "x"]], keys: author)
            let replacement = try TestEvents.sign(kind: 30443, content: "kp2", tags: [["d", "slot-1"]],
                                                  createdAt: keyPackage.createdAt + 1, keys: author)
            try await withPool([relay.url]) { pool in
                for event in [chat, other, invite, keyPackage, replacement] {
                    let result = await pool.publish(event, timeout: .seconds(10))
                    XCTAssertEqual(result.first?.accepted, true, "\(result)")
                }
                let byGroup = try await pool.fetch(Filter(kinds: [445], tags: ["h": [group]]), timeout: .seconds(10))
                XCTAssertEqual(byGroup.events, [chat])
                XCTAssertEqual(byGroup.completedRelays, [relay.url])
                XCTAssertEqual(byGroup.errors, [])

                let byRecipient = try await pool.fetch(Filter(kinds: [1059], tags: ["p": [member.publicKey.hex]]), timeout: .seconds(10))
                XCTAssertEqual(byRecipient.events, [invite])

                // Addressable: the relay keeps the newest per d tag.
                let byD = try await pool.fetch(Filter(authors: [author.publicKey], kinds: [30443], tags: ["d": ["slot-1"]]), timeout: .seconds(10))
                XCTAssertEqual(byD.events, [replacement])

                // The live form reports EOSE per relay and overall.
                let probe = StreamProbe(pool.subscribe([Filter(kinds: [445], tags: ["h": [group]])]))
                try await probe.wait("EOSE") { $0.contains { $0.isEOSEAll } }
                XCTAssertEqual(probe.events, [chat])
                XCTAssertEqual(probe.count { $0.isEOSE(from: relay.url) }, 1)
                probe.stop()
            }
        }
    }

    func testLiveEventsArriveAfterEOSE() async throws {
        try await bounded(60) {
            let relay = try await RelayProcess.start()
            defer { relay.stop() }
            let keys = TestEvents.keys()
            let stored = try TestEvents.sign(content: "stored", keys: keys)
            try await withPool([relay.url]) { listener in
                try await withPool([relay.url]) { publisher in
                    _ = await publisher.publish(stored, timeout: .seconds(10))
                    let probe = StreamProbe(listener.subscribe([Filter(authors: [keys.publicKey], kinds: [1])]))
                    try await probe.wait("EOSE") { $0.contains { $0.isEOSEAll } }
                    XCTAssertEqual(probe.events, [stored])

                    var live: [Event] = []
                    for i in 0..<5 {
                        let event = try TestEvents.sign(content: "live \(i)", keys: keys)
                        live.append(event)
                        let answer = await publisher.publish(event, timeout: .seconds(10)).first?.accepted
                        XCTAssertEqual(answer, true)
                    }
                    // Not matching: another kind and another author.
                    _ = await publisher.publish(try TestEvents.sign(kind: 7, keys: keys), timeout: .seconds(10))
                    _ = await publisher.publish(try TestEvents.sign(keys: TestEvents.keys()), timeout: .seconds(10))
                    try await probe.wait("live events") { items in
                        items.filter { if case .event = $0 { return true } else { return false } }.count >= 6
                    }
                    try await Task.sleep(for: .milliseconds(300))
                    XCTAssertEqual(probe.events, [stored] + live)
                    XCTAssertEqual(probe.errors, [])
                    probe.stop()
                }
            }
        }
    }

    func testRefusalsAreSurfacedWithTheirReasons() async throws {
        try await bounded(60) {
            let relay = try await RelayProcess.start()
            defer { relay.stop() }
            let keys = TestEvents.keys()
            let good = try TestEvents.sign(content: "good", keys: keys)

            // Raw over a connection: a bad signature and a wrong id come back as OK false.
            let connection = RelayConnection(url: try RelayURL(relay.url), configuration: .forTests)
            try await connection.connect()
            let badSig = try TestEvents.tampered(good, field: "sig", value: String(repeating: "ab", count: 64))
            let badID = try TestEvents.tampered(good, field: "content", value: "changed after signing")
            try await connection.send("[\"EVENT\",\(badSig)]")
            try await connection.send("[\"EVENT\",\(badID)]")
            var answers: [RelayMessage] = []
            for await item in connection.inbound {
                guard case .text(let text) = item else { break }
                answers.append(try RelayMessage(json: text))
                if answers.count == 2 { break }
            }
            await connection.close()
            XCTAssertEqual(answers.count, 2)
            for answer in answers {
                guard case .ok(let id, let accepted, let message) = answer else { XCTFail("\(answer)"); continue }
                XCTAssertEqual(id, good.id)
                XCTAssertFalse(accepted)
                XCTAssertEqual(RelayReason.prefix(of: message), "invalid", message)
            }

            // Through the pool: an event over LocalRelay's 64 KiB limit is refused with a reason.
            try await withPool([relay.url]) { pool in
                let huge = try TestEvents.sign(content: String(repeating: "x", count: 70_000), keys: keys)
                let result = await pool.publish(huge, timeout: .seconds(10))
                XCTAssertEqual(result.count, 1)
                XCTAssertEqual(result.first?.accepted, false)
                XCTAssertNil(result.first?.error)
                XCTAssertEqual(result.first?.reasonPrefix, "blocked", result.first?.message ?? "")
            }

            // A rate limit: the fourth event in a minute is refused as rate-limited.
            let strict = try await RelayProcess.start(RelayProcess.Options(notesPerMinute: 3))
            defer { strict.stop() }
            try await withPool([strict.url]) { pool in
                var results: [PublishResult] = []
                for i in 0..<4 {
                    results += await pool.publish(try TestEvents.sign(content: "n\(i)", keys: keys), timeout: .seconds(10))
                }
                XCTAssertEqual(results.map(\.accepted), [true, true, true, false])
                XCTAssertEqual(results.last?.reasonPrefix, "rate-limited", results.last?.message ?? "")
            }
        }
    }

    func testSixtyKilobyteEventRoundTrips() async throws {
        try await bounded(60) {
            let relay = try await RelayProcess.start()
            defer { relay.stop() }
            let keys = TestEvents.keys()
            let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789\u{e9}\"\n")
            let content = String((0..<60_000).map { alphabet[$0 % alphabet.count] })
            let big = try TestEvents.sign(kind: 445, content: content, tags: [["h", "big"]], keys: keys)
            XCTAssertGreaterThan(big.jsonBytes.count, 60_000)
            try await withPool([relay.url]) { pool in
                let answer = await pool.publish(big, timeout: .seconds(10)).first?.accepted
                XCTAssertEqual(answer, true)
                let fetched = try await pool.fetch(Filter(kinds: [445], tags: ["h": ["big"]]), timeout: .seconds(10))
                XCTAssertEqual(fetched.events, [big])
                XCTAssertEqual(fetched.events.first?.content, content)
            }
        }
    }

    func testPaginationPastTheRelayCap() async throws {
        try await bounded(180) {
            let relay = try await RelayProcess.start(RelayProcess.Options(notesPerMinute: 100_000))
            defer { relay.stop() }
            let keys = TestEvents.keys()
            let base = TestEvents.now() - 10_000
            // 1,203 events, several per second, so pages end inside a second.
            let events = try (0..<1203).map { i in
                try TestEvents.sign(content: "n\(i)", tags: [["t", "page-test"]], createdAt: base + Int64(i / 4), keys: keys)
            }
            try await withPool([relay.url]) { pool in
                try await withThrowingTaskGroup(of: Int.self) { group in
                    for chunk in stride(from: 0, to: events.count, by: 100) {
                        let slice = Array(events[chunk..<min(chunk + 100, events.count)])
                        group.addTask {
                            var accepted = 0
                            for event in slice where await pool.publish(event, timeout: .seconds(20)).first?.accepted == true {
                                accepted += 1
                            }
                            return accepted
                        }
                    }
                    var total = 0
                    for try await accepted in group { total += accepted }
                    XCTAssertEqual(total, events.count)
                }
                // LocalRelay answers at most 500 per REQ.
                let single = try await RelaySessionProbe.firstPage(pool: pool, relay: relay.url, filter: Filter(kinds: [1], tags: ["t": ["page-test"]]))
                XCTAssertEqual(single, 500)

                let fetched = try await pool.fetch(Filter(authors: [keys.publicKey], kinds: [1]), timeout: .seconds(20))
                XCTAssertEqual(fetched.errors, [])
                XCTAssertEqual(fetched.events.count, events.count)
                XCTAssertTrue(Set(fetched.events.map(\.id)) == Set(events.map(\.id)), "a different set of events came back")
                XCTAssertTrue(fetched.events.map(\.createdAt) == fetched.events.map(\.createdAt).sorted(by: >), "not newest first")

                let limited = try await pool.fetch(Filter(authors: [keys.publicKey], kinds: [1], limit: 700), timeout: .seconds(20))
                XCTAssertEqual(limited.events.count, 700)
                XCTAssertEqual(Set(limited.events.map(\.id)).count, 700)
            }
        }
    }

    func testReconnectsAfterTheRelayIsKilledAndRestarted() async throws {
        try await bounded(120) {
            let relay = try await RelayProcess.start(RelayProcess.Options(persistent: true))
            defer { relay.stop() }
            let keys = TestEvents.keys()
            let before = try TestEvents.sign(content: "before", keys: keys)
            try await withPool([relay.url]) { pool in
                let answer = await pool.publish(before, timeout: .seconds(10)).first?.accepted
                XCTAssertEqual(answer, true)
                let probe = StreamProbe(pool.subscribe([Filter(authors: [keys.publicKey], kinds: [1])]))
                try await probe.wait("EOSE") { $0.contains { $0.isEOSEAll } }
                XCTAssertEqual(probe.events, [before])

                let port = relay.port
                relay.kill()
                try await probe.wait("the loss to be noticed") { items in
                    items.contains { if case .error(_, .connectionClosed) = $0 { return true } else { return false } }
                }
                // Let a few reconnect attempts fail against the dead port.
                try await Task.sleep(for: .milliseconds(700))
                try await relay.restart()
                XCTAssertEqual(relay.port, port)
                try await probe.wait("the reconnect", seconds: 20) { $0.contains { $0.isReconnected } }

                let after = try TestEvents.sign(content: "after restart", keys: keys)
                let acceptedAfter = await pool.publish(after, timeout: .seconds(10)).first?.accepted
                XCTAssertEqual(acceptedAfter, true)
                try await probe.wait("the event published after the restart") { _ in probe.events.contains(after) }
                // The resumed REQ returned `before` again; dedup kept it to one delivery.
                XCTAssertEqual(probe.events, [before, after])
                probe.stop()
            }
        }
    }

    func testTwoRelaysDeduplicateAndReportEOSEPerRelay() async throws {
        try await bounded(90) {
            let first = try await RelayProcess.start()
            defer { first.stop() }
            let second = try await RelayProcess.start()
            defer { second.stop() }
            // A third address where nothing listens: reported, never blocking.
            let deadPort = try await RelayProcess.start()
            let dead = deadPort.url
            deadPort.stop()

            let keys = TestEvents.keys()
            let shared = try TestEvents.sign(content: "on both", keys: keys)
            let onlySecond = try TestEvents.sign(content: "only second", keys: keys)
            try await withPool([first.url, second.url]) { both in
                let answer = await both.publish(shared, timeout: .seconds(10)).map(\.accepted)
                XCTAssertEqual(answer, [true, true])
            }
            try await withPool([second.url]) { one in
                let acceptedBySecond = await one.publish(onlySecond, timeout: .seconds(10)).map(\.accepted)
                XCTAssertEqual(acceptedBySecond, [true])
            }
            try await withPool([first.url, second.url, dead]) { pool in
                let published = await pool.publish(try TestEvents.sign(content: "x", keys: TestEvents.keys()), timeout: .seconds(5))
                XCTAssertEqual(published.map(\.url), [first.url, second.url, dead])
                XCTAssertEqual(published.map(\.accepted), [true, true, false])
                if case .unreachable = published[2].error {} else { XCTFail("\(published[2])") }

                let fetched = try await pool.fetch(Filter(authors: [keys.publicKey]), timeout: .seconds(5))
                XCTAssertEqual(Set(fetched.events), [shared, onlySecond])
                XCTAssertEqual(fetched.events.count, 2)
                XCTAssertEqual(Set(fetched.completedRelays), [first.url, second.url])
                XCTAssertEqual(fetched.errors.map(\.url), [dead])

                let probe = StreamProbe(pool.subscribe([Filter(authors: [keys.publicKey])]))
                try await probe.wait("EOSE from both live relays") { items in
                    items.contains { $0.isEOSE(from: first.url) } && items.contains { $0.isEOSE(from: second.url) }
                        && items.contains { $0.isEOSEAll }
                }
                XCTAssertEqual(Set(probe.events), [shared, onlySecond])
                XCTAssertEqual(probe.events.count, 2, "the shared event is delivered once")
                XCTAssertEqual(probe.count { $0.isEOSEAll }, 1)
                probe.stop()
            }
        }
    }
}

/// Reaches one relay session of a pool, for assertions about a single REQ.
enum RelaySessionProbe {
    static func firstPage(pool: RelayPool, relay: String, filter: Filter) async throws -> Int {
        let session = RelaySession(url: try RelayURL(relay), authKeys: nil, configuration: .forTests, logger: .init(label: "test"))
        defer { Task { await session.shutDown() } }
        return try await session.page([filter], timeout: .seconds(10)).events.count
    }
}
