import TestSupport
import XCTest
@testable import Nostr

final class NIP44Tests: XCTestCase {
    private func vectors() throws -> JSONValue {
        try XCTUnwrap(JSONValue.parse([UInt8](Fixtures.data("nip44/nip44.vectors.json")))["v2"])
    }

    func testRoundTripBothDirections() throws {
        var rng = SplitMix64(seed: 21)
        let alice = Keys.generate(using: &rng), bob = Keys.generate(using: &rng)
        let ab = try NIP44.conversationKey(secretKey: alice.secretKey, publicKey: bob.publicKey)
        let ba = try NIP44.conversationKey(secretKey: bob.secretKey, publicKey: alice.publicKey)
        XCTAssertEqual(ab, ba)
        for text in ["a", "hello 🐇", String(repeating: "x", count: 65_535)] {
            let payload = try NIP44.encrypt(plaintext: text, conversationKey: ab, using: &rng)
            XCTAssertEqual(try NIP44.decrypt(payload: payload, conversationKey: ba), text)
        }
        let one = try NIP44.encrypt(plaintext: "same", conversationKey: ab, using: &rng)
        let two = try NIP44.encrypt(plaintext: "same", conversationKey: ab, using: &rng)
        XCTAssertNotEqual(one, two, "each message draws a fresh nonce")
    }

    func testPaddedLengths() {
        let expected = [(1, 32), (32, 32), (33, 64), (64, 64), (65, 96), (256, 256), (257, 320), (1000, 1024),
                        (65_535, 65_536)]
        for (length, padded) in expected { XCTAssertEqual(NIP44.calcPaddedLength(length), padded, "\(length)") }
    }

    func testTamperingAndWrongKeyFailWithInvalidMAC() throws {
        var rng = SplitMix64(seed: 22)
        let key = try NIP44.ConversationKey(bytes: rng.bytes(32))
        let other = try NIP44.ConversationKey(bytes: rng.bytes(32))
        let payload = try NIP44.encrypt(plaintext: "secret plan", conversationKey: key, using: &rng)
        XCTAssertThrowsError(try NIP44.decrypt(payload: payload, conversationKey: other)) {
            XCTAssertEqual($0 as? NostrError, .nip44InvalidMAC)
        }
        var chars = Array(payload)
        chars[60] = chars[60] == "A" ? "B" : "A"
        XCTAssertThrowsError(try NIP44.decrypt(payload: String(chars), conversationKey: key)) {
            XCTAssertEqual($0 as? NostrError, .nip44InvalidMAC)
        }
    }

    func testInvalidDecryptVectorsGiveTheirSpecificErrors() throws {
        let cases = try XCTUnwrap(vectors()["invalid"]?["decrypt"]?.arrayValue)
        XCTAssertEqual(cases.count, 12)
        for entry in cases {
            let note = try XCTUnwrap(entry["note"]?.stringValue)
            let key = try NIP44.ConversationKey(bytes: Hex.decode(XCTUnwrap(entry["conversation_key"]?.stringValue)))
            XCTAssertThrowsError(try NIP44.decrypt(payload: XCTUnwrap(entry["payload"]?.stringValue), conversationKey: key)) {
                let error = $0 as? NostrError
                switch note {
                case let n where n.hasPrefix("unknown encryption version"):
                    guard case .nip44UnknownVersion? = error else { return XCTFail("\(note): \($0)") }
                case "invalid base64": XCTAssertEqual(error, .nip44InvalidBase64, note)
                case "invalid MAC": XCTAssertEqual(error, .nip44InvalidMAC, note)
                case "invalid padding": XCTAssertEqual(error, .nip44InvalidPadding, note)
                case let n where n.hasPrefix("invalid payload length"):
                    guard case .nip44InvalidPayloadLength? = error else { return XCTFail("\(note): \($0)") }
                default: XCTFail("unexpected note \(note)")
                }
            }
        }
    }

    func testBadArguments() throws {
        var rng = SplitMix64(seed: 23)
        let key = try NIP44.ConversationKey(bytes: rng.bytes(32))
        XCTAssertThrowsError(try NIP44.encrypt(plaintext: "", conversationKey: key, using: &rng)) {
            XCTAssertEqual($0 as? NostrError, .nip44PlaintextLength(0))
        }
        XCTAssertThrowsError(try NIP44.encrypt(plaintext: String(repeating: "a", count: 65_536), conversationKey: key, using: &rng)) {
            XCTAssertEqual($0 as? NostrError, .nip44PlaintextLength(65_536))
        }
        XCTAssertThrowsError(try NIP44.encrypt(plaintext: "a", conversationKey: key, nonce: [1])) {
            XCTAssertEqual($0 as? NostrError, .nip44InvalidNonceLength(1))
        }
        XCTAssertThrowsError(try NIP44.ConversationKey(bytes: [1, 2])) {
            XCTAssertEqual($0 as? NostrError, .nip44InvalidConversationKeyLength(2))
        }
        XCTAssertThrowsError(try NIP44.decrypt(payload: String(repeating: "!", count: 200), conversationKey: key)) {
            XCTAssertEqual($0 as? NostrError, .nip44InvalidBase64)
        }
    }
}
