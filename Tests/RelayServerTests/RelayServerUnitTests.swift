import Foundation
import Nostr
import TestSupport
import XCTest
@testable import RelayServer

/// The relay's parts without sockets: message decoding, configuration, admission rules, rate
/// buckets, and the SQLite store's NIP-01/09/40 semantics.
final class RelayServerUnitTests: XCTestCase {
    // MARK: - Client messages

    func testDecodesClientMessagesAndKeepsIDsOfBrokenOnes() throws {
        let keys = TestEvents.keys()
        let event = try TestEvents.sign(kind: 1, content: "hi", keys: keys)

        guard case .success(.event(let decoded)) = IncomingMessage.decode(Array("[\"EVENT\",\(event.jsonString)]".utf8)) else {
            return XCTFail("EVENT did not decode")
        }
        XCTAssertEqual(try decoded.verified(), event)
        guard case .success(.req(let id, let filters)) = IncomingMessage.decode(Array(##"["REQ","s1",{"kinds":[1],"#p":["ab"]},{"limit":3}]"##.utf8)) else {
            return XCTFail("REQ did not decode")
        }
        XCTAssertEqual(id, "s1")
        XCTAssertEqual(filters, [Filter(kinds: [1], tags: ["p": ["ab"]]), Filter(limit: 3)])
        guard case .success(.close("s1")) = IncomingMessage.decode(Array(#"["CLOSE","s1"]"#.utf8)) else { return XCTFail("CLOSE") }
        guard case .success(.count("c")) = IncomingMessage.decode(Array(#"["COUNT","c",{}]"#.utf8)) else { return XCTFail("COUNT") }
        guard case .success(.auth) = IncomingMessage.decode(Array("[\"AUTH\",\(event.jsonString)]".utf8)) else { return XCTFail("AUTH") }

        // Broken input: what can be recovered is kept for an OK / CLOSED answer.
        var broken = event.jsonString
        broken = broken.replacingOccurrences(of: "\"kind\":1", with: "\"kind\":\"one\"")
        guard case .failure(let failure) = IncomingMessage.decode(Array("[\"EVENT\",\(broken)]".utf8)) else { return XCTFail("bad kind accepted") }
        XCTAssertEqual(failure.eventID, event.id)
        XCTAssertTrue(failure.reason.contains("kind"), failure.reason)
        guard case .failure(let badFilter) = IncomingMessage.decode(Array(#"["REQ","s2",{"kinds":"all"}]"#.utf8)) else { return XCTFail("bad filter accepted") }
        XCTAssertEqual(badFilter.subscriptionID, "s2")
        for text in ["not json", "{}", "[]", "[1]", #"["HELLO"]"#, #"["REQ",""]"#, "[\"REQ\",\"\(String(repeating: "x", count: 65))\",{}]", #"["CLOSE"]"#] {
            guard case .failure(let f) = IncomingMessage.decode(Array(text.utf8)) else { return XCTFail("\(text) accepted") }
            XCTAssertNil(f.eventID)
            XCTAssertFalse(f.reason.isEmpty)
        }
    }

    // MARK: - Configuration

    func testConfigurationFileOverDefaultsRefusesUnknownKeysAndBadValues() throws {
        let json = """
            {"host": "192.168.1.10", "port": 7000, "data_directory": "/var/lib/relay",
             "public_urls": ["wss://relay.home.example"],
             "info": {"name": "Family relay", "contact": "mailto:parent@example.org"},
             "limits": {"max_event_bytes": 131072, "query_limit": 200, "events_per_minute": 30},
             "auth": {"write": true},
             "retention": [{"kinds": [445, 1059], "max_age_seconds": 3888000}],
             "purge_interval_seconds": 30}
            """
        let configuration = try RelayServerConfiguration(json: Array(json.utf8)).validated()
        XCTAssertEqual(configuration.host, "192.168.1.10")
        XCTAssertEqual(configuration.port, 7000)
        XCTAssertEqual(configuration.publicURLs, ["wss://relay.home.example"])
        XCTAssertEqual(configuration.information.name, "Family relay")
        XCTAssertEqual(configuration.limits.maxEventBytes, 131_072)
        XCTAssertEqual(configuration.maxMessageBytes, 262_144)
        XCTAssertEqual(configuration.limits.queryLimit, 200)
        XCTAssertEqual(configuration.limits.maxSubscriptions, 50, "unset keys keep their defaults")
        XCTAssertTrue(configuration.auth.write)
        XCTAssertFalse(configuration.auth.read)
        XCTAssertEqual(configuration.maxAge(ofKind: 1059), 3_888_000)
        XCTAssertNil(configuration.maxAge(ofKind: 1))

        let defaults = RelayServerConfiguration()
        XCTAssertEqual(defaults.host, "127.0.0.1")
        XCTAssertEqual(defaults.port, 7447)
        XCTAssertEqual(defaults.limits.maxEventBytes, 256 * 1024)
        XCTAssertEqual(defaults.limits.queryLimit, 500)

        let refusals: [(String, String)] = [
            (#"{"prot": 1}"#, "prot"),
            (#"{"limits": {"max_events": 1}}"#, "limits.max_events"),
            (#"{"port": "7447"}"#, "port"),
            (#"{"auth": {"write": 1}}"#, "auth.write"),
            (#"{"retention": [{"kinds": [1]}]}"#, "max_age_seconds"),
            ("[1]", "not an object"),
            ("{", "JSON"),
        ]
        for (text, mention) in refusals {
            XCTAssertThrowsError(try RelayServerConfiguration(json: Array(text.utf8))) { error in
                XCTAssertTrue("\(error)".contains(mention), "\(text): \(error)")
            }
        }
        // The example shipped in Relays/ is valid and sets every key.
        let example = try RelayServerConfiguration(jsonFile: Fixtures.repositoryRoot.appendingPathComponent("Relays/burrow-relay.example.json").path).validated()
        XCTAssertEqual(example.host, "192.168.1.10")
        XCTAssertEqual(example.retention.count, 2)

        var bad = RelayServerConfiguration()
        bad.port = 70_000
        XCTAssertThrowsError(try bad.validated())
        bad = RelayServerConfiguration()
        bad.limits.maxFilterValues = 1000
        XCTAssertThrowsError(try bad.validated(), "more than SQLite's parameter budget")
        bad = RelayServerConfiguration()
        bad.publicURLs = ["http://example.org"]
        XCTAssertThrowsError(try bad.validated())
    }

    // MARK: - Admission

    func testAdmissionRules() throws {
        let author = TestEvents.keys()
        let now = TestEvents.now()
        var configuration = RelayServerConfiguration()
        configuration.limits.maxEventBytes = 2048
        configuration.retention = [.init(kinds: [445], maxAgeSeconds: 3600)]
        func check(_ event: Event, authenticated: Set<PublicKey> = [], _ config: RelayServerConfiguration? = nil) -> Admission {
            EventAdmission.check(event, size: event.jsonBytes.count, now: now, authenticated: authenticated, configuration: config ?? configuration)
        }
        XCTAssertEqual(check(try TestEvents.sign(kind: 1, keys: author)), .accept(ephemeral: false))
        XCTAssertEqual(check(try TestEvents.sign(kind: 20_001, keys: author)), .accept(ephemeral: true))
        XCTAssertEqual(check(try TestEvents.sign(kind: 1, content: String(repeating: "a", count: 3000), keys: author)).text?.hasPrefix("invalid: event is"), true)
        XCTAssertEqual(check(try TestEvents.sign(kind: 1, createdAt: now + 3600, keys: author)).text?.hasPrefix("invalid: created_at"), true)
        XCTAssertEqual(check(try TestEvents.sign(kind: 1, tags: [["expiration", "\(now - 1)"]], keys: author)).text, "invalid: event has expired (NIP-40)")
        XCTAssertEqual(check(try TestEvents.sign(kind: 1, tags: [["expiration", "\(now + 60)"]], keys: author)), .accept(ephemeral: false))
        XCTAssertEqual(check(try TestEvents.sign(kind: 445, createdAt: now - 7200, keys: author)).text?.hasPrefix("blocked:"), true)
        XCTAssertEqual(check(try TestEvents.sign(kind: 22242, keys: author)).text?.hasPrefix("invalid:"), true)

        // NIP-70.
        let protected = try TestEvents.sign(kind: 1, tags: [["-"]], keys: author)
        XCTAssertEqual(check(protected), .refuse(prefix: "auth-required", message: "this protected event may only be published by its author", challenge: true))
        XCTAssertEqual(check(protected, authenticated: [TestEvents.keys().publicKey]).text?.hasPrefix("restricted:"), true)
        XCTAssertEqual(check(protected, authenticated: [author.publicKey]), .accept(ephemeral: false))

        var writeAuth = configuration
        writeAuth.auth.write = true
        XCTAssertEqual(check(try TestEvents.sign(kind: 1, keys: author), writeAuth).text?.hasPrefix("auth-required:"), true)
        XCTAssertEqual(check(try TestEvents.sign(kind: 1, keys: author), authenticated: [author.publicKey], writeAuth), .accept(ephemeral: false))

        // Requests: the gift-wrap rule and the limits.
        let me = author.publicKey
        let wraps = Filter(kinds: [1059], tags: ["p": [me.hex]])
        XCTAssertEqual(RequestAdmission.check([wraps], authenticated: [], configuration: configuration).text?.hasPrefix("auth-required:"), true)
        XCTAssertEqual(RequestAdmission.check([wraps], authenticated: [me], configuration: configuration), .accept(ephemeral: false))
        XCTAssertEqual(RequestAdmission.check([Filter(kinds: [1059])], authenticated: [me], configuration: configuration).text?.hasPrefix("restricted:"), true)
        XCTAssertEqual(RequestAdmission.check([Filter(kinds: [1059], tags: ["p": [me.hex, TestEvents.keys().publicKey.hex]])], authenticated: [me], configuration: configuration).text?.hasPrefix("restricted:"), true)
        XCTAssertEqual(RequestAdmission.check([Filter(kinds: [1])], authenticated: [], configuration: configuration), .accept(ephemeral: false))
        XCTAssertEqual(RequestAdmission.check(Array(repeating: Filter(), count: 21), authenticated: [], configuration: configuration).text?.hasPrefix("invalid:"), true)
        let flood = Filter(tags: ["p": (0..<501).map { String($0) }])
        XCTAssertEqual(RequestAdmission.check([flood], authenticated: [], configuration: configuration).text?.hasPrefix("invalid:"), true)

        var readAuth = configuration
        readAuth.auth.read = true
        XCTAssertEqual(RequestAdmission.check([Filter(kinds: [1])], authenticated: [], configuration: readAuth),
                       .refuse(prefix: "auth-required", message: "this relay serves only authenticated clients", challenge: true))
        XCTAssertEqual(RequestAdmission.check([Filter(kinds: [1])], authenticated: [me], configuration: readAuth), .accept(ephemeral: false))

        XCTAssertTrue(Visibility.canSee(kind: 1, tags: [], authenticated: []))
        XCTAssertFalse(Visibility.canSee(kind: 1059, tags: [["p", me.hex]], authenticated: []))
        XCTAssertTrue(Visibility.canSee(kind: 1059, tags: [["p", me.hex]], authenticated: [me.hex]))
    }

    func testTokenBucketsRefillOverAMinuteAndForgetIdleKeys() {
        var bucket = TokenBucket(perMinute: 3, now: 0)
        XCTAssertEqual((0..<4).map { _ in bucket.take(now: 0) }, [true, true, true, false])
        XCTAssertFalse(bucket.take(now: 10), "a third of a token after 10 s")
        XCTAssertTrue(bucket.take(now: 20.5), "one token after 20 s")
        XCTAssertTrue(bucket.isFull(now: 100))

        let limiter = KeyedRateLimiter<Int>(perMinute: 1)
        XCTAssertTrue(limiter.take(1, now: 0))
        XCTAssertFalse(limiter.take(1, now: 1))
        XCTAssertTrue(limiter.take(2, now: 1))
        for key in 3..<1100 { _ = limiter.take(key, now: 200) }
        XCTAssertLessThan(limiter.trackedKeys, 1100, "full buckets are forgotten when the table grows")
    }

    // MARK: - Store

    func testStoreReplacesDeletesExpiresAndKeepsEverythingAcrossReopen() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("relay-store-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        var store = try EventStore(directory: directory.path)
        let alice = TestEvents.keys()
        let bob = TestEvents.keys()
        let now = TestEvents.now()
        func save(_ event: Event) async throws -> SaveOutcome {
            try await store.run { try EventStore.save(event, json: event.jsonBytes, in: $0) }
        }
        func query(_ filters: [Filter], limit: Int = 500, as keys: Set<String> = []) async throws -> [String] {
            try await store.run { try EventStore.query(filters, limit: limit, now: now, authenticated: keys, in: $0) }
                .map { try UnverifiedEvent(json: $0.json).id.hex }
        }

        // Replaceable: the newest wins; on a tie, the lowest id.
        let profile1 = try TestEvents.sign(kind: 0, content: "v1", createdAt: now - 100, keys: alice)
        let profile2 = try TestEvents.sign(kind: 0, content: "v2", createdAt: now - 50, keys: alice)
        let got1 = try await save(profile2)
        XCTAssertEqual(got1, .stored)
        let got2 = try await save(profile1)
        XCTAssertEqual(got2, .superseded)
        let got3 = try await save(profile2)
        XCTAssertEqual(got3, .duplicate)
        let got4 = try await query([Filter(authors: [alice.publicKey], kinds: [0])])
        XCTAssertEqual(got4, [profile2.id.hex])
        let tieA = try TestEvents.sign(kind: 10_002, content: "a", createdAt: now, keys: alice)
        let tieB = try TestEvents.sign(kind: 10_002, content: "b", createdAt: now, keys: alice)
        let (low, high) = tieA.id < tieB.id ? (tieA, tieB) : (tieB, tieA)
        let got5 = try await save(high)
        XCTAssertEqual(got5, .stored)
        let got6 = try await save(low)
        XCTAssertEqual(got6, .stored)
        let got7 = try await save(high)
        XCTAssertEqual(got7, .superseded)
        let got8 = try await query([Filter(kinds: [10_002])])
        XCTAssertEqual(got8, [low.id.hex])

        // Addressable: per `d`.
        let listA1 = try TestEvents.sign(kind: 30_000, content: "a1", tags: [["d", "a"]], createdAt: now - 10, keys: alice)
        let listA2 = try TestEvents.sign(kind: 30_000, content: "a2", tags: [["d", "a"]], createdAt: now - 5, keys: alice)
        let listB = try TestEvents.sign(kind: 30_000, content: "b", tags: [["d", "b"]], createdAt: now - 10, keys: alice)
        for event in [listA1, listB, listA2] { let outcome = try await save(event); XCTAssertEqual(outcome, .stored) }
        let got9 = try await query([Filter(kinds: [30_000])])
        XCTAssertEqual(Set(got9), [listA2.id.hex, listB.id.hex])
        let got10 = try await query([Filter(kinds: [30_000], tags: ["d": ["a"]])])
        XCTAssertEqual(got10, [listA2.id.hex])

        // Tag filters, limit and order (newest first), multiple filters merged.
        let notes = try (0..<5).map { i in
            try TestEvents.sign(kind: 1, content: "n\(i)", tags: [["h", i.isMultiple(of: 2) ? "even" : "odd"], ["p", bob.publicKey.hex]], createdAt: now - 100 + Int64(i), keys: alice)
        }
        for note in notes { let outcome = try await save(note); XCTAssertEqual(outcome, .stored) }
        let got11 = try await query([Filter(kinds: [1], tags: ["h": ["even"]])])
        XCTAssertEqual(got11, [notes[4], notes[2], notes[0]].map(\.id.hex))
        let got12 = try await query([Filter(kinds: [1], limit: 2, tags: ["h": ["even"], "p": [bob.publicKey.hex]])])
        XCTAssertEqual(got12, [notes[4], notes[2]].map(\.id.hex))
        let got13 = try await query([Filter(kinds: [1])], limit: 3).count
        XCTAssertEqual(got13, 3, "the relay's cap applies")
        let got14 = try await query([Filter(kinds: [1], since: now - 98, until: now - 97)])
        XCTAssertEqual(got14, [notes[3], notes[2]].map(\.id.hex))
        let got15 = try await query([Filter(ids: [notes[0].id]), Filter(ids: [notes[1].id])])
        XCTAssertEqual(got15, [notes[1], notes[0]].map(\.id.hex))
        let got16 = try await query([Filter(ids: [])])
        XCTAssertEqual(got16, [])

        // Gift wraps: only to a key their `p` names.
        let wrap = try TestEvents.sign(kind: 1059, content: "sealed", tags: [["p", bob.publicKey.hex]], keys: TestEvents.keys())
        let got17 = try await save(wrap)
        XCTAssertEqual(got17, .stored)
        let got18 = try await query([Filter(tags: ["p": [bob.publicKey.hex]])]).contains(wrap.id.hex)
        XCTAssertEqual(got18, false)
        let got19 = try await query([Filter(kinds: [1059])], as: [alice.publicKey.hex])
        XCTAssertEqual(got19, [])
        let got20 = try await query([Filter(kinds: [1059])], as: [bob.publicKey.hex])
        XCTAssertEqual(got20, [wrap.id.hex])

        // NIP-09: own events by id and by address; others' untouched; no way back.
        let bobsNote = try TestEvents.sign(kind: 1, content: "bob", keys: bob)
        let got21 = try await save(bobsNote)
        XCTAssertEqual(got21, .stored)
        let deletion = try TestEvents.sign(kind: 5, tags: [["e", notes[0].id.hex], ["e", bobsNote.id.hex], ["a", "30000:\(alice.publicKey.hex):a"]], keys: alice)
        let got22 = try await save(deletion)
        XCTAssertEqual(got22, .stored)
        let got23 = try await query([Filter(ids: [notes[0].id, bobsNote.id, listA2.id, listB.id])]).sorted()
        XCTAssertEqual(got23, [bobsNote.id.hex, listB.id.hex].sorted())
        let got24 = try await save(notes[0])
        XCTAssertEqual(got24, .deleted)
        let got25 = try await save(listA1)
        XCTAssertEqual(got25, .deleted, "older versions of a deleted address stay deleted")
        let listA3 = try TestEvents.sign(kind: 30_000, content: "a3", tags: [["d", "a"]], createdAt: now + 5, keys: alice)
        let got26 = try await save(listA3)
        XCTAssertEqual(got26, .stored, "a newer version after the deletion is fine")
        let got27 = try await query([Filter(kinds: [5])])
        XCTAssertEqual(got27, [deletion.id.hex], "deletions are served")

        // NIP-40 and retention.
        let soon = try TestEvents.sign(kind: 1, tags: [["expiration", "\(now + 1)"]], keys: bob)
        let old445 = try TestEvents.sign(kind: 445, createdAt: now - 10_000, keys: bob)
        let got28 = try await save(soon)
        XCTAssertEqual(got28, .stored)
        let got29 = try await save(old445)
        XCTAssertEqual(got29, .stored)
        let got30 = try await store.run { try EventStore.query([Filter(ids: [soon.id])], limit: 10, now: now + 2, authenticated: [], in: $0) }.count
        XCTAssertEqual(got30, 0,
                       "an expired event is never served, even before the purge")
        let purged = try await store.run { try EventStore.purge(now: now + 2, retention: [.init(kinds: [445], maxAgeSeconds: 3600)], in: $0) }
        XCTAssertEqual(purged, 2)

        // Everything survives closing and reopening.
        let before = try await store.run { try EventStore.count(in: $0) }
        store.close()
        do {
            _ = try await store.run { try EventStore.count(in: $0) }
            XCTFail("a closed store answered")
        } catch RelayServerError.storeClosed {}
        store = try EventStore(directory: directory.path)
        let got31 = try await store.run { try EventStore.count(in: $0) }
        XCTAssertEqual(got31, before)
        let got32 = try await query([Filter(kinds: [0])])
        XCTAssertEqual(got32, [profile2.id.hex])
        let got33 = try await save(notes[0])
        XCTAssertEqual(got33, .deleted, "deletions are remembered")
        store.close()
    }
}
