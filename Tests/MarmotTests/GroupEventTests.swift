import Foundation
import MLS
import Nostr
import TestSupport
import XCTest
@testable import Marmot

/// Kind-445 group events: the ChaCha20-Poly1305 envelope, MDK's receiver checks and hostile input.
final class GroupEventTests: XCTestCase {
    let groupID = [UInt8](repeating: 0x46, count: 32)
    let now: Int64 = 1_800_000_000

    func secret(_ byte: UInt8) -> Secret { Secret([UInt8](repeating: byte, count: 32)) }

    /// Any MLSMessage serves as a payload here (the group layer supplies real ones).
    func sampleMessage() throws -> MLSMessage {
        try WelcomeRumor.verify(try TestData.sampleWelcomeRumor()).message
    }

    /// An event signed by a throwaway key with these fields.
    func event(kind: Int = 445, content: String, tags: [[String]], createdAt: Int64? = nil, seed: UInt64 = 1) throws -> Event {
        var rng = SplitMix64(seed: seed)
        return try Event.sign(kind: kind, content: content, tags: tags, createdAt: createdAt ?? now, keys: Keys.generate(using: &rng), rng: &rng)
    }

    // MARK: Real MDK events

    func testMDKSampleEnvelopeValidates() throws {
        let sample = try TestData.sampleGroupEvent()
        let validated = try GroupEvent.validate(sample, now: sample.createdAt)
        XCTAssertEqual(validated.nostrGroupID.hex, sample.firstTagValue("h"))
        XCTAssertEqual(validated.payload.count, 388)
        XCTAssertEqual(validated.event, sample)
        // Without the group's exporter secret nothing opens it.
        XCTAssertThrowsMarmot(.exactly(.groupEventUndecryptable), try validated.decrypt(using: [secret(1), secret(2)]))
        XCTAssertThrowsMarmot(.exactly(.groupEventUndecryptable), try validated.decrypt(using: []))
        // MDK's window around its creation time.
        XCTAssertNoThrow(try GroupEvent.validate(sample, now: sample.createdAt - 300))
        XCTAssertThrowsMarmot(.exactly(.groupEventFromFuture(createdAt: sample.createdAt, now: sample.createdAt - 301)),
                              try GroupEvent.validate(sample, now: sample.createdAt - 301))
        XCTAssertNoThrow(try GroupEvent.validate(sample, now: sample.createdAt + 45 * 86400))
        XCTAssertThrowsMarmot(.exactly(.groupEventTooOld(createdAt: sample.createdAt, now: sample.createdAt + 45 * 86400 + 1)),
                              try GroupEvent.validate(sample, now: sample.createdAt + 45 * 86400 + 1))
    }

    /// The nostrc capture's kind-445 body (tags and content; a fresh signer, as every 445 has).
    func testProtocolVectorEnvelope() throws {
        let steps = try XCTUnwrap((try TestData.protocolVectors()["group_lifecycle"] as? [String: Any])?["steps"] as? [[String: Any]])
        let step = try XCTUnwrap(steps.first { $0["event_kind"] as? Int == 445 })
        let tags = try XCTUnwrap(step["event_tags"] as? [[String]])
        let validated = try GroupEvent.validate(try event(content: try XCTUnwrap(step["event_content"] as? String), tags: tags), now: now)
        XCTAssertEqual(validated.nostrGroupID.hex, "d5ca5b82cb34f2315c96893ebd5dfdeb839f8c4124f3adbff283ac9913686434")
        XCTAssertEqual(validated.payload.count, 396)
    }

    // MARK: Round trips

    func testSealValidateDecrypt() throws {
        var rng = SplitMix64(seed: 445)
        let message = try sampleMessage()
        let sealed = try GroupEvent.seal(message: message, exporterSecret: secret(7), nostrGroupID: groupID, createdAt: now, rng: &rng)
        XCTAssertEqual(sealed.kind, 445)
        XCTAssertEqual(sealed.createdAt, now)
        XCTAssertEqual(sealed.tags, [["h", Hex.encode(groupID)], ["encoding", "base64"]])
        XCTAssertNoThrow(try sealed.unverified.verified())
        let payload = try StrictBase64.decode(sealed.content, field: "content")
        XCTAssertEqual(payload.count, 12 + message.tlsSerialized.count + 16)

        let validated = try GroupEvent.validate(sealed, now: now)
        let opened = try validated.decrypt(using: [secret(1), secret(2), secret(7)])
        XCTAssertEqual(opened.secretIndex, 2)
        XCTAssertEqual(opened.message, message)
        XCTAssertEqual(opened.messageBytes, message.tlsSerialized)
        XCTAssertEqual(opened.nostrGroupID.bytes, groupID)
        XCTAssertEqual(try validated.decrypt(using: [secret(7)]).secretIndex, 0)

        // Every event has its own signer and nonce; the ciphertexts of one message differ.
        let again = try GroupEvent.seal(message: message, exporterSecret: secret(7), nostrGroupID: groupID, createdAt: now, rng: &rng)
        XCTAssertNotEqual(again.pubkey, sealed.pubkey)
        XCTAssertNotEqual(Array(try StrictBase64.decode(again.content, field: "c").prefix(12)), Array(payload.prefix(12)))
        XCTAssertNotEqual(again.content, sealed.content)

        let expiring = try GroupEvent.seal(message: message, exporterSecret: secret(7), nostrGroupID: groupID, createdAt: now,
                                           expiration: now + 86400, rng: &rng)
        XCTAssertEqual(expiring.tags.last, ["expiration", String(now + 86400)])
        XCTAssertEqual(expiring.expiration, now + 86400)
        XCTAssertNoThrow(try GroupEvent.validate(expiring, now: now).decrypt(using: [secret(7)]))
    }

    /// The envelope against an independent ChaCha20-Poly1305 (Python `cryptography`, in the
    /// interop venv): it opens ours with the same key, and we open what it sealed as
    /// base64(nonce ‖ ciphertext ‖ tag) with empty AAD — MDK's `encrypt_message_with_exporter_secret`.
    func testEnvelopeMatchesIndependentChaChaPoly() throws {
        var rng = SplitMix64(seed: 8439)
        let message = try sampleMessage()
        let key = (0..<32).map { UInt8($0) }
        let sealed = try GroupEvent.seal(message: message, exporterSecret: Secret(key), nostrGroupID: groupID, createdAt: now, rng: &rng)
        let script = #"""
        import base64, json, os, sys
        from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
        inp = json.load(sys.stdin)
        aead = ChaCha20Poly1305(bytes.fromhex(inp["key"]))
        raw = base64.b64decode(inp["content"], validate=True)
        opened = aead.decrypt(raw[:12], raw[12:], None)
        nonce = os.urandom(12)
        theirs = base64.b64encode(nonce + aead.encrypt(nonce, bytes.fromhex(inp["plaintext"]), None)).decode()
        print(json.dumps({"opened": opened.hex(), "theirs": theirs}))
        """#
        let raw = try VenvPython.run(script, input: ["key": Hex.encode(key), "content": sealed.content,
                                                     "plaintext": Hex.encode(message.tlsSerialized)])
        let output = try XCTUnwrap(raw as? [String: String])
        XCTAssertEqual(output["opened"], Hex.encode(message.tlsSerialized))
        let theirs = try event(content: try XCTUnwrap(output["theirs"]), tags: [["h", Hex.encode(groupID)], ["encoding", "base64"]])
        XCTAssertEqual(try GroupEvent.validate(theirs, now: now).decrypt(using: [Secret(key)]).message, message)
    }

    // MARK: Hostile and malformed input

    func testTamperingIsDetected() throws {
        var rng = SplitMix64(seed: 9)
        let sealed = try GroupEvent.seal(message: try sampleMessage(), exporterSecret: secret(7), nostrGroupID: groupID, createdAt: now, rng: &rng)
        let payload = try StrictBase64.decode(sealed.content, field: "content")
        for position in [0, 11, 12, 13, payload.count / 2, payload.count - 17, payload.count - 16, payload.count - 1] {
            var tampered = payload
            tampered[position] ^= 0x01
            let forged = try event(content: StrictBase64.encode(tampered), tags: sealed.tags)
            XCTAssertThrowsMarmot(.exactly(.groupEventUndecryptable), try GroupEvent.validate(forged, now: now).decrypt(using: [secret(7)]))
        }
        // Truncated to just nonce and tag, or one byte short of that.
        let minimal = try event(content: StrictBase64.encode(Array(payload.prefix(28))), tags: sealed.tags)
        XCTAssertThrowsMarmot(.exactly(.groupEventUndecryptable), try GroupEvent.validate(minimal, now: now).decrypt(using: [secret(7)]))
        let short = try event(content: StrictBase64.encode(Array(payload.prefix(27))), tags: sealed.tags)
        XCTAssertThrowsMarmot(.exactly(.groupEventContentTooShort(27)), try GroupEvent.validate(short, now: now))
        let empty = try event(content: "", tags: sealed.tags)
        XCTAssertThrowsMarmot(.exactly(.groupEventContentTooShort(0)), try GroupEvent.validate(empty, now: now))
        let notBase64 = try event(content: "qI/nsPbp39uHVkRz4vDgLiX7a64YiO3znHebM+J4Pc/0TUMlhy9l15QlRO1G!", tags: sealed.tags)
        XCTAssertThrowsMarmot(.exactly(.invalidBase64(field: "content")), try GroupEvent.validate(notBase64, now: now))
        // The right key over a plaintext that is not an MLSMessage.
        let garbage = try GroupEvent.seal(messageBytes: [0x00, 0x01, 0x00, 0x09], exporterSecret: secret(7), nostrGroupID: groupID,
                                          createdAt: now, rng: &rng)
        XCTAssertThrowsMarmot(.exactly(.groupEventMessageDecoding(.invalidValue(field: "wire_format", value: 9))),
                              try GroupEvent.validate(garbage, now: now).decrypt(using: [secret(7)]))
        let trailing = try GroupEvent.seal(messageBytes: try sampleMessage().tlsSerialized + [0], exporterSecret: secret(7),
                                           nostrGroupID: groupID, createdAt: now, rng: &rng)
        XCTAssertThrowsMarmot(.exactly(.groupEventMessageDecoding(.trailingBytes(1))),
                              try GroupEvent.validate(trailing, now: now).decrypt(using: [secret(7)]))
    }

    func testGroupIDTagRules() throws {
        let content = StrictBase64.encode([UInt8](repeating: 0, count: 40))
        let h = Hex.encode(groupID)
        func validate(_ tags: [[String]]) throws -> ValidatedGroupEvent { try GroupEvent.validate(try event(content: content, tags: tags), now: now) }
        XCTAssertNoThrow(try validate([["h", h]]))  // no encoding tag needed
        XCTAssertEqual(try validate([["encoding", "base64"], ["h", h.uppercased()]]).nostrGroupID.bytes, groupID)
        XCTAssertThrowsMarmot(.exactly(.missingTag("h")), try validate([["encoding", "base64"]]))
        XCTAssertThrowsMarmot(.exactly(.missingTag("h")), try validate([["H", h]]))
        XCTAssertThrowsMarmot(.invalidTag("h"), try validate([["h", h], ["h", h]]))
        XCTAssertThrowsMarmot(.invalidTag("h"), try validate([["h"]]))
        XCTAssertThrowsMarmot(.invalidTag("h"), try validate([["h", String(h.dropLast())]]))
        XCTAssertThrowsMarmot(.invalidTag("h"), try validate([["h", h + "00"]]))
        XCTAssertThrowsMarmot(.invalidTag("h"), try validate([["h", String(h.dropLast()) + "g"]]))
        XCTAssertThrowsMarmot(.exactly(.wrongKind(expected: [445], actual: 1059)),
                              try GroupEvent.validate(try event(kind: 1059, content: content, tags: [["h", h]]), now: now))
    }

    func testCreatedAtWindow() throws {
        let content = StrictBase64.encode([UInt8](repeating: 0, count: 40))
        let tags = [["h", Hex.encode(groupID)]]
        XCTAssertNoThrow(try GroupEvent.validate(try event(content: content, tags: tags, createdAt: now + 300), now: now))
        XCTAssertThrowsMarmot(.exactly(.groupEventFromFuture(createdAt: now + 301, now: now)),
                              try GroupEvent.validate(try event(content: content, tags: tags, createdAt: now + 301), now: now))
        XCTAssertNoThrow(try GroupEvent.validate(try event(content: content, tags: tags, createdAt: now - 3_888_000), now: now))
        XCTAssertThrowsMarmot(.exactly(.groupEventTooOld(createdAt: now - 3_888_001, now: now)),
                              try GroupEvent.validate(try event(content: content, tags: tags, createdAt: now - 3_888_001), now: now))
        // Custom window; a clock near zero does not underflow.
        XCTAssertThrowsMarmot(.exactly(.groupEventTooOld(createdAt: now - 61, now: now)),
                              try GroupEvent.validate(try event(content: content, tags: tags, createdAt: now - 61), now: now, maxAge: 60))
        XCTAssertNoThrow(try GroupEvent.validate(try event(content: content, tags: tags, createdAt: 0), now: 10))
        XCTAssertThrowsMarmot(.exactly(.groupEventTooOld(createdAt: 5, now: Int64.max)),
                              try GroupEvent.validate(try event(content: content, tags: tags, createdAt: 5), now: Int64.max))
    }

    func testExporterSecretLength() throws {
        var rng = SplitMix64(seed: 3)
        let short = Secret([UInt8](repeating: 1, count: 16))
        XCTAssertThrowsMarmot(.exactly(.exporterSecretLength(16)),
                              try GroupEvent.seal(message: try sampleMessage(), exporterSecret: short, nostrGroupID: groupID, createdAt: now, rng: &rng))
        XCTAssertThrowsMarmot(.invalidTag("h"),
                              try GroupEvent.seal(message: try sampleMessage(), exporterSecret: secret(1), nostrGroupID: [1], createdAt: now, rng: &rng))
        let sealed = try GroupEvent.seal(message: try sampleMessage(), exporterSecret: secret(1), nostrGroupID: groupID, createdAt: now, rng: &rng)
        XCTAssertThrowsMarmot(.exactly(.exporterSecretLength(16)), try GroupEvent.validate(sealed, now: now).decrypt(using: [secret(1), short]))
    }

    func testErrorsCarryNoSecrets() throws {
        var rng = SplitMix64(seed: 4)
        let sealed = try GroupEvent.seal(message: try sampleMessage(), exporterSecret: secret(0x5A), nostrGroupID: groupID, createdAt: now, rng: &rng)
        do {
            _ = try GroupEvent.validate(sealed, now: now).decrypt(using: [secret(0x5B)])
            XCTFail("decrypted with the wrong key")
        } catch {
            let text = String(describing: error) + String(reflecting: error)
            XCTAssertFalse(text.lowercased().contains("5b5b"))
            XCTAssertFalse(text.contains("91, 91"))
        }
        XCTAssertFalse(String(describing: secret(0x5A)).lowercased().contains("5a"))
    }
}
