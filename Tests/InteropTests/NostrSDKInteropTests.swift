import Foundation
import Nostr
import TestSupport
import XCTest

/// Cross-implementation tests against rust-nostr (the `nostr-sdk` 0.45.1 wheel of the interop
/// venv), driven through `Tests/Interop/peers/nostr_peer.py`. Every direction is exercised:
/// what Burrow produces must be accepted by nostr-sdk and what nostr-sdk produces by Burrow.
final class NostrSDKInteropTests: XCTestCase {
    private var peer: PythonPeer!
    private var rng = SystemRandomNumberGenerator()

    override func setUpWithError() throws {
        let peer = try PythonPeer(script: Fixtures.peerScript("nostr_peer.py"))
        addTeardownBlock { peer.terminate() }
        self.peer = peer
    }

    // MARK: - Events (NIP-01 serialization, id, BIP-340)

    /// Kinds of every class and content/tags that exercise each escaping rule of NIP-01.
    private static let eventCases: [(kind: Int, content: String, tags: [[String]])] = [
        (1, "", []),
        (1, "plain text note", [["t", "burrow"]]),
        (1, #"she said "hi" and left"#, []),
        (1, #"C:\path\to\file and a trailing backslash \"#, []),
        (1, "line one\nline two\r\n\ttabbed\u{8}backspace\u{c}formfeed", []),
        (1, "a/b </script> https://example.com/x/y?z=1", [["r", "https://example.com/a/b"]]),
        (1, "café – 表ポあA鷗ŒéＢ逍Üßªąñ丂㐀𠀀 ℵ ∑", [["t", "ünïcödé"]]),
        (1, "👨‍👩‍👧‍👦 🇩🇪 🎉 🫃🏽 e\u{301}", [["emoji", "party", "https://example.com/🎉.png"]]),
        (1, "control \u{0} \u{1} \u{1f} \u{7f} \u{2028} \u{2029} end", [["x", "\u{1}\u{1f}"]]),
        (0, #"{"name":"Al \"the\" pal","about":"line\nbreak \\ slash /"}"#, []),
        (3, "", [["p", String(repeating: "ab", count: 32), "wss://relay.example/", "alice"]]),
        (7, "+", [["e", String(repeating: "cd", count: 32)], ["p", String(repeating: "ef", count: 32)]]),
        (9, "chat message with \"quotes\"", [["h", "group-id"], ["d", ""]]),
        (10002, "", [["r", "wss://a.example/"], ["r", "wss://b.example/", "read"]]),
        (20001, "ephemeral", []),
        (30023, String(repeating: "long form ✍️ \"quoted\" \\ /\n", count: 400), [["d", "slug/with/slashes"], ["title", "T\"itle"]]),
        (65535, "max kind", [["custom", "a", "b", "c", "d"], ["single"]]),
    ]

    func testEventsSignedByBurrowVerifyInNostrSDK() throws {
        let keys = Keys.generate(using: &rng)
        for (index, c) in Self.eventCases.enumerated() {
            let createdAt: Int64 = 1_700_000_000 + Int64(index)
            let event = try Event.sign(kind: c.kind, content: c.content, tags: c.tags, createdAt: createdAt,
                                       keys: keys, rng: &rng)
            let verdict = try peer.request("verify_event", ["event": event.jsonString])
            XCTAssertTrue(try verdict.bool("id_valid"), "case \(index): nostr-sdk recomputes another id")
            XCTAssertTrue(try verdict.bool("signature_valid"), "case \(index): nostr-sdk rejects the signature")
            XCTAssertTrue(try verdict.bool("valid"), "case \(index)")

            // The id depends only on the fields: nostr-sdk signing the same fields with the same
            // key must arrive at the same id (byte-identical canonical serialization).
            let theirs = try peer.request("sign_event", [
                "secret_key": keys.secretKey.hex, "kind": c.kind, "content": c.content, "tags": c.tags,
                "created_at": Int(createdAt),
            ])
            let theirEvent = try UnverifiedEvent(json: theirs.string("event"))
            XCTAssertEqual(theirEvent.id, event.id, "case \(index): canonical serializations differ")
        }
    }

    func testEventTamperedAfterBurrowSignedIsRejectedByNostrSDK() throws {
        let keys = Keys.generate(using: &rng)
        let event = try Event.sign(kind: 1, content: "original", tags: [], createdAt: 1_700_000_000,
                                   keys: keys, rng: &rng)
        let tampered = event.jsonString.replacingOccurrences(of: "\"original\"", with: "\"0riginal\"")
        XCTAssertNotEqual(tampered, event.jsonString)
        let verdict = try peer.request("verify_event", ["event": tampered])
        XCTAssertFalse(try verdict.bool("valid"))
        XCTAssertFalse(try verdict.bool("id_valid"))
    }

    func testEventsSignedByNostrSDKVerifyInBurrow() throws {
        let theirKeys = try peer.request("generate_keys")
        let theirPubkey = try theirKeys.string("public_key")
        for (index, c) in Self.eventCases.enumerated() {
            let createdAt = 1_700_000_000 + index
            let signed = try peer.request("sign_event", [
                "secret_key": try theirKeys.string("secret_key"), "kind": c.kind, "content": c.content,
                "tags": c.tags, "created_at": createdAt,
            ])
            let event = try UnverifiedEvent(json: signed.string("event")).verified()
            XCTAssertEqual(event.pubkey.hex, theirPubkey, "case \(index)")
            XCTAssertEqual(event.kind, c.kind, "case \(index)")
            XCTAssertEqual(Array(event.content.utf8), Array(c.content.utf8), "case \(index)")
            XCTAssertEqual(event.tags.map { $0.map { Array($0.utf8) } }, c.tags.map { $0.map { Array($0.utf8) } },
                           "case \(index)")
            XCTAssertEqual(event.createdAt, Int64(createdAt), "case \(index)")
        }
    }

    func testEventsSignedByNostrSDKAndTamperedAreRejectedByBurrow() throws {
        let theirKeys = try peer.request("generate_keys")
        let signed = try peer.request("sign_event", [
            "secret_key": try theirKeys.string("secret_key"), "kind": 1, "content": "original", "tags": [[String]](),
            "created_at": 1_700_000_000,
        ])
        let json = try signed.string("event")
        XCTAssertNoThrow(try UnverifiedEvent(json: json).verified())

        let otherContent = json.replacingOccurrences(of: "\"original\"", with: "\"0riginal\"")
        XCTAssertThrowsError(try UnverifiedEvent(json: otherContent).verified()) {
            XCTAssertEqual($0 as? NostrError, .idMismatch)
        }
        let event = try UnverifiedEvent(json: json)
        var sigHex = Hex.encode(event.sig)
        let first = sigHex.removeFirst()
        sigHex.insert(first == "0" ? "1" : "0", at: sigHex.startIndex)
        let otherSig = json.replacingOccurrences(of: Hex.encode(event.sig), with: sigHex)
        XCTAssertThrowsError(try UnverifiedEvent(json: otherSig).verified()) {
            XCTAssertEqual($0 as? NostrError, .invalidSignature)
        }
    }

    // MARK: - NIP-44 v2

    /// A plaintext of exactly `count` UTF-8 bytes mixing 1- to 4-byte characters, JSON
    /// specials and a control character.
    static func plaintext(bytes count: Int) -> String {
        let pieces = ["a", "é", "表", "🎉", "\n", "\"", "\\", "/", "\u{1}", " "]
        var out = ""
        var length = 0
        var i = 0
        while length < count {
            let piece = pieces[i % pieces.count]
            let next = length + piece.utf8.count <= count ? piece : "x"
            out += next
            length += next.utf8.count
            i += 1
        }
        return out
    }

    /// rust-nostr 0.45.1 refuses to encrypt plaintexts longer than 65,536 − 128 bytes, below
    /// NIP-44's 65,535 (its decryption accepts the full range).
    private static let nostrSDKMaxEncryptLength = 65_408
    private static let lengths = [1, 2, 31, 32, 33, 64, 65, 100, 255, 256, 257, 1000, 16_385, 65_408, 65_535]

    func testNIP44PayloadsFromBurrowDecryptInNostrSDK() throws {
        let sender = Keys.generate(using: &rng)
        let recipient = try peer.request("generate_keys")
        let recipientPublic = try PublicKey(hex: recipient.string("public_key"))
        let key = try NIP44.conversationKey(secretKey: sender.secretKey, publicKey: recipientPublic)
        for length in Self.lengths {
            let plaintext = Self.plaintext(bytes: length)
            XCTAssertEqual(plaintext.utf8.count, length)
            let payload = try NIP44.encrypt(plaintext: plaintext, conversationKey: key, using: &rng)
            let decrypted = try peer.request("nip44_decrypt", [
                "secret_key": try recipient.string("secret_key"), "public_key": sender.publicKey.hex,
                "payload": payload,
            ])
            // Byte comparison: Swift's String == would equate canonically equivalent texts.
            XCTAssertTrue(try Array(decrypted.string("plaintext").utf8) == Array(plaintext.utf8),
                          "length \(length) differs after decryption")
        }
    }

    func testNIP44PayloadsFromNostrSDKDecryptInBurrow() throws {
        let sender = try peer.request("generate_keys")
        let senderPublic = try PublicKey(hex: sender.string("public_key"))
        let recipient = Keys.generate(using: &rng)
        let key = try NIP44.conversationKey(secretKey: recipient.secretKey, publicKey: senderPublic)
        for length in Self.lengths where length <= Self.nostrSDKMaxEncryptLength {
            let plaintext = Self.plaintext(bytes: length)
            let encrypted = try peer.request("nip44_encrypt", [
                "secret_key": try sender.string("secret_key"), "public_key": recipient.publicKey.hex,
                "plaintext": plaintext,
            ])
            let payload = try encrypted.string("payload")
            XCTAssertTrue(try Array(NIP44.decrypt(payload: payload, conversationKey: key).utf8) == Array(plaintext.utf8),
                          "length \(length) differs after decryption")

            // Flipping one base64 character of the payload must break the MAC.
            var chars = Array(payload)
            let middle = chars.count / 2
            chars[middle] = chars[middle] == "A" ? "B" : "A"
            XCTAssertThrowsError(try NIP44.decrypt(payload: String(chars), conversationKey: key), "length \(length)")
        }
        // The pinned nostr-sdk stops short of NIP-44's maximum: document it so a change shows up.
        XCTAssertThrowsError(try peer.request("nip44_encrypt", [
            "secret_key": try sender.string("secret_key"), "public_key": recipient.publicKey.hex,
            "plaintext": Self.plaintext(bytes: Self.nostrSDKMaxEncryptLength + 1),
        ])) { error in
            guard case .failed(_, let reason)? = error as? PythonPeer.PeerError else {
                return XCTFail("expected nostr-sdk to refuse, got \(error)")
            }
            XCTAssertTrue(reason.contains("too long"), reason)
        }
    }

    // MARK: - NIP-59 gift wrap

    private static let rumorCases: [(kind: Int, content: String, tags: [[String]])] = [
        (14, "a private message with \"quotes\", \\ and /\nnew line 🎉", [["p", String(repeating: "ab", count: 32)]]),
        (444, "welcome-bytes-base64+/=", [["e", String(repeating: "12", count: 32)], ["relays", "wss://r.example/"], ["encoding", "base64"]]),
        (9, "", []),
        // 20,000 bytes whose JSON escapes grow it to ~32.5 KB: the seal around it still fits
        // a NIP-44 plaintext (nostr-sdk's 65,408-byte cap included).
        (1, NostrSDKInteropTests.plaintext(bytes: 20_000), [["t", "large"]]),
    ]

    func testGiftWrapsFromBurrowUnwrapInNostrSDK() throws {
        let sender = Keys.generate(using: &rng)
        let recipient = try peer.request("generate_keys")
        let recipientPublic = try PublicKey(hex: recipient.string("public_key"))
        let now = Int64(Date().timeIntervalSince1970)
        for (index, c) in Self.rumorCases.enumerated() {
            let rumor = try Rumor(pubkey: sender.publicKey, createdAt: now - Int64(index), kind: c.kind, tags: c.tags,
                                  content: c.content)
            let wrap = try GiftWrap.wrap(rumor: rumor, sender: sender, recipient: recipientPublic, now: now, rng: &rng)
            XCTAssertEqual(wrap.kind, Kind.giftWrap)
            XCTAssertNotEqual(wrap.pubkey, sender.publicKey, "the wrapper key must be one-time")

            let unwrapped = try peer.request("unwrap", [
                "secret_key": try recipient.string("secret_key"), "gift_wrap": wrap.jsonString,
            ])
            XCTAssertEqual(try unwrapped.string("sender"), sender.publicKey.hex, "case \(index)")
            let theirRumor = try Rumor(json: unwrapped.string("rumor"))
            XCTAssertEqual(theirRumor, rumor, "case \(index)")
            let seal = try UnverifiedEvent(json: unwrapped.string("seal")).verified()
            XCTAssertEqual(seal.kind, Kind.seal, "case \(index)")
            XCTAssertEqual(seal.pubkey, sender.publicKey, "case \(index)")
            XCTAssertEqual(seal.tags, [], "case \(index)")
        }
    }

    func testGiftWrapsFromNostrSDKUnwrapInBurrow() throws {
        let sender = try peer.request("generate_keys")
        let senderPublic = try sender.string("public_key")
        let recipient = Keys.generate(using: &rng)
        let now = Int(Date().timeIntervalSince1970)
        for (index, c) in Self.rumorCases.enumerated() {
            let wrapped = try peer.request("gift_wrap", [
                "secret_key": try sender.string("secret_key"), "recipient": recipient.publicKey.hex,
                "kind": c.kind, "content": c.content, "tags": c.tags, "created_at": now - index,
            ])
            let wrap = try UnverifiedEvent(json: wrapped.string("gift_wrap")).verified()
            XCTAssertEqual(wrap.kind, Kind.giftWrap)
            XCTAssertEqual(wrap.tags.first, ["p", recipient.publicKey.hex])

            let unwrapped = try GiftWrap.unwrap(wrap, recipient: recipient)
            XCTAssertEqual(unwrapped.sender.hex, senderPublic, "case \(index)")
            XCTAssertEqual(unwrapped.rumor, try Rumor(json: wrapped.string("rumor")), "case \(index)")
            XCTAssertEqual(unwrapped.rumor.kind, c.kind, "case \(index)")
            XCTAssertEqual(Array(unwrapped.rumor.content.utf8), Array(c.content.utf8), "case \(index)")
            XCTAssertEqual(unwrapped.rumor.tags, c.tags, "case \(index)")
            XCTAssertEqual(unwrapped.rumor.createdAt, Int64(now - index), "case \(index)")

            // Addressed to someone else: Burrow must not open it.
            let stranger = Keys.generate(using: &rng)
            XCTAssertThrowsError(try GiftWrap.unwrap(wrap, recipient: stranger), "case \(index)")
        }
    }

    /// A rumor Burrow built, sealed and wrapped by nostr-sdk, comes back to Burrow intact.
    func testBurrowRumorWrappedByNostrSDKRoundTrips() throws {
        let author = try peer.request("generate_keys")
        let authorPublic = try PublicKey(hex: author.string("public_key"))
        let recipient = Keys.generate(using: &rng)
        let rumor = try Rumor(pubkey: authorPublic, createdAt: 1_700_000_000, kind: 444,
                              tags: [["e", String(repeating: "0f", count: 32)]], content: "wélcome \"rumor\" \\ /")
        let wrapped = try peer.request("gift_wrap", [
            "secret_key": try author.string("secret_key"), "recipient": recipient.publicKey.hex,
            "rumor": rumor.jsonString,
        ])
        XCTAssertEqual(try Rumor(json: wrapped.string("rumor")).id, rumor.id)
        let wrap = try UnverifiedEvent(json: wrapped.string("gift_wrap")).verified()
        let unwrapped = try GiftWrap.unwrap(wrap, recipient: recipient)
        XCTAssertEqual(unwrapped.rumor, rumor)
        XCTAssertEqual(unwrapped.sender, authorPublic)
    }
}
