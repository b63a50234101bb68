import Foundation
@testable import Nostr
import TestSupport
import XCTest

/// NIP-49 against the NIP's published vector, and its failure cases.
final class NIP49Tests: XCTestCase {
    static let vector = "ncryptsec1qgg9947rlpvqu76pj5ecreduf9jxhselq2nae2kghhvd5g7dgjtcxfqtd67p9m0w57lspw8gsq6yphnm8623nsl8xn9j4jdzz84zm3frztj3z7s35vpzmqf6ksu8r89qk5z2zxfmu5gv8th8wclt0h4p"

    func testThePublishedVectorDecrypts() throws {
        let (key, security) = try NIP49.decrypt(Self.vector, password: "nostr")
        XCTAssertEqual(Hex.encode(key.bytes), "3501454135014541350145413501453fefb02227e449e57cf4d3a3ce05378683")
        XCTAssertEqual(security, .insecure, "the vector says its key was handled insecurely (0x00)")
        XCTAssertThrowsError(try NIP49.decrypt(Self.vector, password: "Nostr")) { XCTAssertEqual($0 as? NIP49.Failure, .wrongPassword) }
    }

    func testRoundTripNormalizesThePasswordAndKeepsTheSecurityByte() throws {
        let key = try SecretKey(bytes: (0..<32).map { UInt8($0 + 1) })
        // "Å" as one code point and as A + ring: NFKC makes them the same password.
        let text = try NIP49.encrypt(key, password: "\u{00C5}ngström", logN: 8, security: .secure)
        XCTAssertTrue(text.hasPrefix("ncryptsec1"))
        let (back, security) = try NIP49.decrypt(text, password: "A\u{030A}ngstro\u{0308}m")
        XCTAssertEqual(back.bytes, key.bytes)
        XCTAssertEqual(security, .secure)
    }

    func testMalformedAndMemoryBombsAreRefusedBeforeScrypt() throws {
        XCTAssertThrowsError(try NIP49.decrypt("npub1qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq", password: "x"))
        XCTAssertThrowsError(try NIP49.decrypt("ncryptsec1", password: "x"))
        // The vector re-encoded with log_n 21 and 255: refused as unsupported, never run.
        let data = try XCTUnwrap(Self.bytes(of: Self.vector))
        for logN: UInt8 in [21, 255, 0] {
            var bad = data
            bad[1] = logN
            XCTAssertThrowsError(try NIP49.decrypt(Self.reencode(bad), password: "nostr"), "\(logN)") {
                XCTAssertEqual($0 as? NIP49.Failure, .unsupportedLogN(logN))
            }
        }
        var version = data
        version[0] = 3
        XCTAssertThrowsError(try NIP49.decrypt(Self.reencode(version), password: "nostr")) {
            guard case .malformed = $0 as? NIP49.Failure else { return XCTFail("\($0)") }
        }
        var flipped = data
        flipped[42] = 0x01
        XCTAssertThrowsError(try NIP49.decrypt(Self.reencode(flipped), password: "nostr"), "the security byte is authenticated") {
            XCTAssertEqual($0 as? NIP49.Failure, .wrongPassword)
        }
        XCTAssertThrowsError(try NIP49.encrypt(try SecretKey(bytes: [UInt8](repeating: 7, count: 32)), password: "x", logN: 21))
    }

    static func bytes(of text: String) -> [UInt8]? { try? Bech32.decode(text).data }
    static func reencode(_ data: [UInt8]) -> String { Bech32.encode(hrp: "ncryptsec", data: data) }
}
