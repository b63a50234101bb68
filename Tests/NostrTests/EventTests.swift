import Foundation
import TestSupport
import XCTest
@testable import Nostr

final class EventTests: XCTestCase {
    private func fixtureEntries(_ key: String) throws -> [[String: Any]] {
        let root = try JSONSerialization.jsonObject(with: Fixtures.data("nostr/nip01-events.json")) as? [String: Any]
        return try XCTUnwrap(root?[key] as? [[String: Any]])
    }

    /// The event object re-encoded by Foundation (which writes `\/`), so our parser sees a
    /// different spelling of the same JSON than our serializer produces.
    private func eventBytes(_ entry: [String: Any]) throws -> [UInt8] {
        [UInt8](try JSONSerialization.data(withJSONObject: try XCTUnwrap(entry["event"])))
    }

    func testValidFixtureEventsVerifyAndSerializeCanonically() throws {
        let entries = try fixtureEntries("valid")
        XCTAssertEqual(entries.count, 11)
        for entry in entries {
            let unverified = try UnverifiedEvent(json: eventBytes(entry))
            let expected = try XCTUnwrap(entry["serialization"] as? String)
            XCTAssertEqual(String(decoding: unverified.canonicalSerialization, as: UTF8.self), expected)
            let event = try unverified.verified()
            XCTAssertEqual(event.canonicalSerialization, Array(expected.utf8))
            // Our own JSON of the event decodes back to the same verified event.
            XCTAssertEqual(try UnverifiedEvent(json: event.jsonString).verified(), event)
            XCTAssertEqual(try UnverifiedEvent(jsonValue: event.jsonValue).verified(), event)
        }
    }

    func testInvalidFixtureEventsAreRejected() throws {
        let entries = try fixtureEntries("invalid")
        XCTAssertEqual(entries.count, 2)
        for entry in entries {
            let unverified = try UnverifiedEvent(json: eventBytes(entry))
            XCTAssertThrowsError(try unverified.verified()) { XCTAssertEqual($0 as? NostrError, .idMismatch) }
        }
    }

    func testSignedEventRoundTripAndTampering() throws {
        var rng = SplitMix64(seed: 3)
        let keys = Keys.generate(using: &rng)
        let content = "line\nquote\" slash/ tab\t ctl\u{01} ünïcödé 🐇"
        let event = try Event.sign(kind: 1, content: content, tags: [["e", "abc"], ["p", keys.publicKey.hex, "wss://r"]],
                                   createdAt: 1_700_000_000, keys: keys, rng: &rng)
        XCTAssertEqual(event.pubkey, keys.publicKey)
        let decoded = try UnverifiedEvent(json: event.jsonString).verified()
        XCTAssertEqual(decoded, event)
        XCTAssertEqual(decoded.content, content)
        XCTAssertTrue(event.jsonString.hasPrefix("{\"id\":\"\(event.id.hex)\",\"pubkey\":"))

        // Content changed: id no longer matches.
        let changedContent = event.jsonString.replacingOccurrences(of: "🐇", with: "🦊")
        XCTAssertThrowsError(try UnverifiedEvent(json: changedContent).verified()) {
            XCTAssertEqual($0 as? NostrError, .idMismatch)
        }
        // Signature of another event: id matches, signature does not.
        let other = try Event.sign(kind: 1, content: "x", createdAt: 1, keys: keys, rng: &rng)
        let wrongSig = event.jsonString.replacingOccurrences(of: Hex.encode(event.sig), with: Hex.encode(other.sig))
        XCTAssertThrowsError(try UnverifiedEvent(json: wrongSig).verified()) {
            XCTAssertEqual($0 as? NostrError, .invalidSignature)
        }
    }

    func testStrictFieldTypes() throws {
        var rng = SplitMix64(seed: 4)
        let keys = Keys.generate(using: &rng)
        let event = try Event.sign(kind: 7, content: "+", createdAt: 10, keys: keys, rng: &rng)
        guard case .object(let members) = event.jsonValue else { return XCTFail() }
        func replacing(_ key: String, with value: JSONValue?) -> JSONValue {
            .object(members.compactMap { $0.key == key ? value.map { JSONMember(key, $0) } : $0 })
        }
        let cases: [(JSONValue, NostrError)] = [
            (replacing("id", with: .string(event.id.hex.uppercased())), .invalidHex(field: "id", expectedBytes: 32)),
            (replacing("id", with: .string(String(event.id.hex.dropLast(2)))), .invalidHex(field: "id", expectedBytes: 32)),
            (replacing("pubkey", with: .string("ab")), .invalidHex(field: "pubkey", expectedBytes: 32)),
            (replacing("pubkey", with: .string(String(repeating: "0", count: 64))), .invalidPublicKey),
            (replacing("sig", with: .string(String(repeating: "a", count: 126))), .invalidHex(field: "sig", expectedBytes: 64)),
            (replacing("sig", with: nil), .missingField("sig")),
            (replacing("kind", with: .integer(65_536)), .kindOutOfRange(65_536)),
            (replacing("kind", with: .integer(-1)), .kindOutOfRange(-1)),
            (replacing("kind", with: .string("1")), .invalidField("kind", reason: "not an integer")),
            (replacing("created_at", with: .double(1.5)), .invalidField("created_at", reason: "not an integer")),
            (replacing("created_at", with: .integer(-5)), .invalidField("created_at", reason: "negative")),
            (replacing("tags", with: .array([.string("e")])), .invalidField("tags", reason: "a tag is not an array")),
            (replacing("tags", with: .array([.array([.integer(1)])])), .invalidField("tags", reason: "a tag element is not a string")),
            (replacing("content", with: .null), .invalidField("content", reason: "not a string")),
            (.array([]), .expectedObject),
        ]
        for (value, expected) in cases {
            XCTAssertThrowsError(try UnverifiedEvent(jsonValue: value)) { XCTAssertEqual($0 as? NostrError, expected) }
        }
        XCTAssertThrowsError(try UnverifiedEvent(json: "{\"id\":")) {
            guard case .malformedJSON? = $0 as? NostrError else { return XCTFail("\($0)") }
        }
        XCTAssertThrowsError(try Event.sign(kind: 70_000, content: "", createdAt: 0, keys: keys, rng: &rng))
    }

    func testKindClassification() {
        XCTAssertEqual(KindClass(kind: 1), .regular)
        XCTAssertEqual(KindClass(kind: 1059), .regular)
        XCTAssertEqual(KindClass(kind: 0), .replaceable)
        XCTAssertEqual(KindClass(kind: 3), .replaceable)
        XCTAssertEqual(KindClass(kind: 10_051), .replaceable)
        XCTAssertEqual(KindClass(kind: 22_242), .ephemeral)
        XCTAssertEqual(KindClass(kind: 30_443), .addressable)
        XCTAssertEqual(KindClass(kind: 40_000), .regular)
    }

    func testTagsAndExpiration() throws {
        var rng = SplitMix64(seed: 5)
        let keys = Keys.generate(using: &rng)
        let event = try Event.sign(kind: 30_000, content: "", tags: [["d", "list"], ["p", "a"], ["p", "b", "relay"],
                                                                     ["expiration", "1000"], ["x"]],
                                   createdAt: 900, keys: keys, rng: &rng)
        XCTAssertEqual(event.firstTagValue("p"), "a")
        XCTAssertEqual(event.tagValues("p"), ["a", "b"])
        XCTAssertEqual(event.tags(named: "x"), [["x"]])
        XCTAssertEqual(event.identifier, "list")
        XCTAssertEqual(event.expiration, 1000)
        XCTAssertFalse(event.isExpired(now: 1000))
        XCTAssertTrue(event.isExpired(now: 1001))
        let plain = try Event.sign(kind: 1, content: "", tags: [["expiration", "soon"]], createdAt: 1, keys: keys, rng: &rng)
        XCTAssertNil(plain.expiration)
        XCTAssertFalse(plain.isExpired(now: .max))
    }

    func testRumorComputesAndChecksItsID() throws {
        let root = try JSONValue.parse([UInt8](Fixtures.data("nostr/nip59-example.json")))
        let rumorValue = try XCTUnwrap(root["rumor"])
        let rumor = try Rumor(jsonValue: rumorValue)
        XCTAssertEqual(rumor.id.hex, "9dd003c6d3b73b74a85a9ab099469ce251653a7af76f523671ab828acd2a0ef9")
        XCTAssertEqual(try Rumor(pubkey: rumor.pubkey, createdAt: rumor.createdAt, kind: rumor.kind,
                                 tags: rumor.tags, content: rumor.content), rumor)
        XCTAssertEqual(try Rumor(json: rumor.jsonString), rumor)
        XCTAssertTrue(rumor.jsonString.hasPrefix("{\"id\":\"9dd0"))
        XCTAssertTrue(rumor.jsonString.hasSuffix(",\"kind\":1,\"tags\":[],\"content\":\"Are you going to the party tonight?\"}"))

        guard case .object(var members) = rumorValue else { return XCTFail() }
        XCTAssertThrowsError(try Rumor(jsonValue: .object(members + [JSONMember("sig", .string(String(repeating: "0", count: 128)))]))) {
            XCTAssertEqual($0 as? NostrError, .rumorSigned)
        }
        let idIndex = try XCTUnwrap(members.firstIndex { $0.key == "id" })
        members[idIndex].value = .string(String(repeating: "1", count: 64))
        XCTAssertThrowsError(try Rumor(jsonValue: .object(members))) { XCTAssertEqual($0 as? NostrError, .idMismatch) }
        members.remove(at: idIndex)
        XCTAssertThrowsError(try Rumor(jsonValue: .object(members))) { XCTAssertEqual($0 as? NostrError, .missingField("id")) }
    }
}
