import Foundation
import Marmot
import Nostr
import XCTest
import TestSupport

/// Inner application events: MDK's author binding, Whistle's payloads and the builders.
final class InnerEventTests: XCTestCase {
    var rng = SplitMix64(seed: 9)
    lazy var alice = Keys.generate(using: &rng).publicKey
    lazy var bob = Keys.generate(using: &rng).publicKey
    let now: Int64 = 1_800_000_000

    // MARK: Rumor and author

    func testChatRoundTripAndAuthorBinding() throws {
        let rumor = try InnerEvent.chat("Hello from Burrow / \"quoted\" ✓", author: alice, createdAt: now)
        XCTAssertEqual(rumor.kind, 9)
        XCTAssertEqual(rumor.tags, [])
        // rust-nostr member order, no sig, no escaped slash.
        XCTAssertTrue(rumor.jsonString.hasPrefix("{\"id\":\"\(rumor.id.hex)\",\"pubkey\":\"\(alice.hex)\",\"created_at\":\(now),\"kind\":9,\"tags\":[],\"content\":"))
        XCTAssertTrue(rumor.jsonString.contains("Burrow / \\\"quoted\\\""))
        XCTAssertFalse(rumor.jsonString.contains("sig"))

        let verified = try InnerEvent.verify(applicationData: rumor.jsonBytes, senderIdentity: alice.bytes)
        XCTAssertEqual(verified.rumor, rumor)
        XCTAssertEqual(verified.sender, alice)
        XCTAssertEqual(try verified.content(), .chat(.text("Hello from Burrow / \"quoted\" ✓")))

        XCTAssertThrowsMarmot(.exactly(.innerEventAuthorMismatch), try InnerEvent.verify(applicationData: rumor.jsonBytes, senderIdentity: bob.bytes))
        XCTAssertThrowsMarmot(.exactly(.innerEventAuthorMismatch),
                              try InnerEvent.verify(applicationData: rumor.jsonBytes, senderIdentity: Array(alice.hex.utf8)))
    }

    func testMalformedRumors() throws {
        let rumor = try InnerEvent.chat("hi", author: alice, createdAt: now)
        let json = rumor.jsonString
        func verify(_ text: String) throws -> VerifiedInnerEvent {
            try InnerEvent.verify(applicationData: Array(text.utf8), senderIdentity: alice.bytes)
        }
        XCTAssertThrowsMarmot(.exactly(.innerEventInvalid(.idMismatch)), try verify(json.replacingOccurrences(of: "\"hi\"", with: "\"ho\"")))
        XCTAssertThrowsMarmot(.exactly(.innerEventInvalid(.rumorSigned)), try verify(String(json.dropLast()) + ",\"sig\":\"00\"}"))
        XCTAssertThrowsMarmot(.matching("json") { if case .innerEventInvalid(.malformedJSON) = $0 { return true } else { return false } },
                              try verify("hello"))
        XCTAssertThrowsMarmot(.exactly(.innerEventInvalid(.missingField("id"))),
                              try verify(json.replacingOccurrences(of: "\"id\":\"\(rumor.id.hex)\",", with: "")))
        XCTAssertThrowsMarmot(.matching("json") { if case .innerEventInvalid(.malformedJSON) = $0 { return true } else { return false } },
                              try InnerEvent.verify(applicationData: [0xFF, 0xFE], senderIdentity: alice.bytes))
    }

    /// The chat message of the nostrc MDK capture, rebuilt as Alice's rumor.
    func testProtocolVectorChatMessage() throws {
        let lifecycle = try XCTUnwrap(try TestData.protocolVectors()["group_lifecycle"] as? [String: Any])
        let step = try XCTUnwrap((lifecycle["steps"] as? [[String: Any]])?.last)
        let author = try PublicKey(hex: try XCTUnwrap(step["message_pubkey"] as? String))
        let rumor = try InnerEvent.chat(try XCTUnwrap(step["message_content"] as? String), author: author, createdAt: now)
        XCTAssertEqual(rumor.kind, step["message_kind"] as? Int)
        let verified = try InnerEvent.verify(applicationData: rumor.jsonBytes, senderIdentity: author.bytes)
        XCTAssertEqual(try verified.content(), .chat(.text("Hello from Alice!")))
    }

    // MARK: Chat family

    func testChatClassification() throws {
        let cases: [(String, ChatContent)] = [
            ("plain text", .text("plain text")),
            ("", .text("")),
            ("{not json", .text("{not json")),
            ("[\"type\",\"chat\"]", .text("[\"type\",\"chat\"]")),
            ("{\"text\":\"no type\"}", .text("{\"text\":\"no type\"}")),
            ("{\"type\":7,\"text\":\"x\"}", .text("{\"type\":7,\"text\":\"x\"}")),
            ("{\"type\":\"chat\",\"text\":\"Hello!\",\"ts\":1700000000,\"v\":1}",
             .chat(.init(value: "Hello!", timestamp: 1_700_000_000))),
            ("{ \"v\": 1, \"ts\": 1700000001, \"text\": \"order free\", \"type\": \"chat\", \"extra\": true }",
             .chat(.init(value: "order free", timestamp: 1_700_000_001))),
            ("{\"type\":\"nickname\",\"name\":\"Dad\",\"ts\":1700000000,\"v\":1}", .nickname(.init(value: "Dad", timestamp: 1_700_000_000))),
            ("{\"type\":\"avatar\",\"img\":\"/9j/4AAQ\",\"ts\":1700000000,\"v\":1}", .avatar(.init(value: "/9j/4AAQ", timestamp: 1_700_000_000))),
            ("{\"type\":\"avatar\",\"img\":\"\",\"ts\":1700000000,\"v\":1}", .avatar(.init(value: "", timestamp: 1_700_000_000))),
            ("{\"type\":\"group_avatar\",\"img\":\"abc=\",\"ts\":1,\"v\":2}", .groupAvatar(.init(value: "abc=", timestamp: 1, version: 2))),
            ("{\"type\":\"poll\",\"q\":\"?\"}", .unknownType("poll")),
        ]
        for (content, expected) in cases {
            XCTAssertEqual(try ChatContent(parsing: content), expected, content)
        }
        XCTAssertEqual(try ChatContent(parsing: "hi").chatText, "hi")
        XCTAssertEqual(try ChatContent(parsing: cases[6].0).chatText, "Hello!")
        XCTAssertNil(try ChatContent(parsing: cases[8].0).chatText)
        XCTAssertNil(try ChatContent(parsing: cases[12].0).chatText)
    }

    func testMalformedWhistleChatPayloads() {
        XCTAssertThrowsMarmot(.invalidPayload("text"), try ChatContent(parsing: "{\"type\":\"chat\",\"ts\":1,\"v\":1}"))
        XCTAssertThrowsMarmot(.invalidPayload("text"), try ChatContent(parsing: "{\"type\":\"chat\",\"text\":5,\"ts\":1,\"v\":1}"))
        XCTAssertThrowsMarmot(.invalidPayload("ts"), try ChatContent(parsing: "{\"type\":\"chat\",\"text\":\"x\",\"ts\":\"1\",\"v\":1}"))
        XCTAssertThrowsMarmot(.invalidPayload("ts"), try ChatContent(parsing: "{\"type\":\"chat\",\"text\":\"x\",\"ts\":1.5,\"v\":1}"))
        XCTAssertThrowsMarmot(.invalidPayload("v"), try ChatContent(parsing: "{\"type\":\"nickname\",\"name\":\"x\",\"ts\":1}"))
        XCTAssertThrowsMarmot(.invalidPayload("img"), try ChatContent(parsing: "{\"type\":\"avatar\",\"img\":null,\"ts\":1,\"v\":1}"))
    }

    func testChatContentSerialization() throws {
        for value in [ChatContent.text("plain"), .chat(.init(value: "a \"b\" / c", timestamp: 5)), .nickname(.init(value: "Mum", timestamp: 6)),
                      .avatar(.init(value: "", timestamp: 7)), .groupAvatar(.init(value: "eA==", timestamp: 8)), .unknownType("poll")] {
            XCTAssertEqual(try ChatContent(parsing: value.content), value)
        }
        XCTAssertEqual(ChatContent.nickname(.init(value: "Dad", timestamp: 1_700_000_000)).content,
                       "{\"type\":\"nickname\",\"name\":\"Dad\",\"ts\":1700000000,\"v\":1}")
    }

    // MARK: Location

    func testLocationBuilderAsCLIDescribes() throws {
        let payload = try LocationPayload(latitude: 52.52, longitude: 13.405, timestamp: now)
        XCTAssertEqual(payload.json, "{\"type\":\"location\",\"lat\":52.52,\"lon\":13.405,\"alt\":0.0,\"acc\":0.0,\"ts\":1800000000,\"interval\":3600,\"v\":1}")
        let full = try LocationPayload(latitude: -33.8688, longitude: 151.2093, altitude: 58, accuracy: 4.5, timestamp: now, battery: 87)
        XCTAssertEqual(full.json, "{\"type\":\"location\",\"lat\":-33.8688,\"lon\":151.2093,\"alt\":58.0,\"acc\":4.5,\"ts\":1800000000,\"batt\":87,\"interval\":3600,\"v\":1}")
        let rumor = try InnerEvent.location(full, author: alice, createdAt: now)
        XCTAssertEqual(rumor.kind, 1)
        let verified = try InnerEvent.verify(applicationData: rumor.jsonBytes, senderIdentity: alice.bytes)
        XCTAssertEqual(try verified.content(), .location(full))
        // Whatever the builder writes parses back to the same value.
        let still = try LocationPayload(latitude: 0.1, longitude: -0.1, timestamp: 0, interval: 60, stationary: true)
        XCTAssertEqual(try LocationPayload(json: still.json), still)
        XCTAssertTrue(still.json.contains("\"stationary\":true"))
    }

    func testWhistleLocationPayloads() throws {
        // WhistleCore's documented example, spacing and all.
        let whistle = try LocationPayload(json: """
        { "type": "location", "lat": 0.0, "lon": 0.0, "alt": 0.0, "acc": 10.0,
          "ts": 1700000000, "batt": 87, "interval": 3600, "v": 1 }
        """)
        XCTAssertEqual(whistle.accuracy, 10)
        XCTAssertEqual(whistle.battery, 87)
        XCTAssertEqual(whistle.interval, 3600)
        XCTAssertNil(whistle.stationary)
        // Pre-1.2.1 (no interval), integer coordinates, null battery, key order free, unknown keys.
        let old = try LocationPayload(json: "{\"v\":1,\"ts\":1700000000,\"acc\":5,\"alt\":-3,\"lon\":2,\"lat\":1,\"type\":\"location\",\"batt\":null,\"heading\":90}")
        XCTAssertEqual(old.latitude, 1)
        XCTAssertEqual(old.altitude, -3)
        XCTAssertNil(old.battery)
        XCTAssertNil(old.interval)
        XCTAssertEqual(try LocationPayload(json: "{\"type\":\"location\",\"lat\":1,\"lon\":2,\"alt\":0,\"acc\":1,\"ts\":5,\"stationary\":false,\"v\":1}").stationary, false)
    }

    func testLocationStrictTypesAndRanges() throws {
        let base: [String: String] = ["type": "\"location\"", "lat": "1.5", "lon": "2.5", "alt": "0", "acc": "3", "ts": "1700000000", "v": "1"]
        func payload(_ changes: [String: String?]) -> String {
            var fields = base
            for (key, value) in changes { fields[key] = value }
            return "{" + fields.sorted { $0.key < $1.key }.map { "\"\($0.key)\":\($0.value)" }.joined(separator: ",") + "}"
        }
        XCTAssertNoThrow(try LocationPayload(json: payload([:])))
        let cases: [([String: String?], String)] = [
            (["type": "\"chat\""], "type"), (["type": nil], "type"), (["type": "1"], "type"),
            (["lat": "\"52.5\""], "lat"), (["lat": nil], "lat"), (["lat": "90.0001"], "lat"), (["lat": "-91"], "lat"), (["lat": "true"], "lat"),
            (["lon": "180.5"], "lon"), (["lon": "null"], "lon"),
            (["alt": nil], "alt"), (["alt": "\"0\""], "alt"),
            (["acc": "-1"], "acc"), (["acc": nil], "acc"),
            (["ts": "1700000000.5"], "ts"), (["ts": "\"1700000000\""], "ts"), (["ts": nil], "ts"), (["ts": "-1"], "ts"),
            (["batt": "101"], "batt"), (["batt": "-1"], "batt"), (["batt": "87.5"], "batt"), (["batt": "\"87\""], "batt"),
            (["interval": "0"], "interval"), (["interval": "3600.0"], "interval"),
            (["stationary": "\"yes\""], "stationary"), (["stationary": "1"], "stationary"),
            (["v": nil], "v"), (["v": "1.0"], "v"),
        ]
        for (change, field) in cases {
            XCTAssertThrowsMarmot(.invalidPayload(field), try LocationPayload(json: payload(change)))
        }
        XCTAssertThrowsMarmot(.invalidPayload("content"), try LocationPayload(json: "[1,2]"))
        XCTAssertThrowsMarmot(.invalidPayload("content"), try LocationPayload(json: "lat=1"))
        XCTAssertThrowsMarmot(.invalidPayload("lat"), try LocationPayload(latitude: .nan, longitude: 0, timestamp: 0))
        XCTAssertThrowsMarmot(.invalidPayload("batt"), try LocationPayload(latitude: 0, longitude: 0, timestamp: 0, battery: 200))
        XCTAssertThrowsMarmot(.invalidPayload("lat"), try InnerEvent.verify(
            applicationData: try Rumor(pubkey: alice, createdAt: now, kind: 1, content: payload(["lat": "95"])).jsonBytes,
            senderIdentity: alice.bytes).content())
    }

    func testStaleness() throws {
        let payload = try LocationPayload(latitude: 0, longitude: 0, timestamp: 1000, interval: 60)
        XCTAssertFalse(payload.isStale(now: 1120))
        XCTAssertTrue(payload.isStale(now: 1121))
        var legacy = payload
        legacy.interval = nil
        XCTAssertFalse(legacy.isStale(now: 1000 + 7200))
        XCTAssertTrue(legacy.isStale(now: 1000 + 7201))
        legacy.interval = .max  // hostile interval: no overflow trap
        XCTAssertFalse(legacy.isStale(now: .max))
        legacy.timestamp = .min
        XCTAssertFalse(legacy.isStale(now: .max))
    }

    // MARK: Other kinds

    func testLeaveReactionDeletionAndOtherKinds() throws {
        let leave = try InnerEvent.leaveRequest(author: alice, createdAt: now)
        XCTAssertEqual(leave.kind, 2)
        XCTAssertEqual(leave.content, "")
        XCTAssertEqual(try InnerEvent.verify(applicationData: leave.jsonBytes, senderIdentity: alice.bytes).content(), .leaveRequest)

        let target = try InnerEvent.chat("x", author: bob, createdAt: now).id
        func content(kind: Int, tags: [[String]], text: String = "") throws -> InnerContent {
            let rumor = try Rumor(pubkey: alice, createdAt: now, kind: kind, tags: tags, content: text)
            return try InnerEvent.verify(applicationData: rumor.jsonBytes, senderIdentity: alice.bytes).content()
        }
        guard case .reaction(let reaction) = try content(kind: 7, tags: [["e", target.hex], ["p", bob.hex], ["e", String(repeating: "0", count: 64)]], text: "👍") else {
            return XCTFail("not a reaction")
        }
        XCTAssertEqual(reaction.emoji, "👍")
        XCTAssertEqual(reaction.target, target)
        XCTAssertThrowsMarmot(.invalidPayload("e"), try content(kind: 7, tags: [["p", bob.hex]], text: "+"))
        XCTAssertThrowsMarmot(.invalidPayload("e"), try content(kind: 7, tags: [["e", "abc"]], text: "+"))

        guard case .deletion(let deletion) = try content(kind: 5, tags: [["e", target.hex], ["e", leave.id.hex]], text: "oops") else {
            return XCTFail("not a deletion")
        }
        XCTAssertEqual(deletion.targets, [target, leave.id])
        XCTAssertEqual(deletion.reason, "oops")
        XCTAssertThrowsMarmot(.invalidPayload("e"), try content(kind: 5, tags: []))
        XCTAssertThrowsMarmot(.invalidPayload("e"), try content(kind: 5, tags: [["e", target.hex], ["e"]]))

        XCTAssertEqual(try content(kind: 1059, tags: []), .other(kind: 1059))
    }
}
