import Nostr
import TestSupport
import XCTest

final class NIP42Tests: XCTestCase {
    func testAuthEventNamesRelayAndChallengeAndVerifies() throws {
        let keys = TestEvents.keys()
        var rng = SystemRandomNumberGenerator()
        let event = try NIP42.authEvent(challenge: "abc123", relayURL: "wss://relay.example.com", createdAt: 1_700_000_000, keys: keys, rng: &rng)
        XCTAssertEqual(event.kind, 22242)
        XCTAssertEqual(event.content, "")
        XCTAssertEqual(event.createdAt, 1_700_000_000)
        XCTAssertEqual(event.pubkey, keys.publicKey)
        XCTAssertEqual(event.tags, [["relay", "wss://relay.example.com"], ["challenge", "abc123"]])
        // It survives the wire and re-verification.
        guard case .event(_, let unverified) = try RelayMessage(json: "[\"EVENT\",\"s\",\(event.jsonString)]") else {
            return XCTFail("not an EVENT")
        }
        XCTAssertEqual(try unverified.verified(), event)
        XCTAssertEqual(ClientMessage.auth(event).jsonString, "[\"AUTH\",\(event.jsonString)]")
    }

    func testValidateAcceptsTheRightEventOnly() throws {
        let keys = TestEvents.keys()
        var rng = SystemRandomNumberGenerator()
        let now: Int64 = 1_700_000_000
        let event = try NIP42.authEvent(challenge: "c1", relayURL: "wss://Relay.Example.com/", createdAt: now, keys: keys, rng: &rng)

        XCTAssertEqual(try NIP42.validate(event, challenge: "c1", relayURL: "wss://relay.example.com", now: now + 30), keys.publicKey)
        XCTAssertEqual(try NIP42.validate(event, challenge: "c1", relayURL: "wss://relay.example.com:443", now: now), keys.publicKey)
        XCTAssertThrowsError(try NIP42.validate(event, challenge: "c2", relayURL: "wss://relay.example.com", now: now))
        XCTAssertThrowsError(try NIP42.validate(event, challenge: "c1", relayURL: "wss://other.example.com", now: now))
        XCTAssertThrowsError(try NIP42.validate(event, challenge: "c1", relayURL: "wss://relay.example.com", now: now + 3600))
        let note = try TestEvents.sign(kind: 1, tags: [["relay", "wss://relay.example.com"], ["challenge", "c1"]], createdAt: now, keys: keys)
        XCTAssertThrowsError(try NIP42.validate(note, challenge: "c1", relayURL: "wss://relay.example.com", now: now))
    }
}
