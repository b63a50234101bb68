import XCTest
@testable import Nostr
import TestSupport

final class NIP19Tests: XCTestCase {
    // Examples from NIP-19.
    func testSpecExamples() throws {
        let npub = "npub10elfcs4fr0l0r8af98jlmgdh9c8tcxjvz9qkw038js35mp4dma8qzvjptg"
        let pub = try PublicKey(npub: npub)
        XCTAssertEqual(pub.hex, "7e7e9c42a91bfef19fa929e5fda1b72e0ebc1a4c1141673e2794234d86addf4e")
        XCTAssertEqual(pub.npub, npub)

        let nsec = "nsec1vl029mgpspedva04g90vltkh6fvh240zqtv9k0t9af8935ke9laqsnlfe5"
        let secret = try SecretKey(nsec: nsec)
        XCTAssertEqual(secret.hex, "67dea2ed018072d675f5415ecfaed7d2597555e202d85b3d65ea4e58d2d92ffa")
        XCTAssertEqual(secret.nsec, nsec)

        let nprofile = "nprofile1qqsrhuxx8l9ex335q7he0f09aej04zpazpl0ne2cgukyawd24mayt8gpp4mhxue69uhhytnc9e3k7mgpz4mhxue69uhkg6nzv9ejuumpv34kytnrdaksjlyr9p"
        let profile = try NIP19.ProfilePointer(nprofile: nprofile)
        XCTAssertEqual(profile.publicKey.hex, "3bf0c63fcb93463407af97a5e5ee64fa883d107ef9e558472c4eb9aaaefa459d")
        XCTAssertEqual(profile.relays, ["wss://r.x.com", "wss://djbas.sadkb.com"])
        XCTAssertEqual(try profile.nprofile(), nprofile)
    }

    func testRoundTrips() throws {
        var rng = SplitMix64(seed: 11)
        let keys = Keys.generate(using: &rng)
        let id = try EventID(bytes: rng.bytes(32))
        XCTAssertEqual(try EventID(note: id.note), id)
        XCTAssertTrue(id.note.hasPrefix("note1"))
        XCTAssertEqual(try PublicKey(npub: keys.publicKey.npub.uppercased()), keys.publicKey)
        XCTAssertTrue(try SecretKey(nsec: keys.secretKey.nsec).isEqual(to: keys.secretKey))

        let pointer = NIP19.EventPointer(id: id, relays: ["wss://relay.example", "ws://127.0.0.1:7777"],
                                         author: keys.publicKey, kind: 30_443)
        let nevent = try pointer.nevent()
        XCTAssertEqual(try NIP19.EventPointer(nevent: nevent), pointer)
        let bare = NIP19.EventPointer(id: id)
        XCTAssertEqual(try NIP19.EventPointer(nevent: bare.nevent()), bare)

        guard case .publicKey(let decoded) = try NIP19.decode(keys.publicKey.npub) else { return XCTFail() }
        XCTAssertEqual(decoded, keys.publicKey)
        guard case .event(let decodedPointer) = try NIP19.decode(nevent) else { return XCTFail() }
        XCTAssertEqual(decodedPointer, pointer)
    }

    func testBadInputGivesTypedErrors() throws {
        var rng = SplitMix64(seed: 12)
        let npub = Keys.generate(using: &rng).publicKey.npub
        var flipped = Array(npub)
        flipped[10] = flipped[10] == "q" ? "p" : "q"
        let cases: [(String, NostrError)] = [
            (String(flipped), .bech32InvalidChecksum),
            ("npub1" + npub.dropFirst(5).uppercased(), .bech32MixedCase),
            (npub.replacingOccurrences(of: "1", with: "!"), .bech32MissingSeparator),
            ("npub1" + String(npub.dropFirst(5).dropLast(7)) + "b" + String(npub.suffix(6)), .bech32InvalidCharacter),
            ("npub1qqq", .bech32InvalidLength),
            (npub + " ", .bech32InvalidCharacter),
        ]
        for (input, expected) in cases {
            XCTAssertThrowsError(try PublicKey(npub: input), input) { XCTAssertEqual($0 as? NostrError, expected) }
        }
        // Right checksum, wrong prefix.
        let id = try EventID(bytes: [UInt8](repeating: 1, count: 32))
        XCTAssertThrowsError(try PublicKey(npub: id.note)) { XCTAssertEqual($0 as? NostrError, .nip19UnexpectedPrefix("note")) }
        XCTAssertThrowsError(try NIP19.decode(Bech32.encode(hrp: "nfoo", data: [1, 2, 3]))) {
            XCTAssertEqual($0 as? NostrError, .nip19UnexpectedPrefix("nfoo"))
        }
        // Right prefix, wrong payload length.
        XCTAssertThrowsError(try PublicKey(npub: Bech32.encode(hrp: "npub", data: [UInt8](repeating: 1, count: 31)))) {
            XCTAssertEqual($0 as? NostrError, .bech32InvalidLength)
        }
        // nsec of zero (not a valid scalar) and a truncated TLV.
        XCTAssertThrowsError(try SecretKey(nsec: Bech32.encode(hrp: "nsec", data: [UInt8](repeating: 0, count: 32)))) {
            XCTAssertEqual($0 as? NostrError, .invalidSecretKey)
        }
        XCTAssertThrowsError(try NIP19.ProfilePointer(nprofile: Bech32.encode(hrp: "nprofile", data: [0, 32, 1, 2]))) {
            XCTAssertEqual($0 as? NostrError, .nip19InvalidTLV("truncated value"))
        }
        XCTAssertThrowsError(try NIP19.ProfilePointer(nprofile: Bech32.encode(hrp: "nprofile", data: [1, 1, 0x61]))) {
            XCTAssertEqual($0 as? NostrError, .nip19InvalidTLV("missing public key"))
        }
        XCTAssertThrowsError(try NIP19.ProfilePointer(publicKey: try PublicKey(npub: npub),
                                                     relays: [String(repeating: "x", count: 256)]).nprofile())
    }
}
