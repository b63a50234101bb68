import TestSupport
import XCTest
@testable import Nostr

final class GiftWrapTests: XCTestCase {
    private var rng = SplitMix64(seed: 31)
    private let now: Int64 = 1_750_000_000

    func testSpecExampleUnwrapsToItsRumor() throws {
        let root = try JSONValue.parse([UInt8](Fixtures.data("nostr/nip59-example.json")))
        let recipient = try Keys(secretKey: SecretKey(hex: XCTUnwrap(root["keys"]?["recipient_private_key"]?.stringValue)))
        let wrap = try UnverifiedEvent(jsonValue: XCTUnwrap(root["gift_wrap"])).verified()
        let gift = try GiftWrap.unwrap(wrap, recipient: recipient)
        let expectedRumor = try Rumor(jsonValue: XCTUnwrap(root["rumor"]))
        XCTAssertEqual(gift.rumor, expectedRumor)
        XCTAssertEqual(gift.rumor.content, "Are you going to the party tonight?")
        XCTAssertEqual(gift.seal.id.hex, root["seal"]?["id"]?.stringValue)
        XCTAssertEqual(gift.sender.hex, root["derived"]?["author_public_key"]?.stringValue)

        // The example's conversation keys match what we derive.
        let author = try SecretKey(hex: XCTUnwrap(root["keys"]?["author_private_key"]?.stringValue))
        let sealKey = try NIP44.conversationKey(secretKey: author, publicKey: recipient.publicKey)
        XCTAssertEqual(sealKey, try NIP44.ConversationKey(bytes: Hex.decode(XCTUnwrap(root["derived"]?["seal_conversation_key"]?.stringValue))))

        // Anyone else cannot open it.
        let stranger = Keys.generate(using: &rng)
        XCTAssertThrowsError(try GiftWrap.unwrap(wrap, recipient: stranger)) {
            XCTAssertEqual($0 as? NostrError, .giftWrapUndecryptable(.nip44InvalidMAC))
        }
    }

    func testWrapUnwrapRoundTrip() throws {
        let alice = Keys.generate(using: &rng), bob = Keys.generate(using: &rng)
        let rumor = try Rumor(pubkey: alice.publicKey, createdAt: now, kind: 444, tags: [["e", "kp"]], content: "welcome")
        let wrap = try GiftWrap.wrap(rumor: rumor, sender: alice, recipient: bob.publicKey, now: now, rng: &rng,
                                     extraTags: [["expiration", "\(now + 100)"]])
        XCTAssertEqual(wrap.kind, 1059)
        XCTAssertEqual(wrap.tags.first, ["p", bob.publicKey.hex])
        XCTAssertEqual(wrap.expiration, now + 100)
        XCTAssertNotEqual(wrap.pubkey, alice.publicKey)
        XCTAssertTrue((now - GiftWrap.maximumBackdate...now).contains(wrap.createdAt))

        let gift = try GiftWrap.unwrap(try UnverifiedEvent(json: wrap.jsonString).verified(), recipient: bob)
        XCTAssertEqual(gift.rumor, rumor)
        XCTAssertEqual(gift.sender, alice.publicKey)
        XCTAssertEqual(gift.seal.kind, 13)
        XCTAssertEqual(gift.seal.tags, [])
        XCTAssertTrue((now - GiftWrap.maximumBackdate...now).contains(gift.seal.createdAt))

        // Two wraps of the same rumor share nothing visible.
        let again = try GiftWrap.wrap(rumor: rumor, sender: alice, recipient: bob.publicKey, now: now, rng: &rng)
        XCTAssertNotEqual(again.pubkey, wrap.pubkey)
        XCTAssertNotEqual(again.content, wrap.content)
    }

    func testSealingSomeoneElsesRumorIsRefused() throws {
        let alice = Keys.generate(using: &rng), mallory = Keys.generate(using: &rng), bob = Keys.generate(using: &rng)
        let rumor = try Rumor(pubkey: alice.publicKey, createdAt: now, kind: 1, content: "hi")
        XCTAssertThrowsError(try GiftWrap.seal(rumor: rumor, sender: mallory, recipient: bob.publicKey, now: now, rng: &rng)) {
            XCTAssertEqual($0 as? NostrError, .sealAuthorMismatch)
        }
    }

    // MARK: Forgeries, each built by hand the way an attacker would.

    /// Wraps arbitrary seal JSON for `recipient`, as a forger with a fresh wrapper key would.
    private func wrapRawSeal(_ sealJSON: String, to recipient: PublicKey, kind: Int = 1059) throws -> Event {
        let wrapper = Keys.generate(using: &rng)
        let key = try NIP44.conversationKey(secretKey: wrapper.secretKey, publicKey: recipient)
        let content = try NIP44.encrypt(plaintext: sealJSON, conversationKey: key, using: &rng)
        return try Event.sign(kind: kind, content: content, tags: [["p", recipient.hex]], createdAt: now, keys: wrapper, rng: &rng)
    }

    /// A seal signed by `signer` whose content is `rumorJSON` encrypted from `signer` to `recipient`.
    private func sealJSON(rumorJSON: String, signer: Keys, recipient: PublicKey, kind: Int = 13,
                          tags: [[String]] = []) throws -> Event {
        let key = try NIP44.conversationKey(secretKey: signer.secretKey, publicKey: recipient)
        let content = try NIP44.encrypt(plaintext: rumorJSON, conversationKey: key, using: &rng)
        return try Event.sign(kind: kind, content: content, tags: tags, createdAt: now, keys: signer, rng: &rng)
    }

    private func assertRejected(_ wrap: Event, _ recipient: Keys, _ expected: NostrError, line: UInt = #line) {
        XCTAssertThrowsError(try GiftWrap.unwrap(wrap, recipient: recipient), line: line) {
            XCTAssertEqual($0 as? NostrError, expected, line: line)
        }
    }

    func testForgedGiftWrapsAreRejected() throws {
        let alice = Keys.generate(using: &rng), mallory = Keys.generate(using: &rng), bob = Keys.generate(using: &rng)
        let rumor = try Rumor(pubkey: alice.publicKey, createdAt: now, kind: 444, content: "join my group")

        // Not a gift wrap at all.
        let note = try Event.sign(kind: 1, content: "x", createdAt: now, keys: mallory, rng: &rng)
        assertRejected(note, bob, .giftWrapWrongKind(1))

        // Undecryptable content.
        let garbage = try Event.sign(kind: 1059, content: "AAAA", tags: [["p", bob.publicKey.hex]], createdAt: now, keys: mallory, rng: &rng)
        assertRejected(garbage, bob, .giftWrapUndecryptable(.nip44InvalidPayloadLength(4)))

        // Seal without a signature: an unsigned event object claiming to be Alice's.
        let aliceSeal = try sealJSON(rumorJSON: rumor.jsonString, signer: alice, recipient: bob.publicKey)
        guard case .object(let sealMembers) = aliceSeal.jsonValue else { return XCTFail() }
        let unsigned = JSONValue.object(sealMembers.filter { $0.key != "sig" }).jsonString
        assertRejected(try wrapRawSeal(unsigned, to: bob.publicKey), bob, .sealInvalid(.missingField("sig")))

        // Seal with a signature that does not verify (Mallory's signature of another event).
        let malloryEvent = try Event.sign(kind: 13, content: "y", createdAt: now, keys: mallory, rng: &rng)
        let badSig = JSONValue.object(sealMembers.map {
            $0.key == "sig" ? JSONMember("sig", .string(Hex.encode(malloryEvent.sig))) : $0
        }).jsonString
        assertRejected(try wrapRawSeal(badSig, to: bob.publicKey), bob, .sealInvalid(.invalidSignature))

        // Seal content edited after signing: id no longer matches.
        let edited = JSONValue.object(sealMembers.map {
            $0.key == "content" ? JSONMember("content", .string(malloryEvent.content)) : $0
        }).jsonString
        assertRejected(try wrapRawSeal(edited, to: bob.publicKey), bob, .sealInvalid(.idMismatch))

        // Seal signed by Mallory carrying Alice's rumor: the impersonation NIP-59 must stop.
        let impersonation = try sealJSON(rumorJSON: rumor.jsonString, signer: mallory, recipient: bob.publicKey)
        assertRejected(try wrapRawSeal(impersonation.jsonString, to: bob.publicKey), bob, .sealAuthorMismatch)

        // Seal of the wrong kind, and a seal with tags.
        let wrongKind = try sealJSON(rumorJSON: rumor.jsonString, signer: alice, recipient: bob.publicKey, kind: 14)
        assertRejected(try wrapRawSeal(wrongKind.jsonString, to: bob.publicKey), bob, .sealWrongKind(14))
        let tagged = try sealJSON(rumorJSON: rumor.jsonString, signer: alice, recipient: bob.publicKey, tags: [["p", bob.publicKey.hex]])
        assertRejected(try wrapRawSeal(tagged.jsonString, to: bob.publicKey), bob, .sealTagsNotEmpty)

        // Rumor with a wrong id.
        let wrongID = rumor.jsonString.replacingOccurrences(of: rumor.id.hex, with: String(repeating: "0", count: 64))
        let wrongIDSeal = try sealJSON(rumorJSON: wrongID, signer: alice, recipient: bob.publicKey)
        assertRejected(try wrapRawSeal(wrongIDSeal.jsonString, to: bob.publicKey), bob, .rumorInvalid(.idMismatch))

        // Rumor carrying a signature (a signed event is not deniable, so not a rumor).
        let signedRumor = try Event.sign(kind: 444, content: "join my group", createdAt: now, keys: alice, rng: &rng)
        let signedSeal = try sealJSON(rumorJSON: signedRumor.jsonString, signer: alice, recipient: bob.publicKey)
        assertRejected(try wrapRawSeal(signedSeal.jsonString, to: bob.publicKey), bob, .rumorInvalid(.rumorSigned))

        // Seal content not decryptable by the recipient (encrypted to someone else).
        let misdirected = try sealJSON(rumorJSON: rumor.jsonString, signer: alice, recipient: mallory.publicKey)
        assertRejected(try wrapRawSeal(misdirected.jsonString, to: bob.publicKey), bob, .sealUndecryptable(.nip44InvalidMAC))

        // Seal content that decrypts to something that is not a rumor.
        let notJSON = try sealJSON(rumorJSON: "not json", signer: alice, recipient: bob.publicKey)
        XCTAssertThrowsError(try GiftWrap.unwrap(try wrapRawSeal(notJSON.jsonString, to: bob.publicKey), recipient: bob)) {
            guard case .rumorInvalid(.malformedJSON)? = $0 as? NostrError else { return XCTFail("\($0)") }
        }

        // And the honest construction of the same rumor still works.
        let honest = try wrapRawSeal(aliceSeal.jsonString, to: bob.publicKey)
        XCTAssertEqual(try GiftWrap.unwrap(honest, recipient: bob).rumor, rumor)
    }
}
