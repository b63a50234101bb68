import Nostr
import TestSupport
import XCTest

/// NIP-01/NIP-42 wire messages: typed decoding of untrusted relay text, and client messages.
final class RelayMessageTests: XCTestCase {
    func testDecodesEveryRelayMessageType() throws {
        let keys = TestEvents.keys()
        let event = try TestEvents.sign(kind: 1, content: "hi \"there\"\n", tags: [["p", keys.publicKey.hex]], keys: keys)

        let decoded = try RelayMessage(json: "[\"EVENT\",\"sub-1\",\(event.jsonString)]")
        guard case .event(let subscriptionID, let unverified) = decoded else { return XCTFail("\(decoded)") }
        XCTAssertEqual(subscriptionID, "sub-1")
        XCTAssertEqual(try unverified.verified(), event)

        XCTAssertEqual(try RelayMessage(json: "[\"OK\",\"\(event.id.hex)\",true,\"\"]"),
                       .ok(eventID: event.id, accepted: true, message: ""))
        XCTAssertEqual(try RelayMessage(json: "[\"OK\",\"\(event.id.hex)\",false,\"duplicate: have it\"]"),
                       .ok(eventID: event.id, accepted: false, message: "duplicate: have it"))
        // nostr-relay answers some refusals with an empty id.
        XCTAssertEqual(try RelayMessage(json: "[\"OK\",\"\",false,\"invalid: bad\"]"),
                       .ok(eventID: nil, accepted: false, message: "invalid: bad"))
        XCTAssertEqual(try RelayMessage(json: " [\"EOSE\", \"s\"] "), .eose(subscriptionID: "s"))
        XCTAssertEqual(try RelayMessage(json: "[\"CLOSED\",\"s\",\"auth-required: you must auth\"]"),
                       .closed(subscriptionID: "s", message: "auth-required: you must auth"))
        XCTAssertEqual(try RelayMessage(json: "[\"CLOSED\",\"s\"]"), .closed(subscriptionID: "s", message: ""))
        XCTAssertEqual(try RelayMessage(json: "[\"NOTICE\",\"slow down\"]"), .notice("slow down"))
        XCTAssertEqual(try RelayMessage(json: "[\"AUTH\",\"c0ffee\"]"), .auth(challenge: "c0ffee"))
    }

    func testRelayMessagesRoundTrip() throws {
        let keys = TestEvents.keys()
        let event = try TestEvents.sign(content: "line\nbreak / slash \u{1F600}", keys: keys)
        let messages: [RelayMessage] = [
            .event(subscriptionID: "a", event: event.unverified),
            .ok(eventID: event.id, accepted: false, message: "blocked: no"),
            .ok(eventID: nil, accepted: true, message: ""),
            .eose(subscriptionID: "a"),
            .closed(subscriptionID: "a", message: "error: x"),
            .notice("n"),
            .auth(challenge: "ch"),
        ]
        for message in messages {
            XCTAssertEqual(try RelayMessage(json: message.jsonString), message, message.jsonString)
        }
    }

    /// Anything that is not a NIP-01 relay message is a typed `NostrError`, never a crash.
    func testRejectsMalformedAndGarbage() throws {
        let keys = TestEvents.keys()
        let event = try TestEvents.sign(keys: keys)
        let deep = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        let cases: [(String, String)] = [
            ("", "empty"),
            ("not json", "text"),
            ("[\"EOSE\",\"s\"", "truncated"),
            ("{}", "object"),
            ("\"EOSE\"", "string"),
            ("[]", "empty array"),
            ("[1,2,3]", "numeric type"),
            ("[null]", "null type"),
            ("[\"UNKNOWN\",\"x\"]", "unknown type"),
            ("[\"EOSE\"]", "EOSE without id"),
            ("[\"EOSE\",5]", "EOSE numeric id"),
            ("[\"EOSE\",\"a\",\"b\"]", "EOSE extra element"),
            ("[\"EVENT\",\"s\"]", "EVENT without event"),
            ("[\"EVENT\",5,\(event.jsonString)]", "EVENT numeric id"),
            ("[\"EVENT\",\"s\",{}]", "EVENT empty object"),
            ("[\"EVENT\",\"s\",[1]]", "EVENT array event"),
            ("[\"EVENT\",\"s\",\(event.jsonString.replacingOccurrences(of: "\"kind\":1", with: "\"kind\":\"1\""))]", "kind as string"),
            ("[\"EVENT\",\"s\",\(event.jsonString.replacingOccurrences(of: "\"content\"", with: "\"contents\""))]", "missing content"),
            ("[\"OK\",\"zz\",true,\"\"]", "OK bad id"),
            ("[\"OK\",\"\(event.id.hex.uppercased())\",true,\"\"]", "OK uppercase id"),
            ("[\"OK\",\"\(event.id.hex)\",\"yes\",\"\"]", "OK accepted not bool"),
            ("[\"OK\",\"\(event.id.hex)\",true]", "OK without message"),
            ("[\"OK\",\"\(event.id.hex)\",true,5]", "OK numeric message"),
            ("[\"CLOSED\"]", "CLOSED without id"),
            ("[\"NOTICE\",{}]", "NOTICE object"),
            ("[\"AUTH\",1]", "AUTH numeric challenge"),
            ("[\"AUTH\",\"a\",\"b\"]", "AUTH extra"),
            ("[\"EOSE\",\"a\",]", "trailing comma"),
            ("[\"EOSE\",\"\\ud800\"]", "lone surrogate"),
            (deep, "deep nesting"),
        ]
        for (text, label) in cases {
            XCTAssertThrowsError(try RelayMessage(json: text), label) { error in
                XCTAssertTrue(error is NostrError, "\(label): \(error)")
            }
        }
    }

    func testEventStaysUnverifiedUntilChecked() throws {
        let keys = TestEvents.keys()
        let event = try TestEvents.sign(content: "original", keys: keys)
        let forgedContent = try TestEvents.tampered(event, field: "content", value: "forged")
        let forgedSig = try TestEvents.tampered(event, field: "sig", value: String(repeating: "0", count: 128))

        guard case .event(_, let a) = try RelayMessage(json: "[\"EVENT\",\"s\",\(forgedContent)]"),
              case .event(_, let b) = try RelayMessage(json: "[\"EVENT\",\"s\",\(forgedSig)]") else {
            return XCTFail("tampered events still decode as EVENT messages")
        }
        XCTAssertThrowsError(try a.verified()) { XCTAssertEqual($0 as? NostrError, .idMismatch) }
        XCTAssertThrowsError(try b.verified()) { XCTAssertEqual($0 as? NostrError, .invalidSignature) }
    }

    func testClientMessagesSerialize() throws {
        let keys = TestEvents.keys()
        let event = try TestEvents.sign(content: "x", keys: keys)
        XCTAssertEqual(ClientMessage.event(event).jsonString, "[\"EVENT\",\(event.jsonString)]")
        XCTAssertEqual(ClientMessage.auth(event).jsonString, "[\"AUTH\",\(event.jsonString)]")
        XCTAssertEqual(ClientMessage.close(subscriptionID: "s\"1").jsonString, "[\"CLOSE\",\"s\\\"1\"]")

        let filter = Filter(authors: [keys.publicKey], kinds: [1, 1059], since: 10, until: 20, limit: 5,
                            tags: ["p": [keys.publicKey.hex], "h": ["g"]])
        let req = ClientMessage.req(subscriptionID: "sub", filters: [filter, Filter(kinds: [0])]).jsonString
        let parsed = try JSONValue.parse(req)
        guard case .array(let elements) = parsed, elements.count == 4 else { return XCTFail(req) }
        XCTAssertEqual(elements[0], .string("REQ"))
        XCTAssertEqual(elements[1], .string("sub"))
        XCTAssertEqual(try Filter(jsonValue: elements[2]), filter)
        XCTAssertEqual(try Filter(jsonValue: elements[3]), Filter(kinds: [0]))
    }

    func testMachineReadablePrefixes() {
        XCTAssertEqual(RelayReason.prefix(of: "auth-required: you must auth"), "auth-required")
        XCTAssertTrue(RelayReason.isAuthRequired("auth-required: x"))
        XCTAssertEqual(RelayReason.prefix(of: "duplicate: already have this event"), "duplicate")
        XCTAssertNil(RelayReason.prefix(of: "no prefix here"))
        XCTAssertNil(RelayReason.prefix(of: "Weird Prefix: x"))
        XCTAssertNil(RelayReason.prefix(of: ": empty"))
        XCTAssertFalse(RelayReason.isAuthRequired(""))
    }
}
