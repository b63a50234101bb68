import XCTest
@testable import Nostr
import TestSupport

final class KeysTests: XCTestCase {
    // BIP-340 vector 1.
    let secretHex = "b7e151628aed2a6abf7158809cf4f3c762e7160f38b4da56a784d9045190cfef"
    let publicHex = "dff1d77f2a671c5f36183726db2341be58feae1da2deced843240f7b502ba659"

    func testSecretKeyDerivesPublicKey() throws {
        let secret = try SecretKey(hex: secretHex)
        XCTAssertEqual(secret.publicKey.hex, publicHex)
        XCTAssertEqual(secret.hex, secretHex)
        XCTAssertEqual(try SecretKey(hex: secretHex.uppercased()).publicKey, secret.publicKey)
        XCTAssertTrue(secret.isEqual(to: try SecretKey(bytes: secret.bytes)))
    }

    func testSecretKeyRejectsInvalidScalarsWithoutEchoingThem() {
        let order = "fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141"
        for bad in [String(repeating: "0", count: 64), order, String(repeating: "f", count: 64),
                    "abcd", String(repeating: "g", count: 64), secretHex + "00"] {
            XCTAssertThrowsError(try SecretKey(hex: bad)) { error in
                XCTAssertEqual(error as? NostrError, .invalidSecretKey)
                XCTAssertFalse("\(error)".contains(bad))
            }
        }
        XCTAssertThrowsError(try SecretKey(bytes: [UInt8](repeating: 1, count: 31)))
    }

    func testSecretKeyIsNeverPrinted() throws {
        let secret = try SecretKey(hex: secretHex)
        for text in ["\(secret)", String(describing: secret), String(reflecting: secret), "\(Keys(secretKey: secret))"] {
            XCTAssertFalse(text.contains(secretHex), text)
        }
    }

    func testPublicKeyValidation() throws {
        XCTAssertEqual(try PublicKey(hex: publicHex).bytes, try Hex.decode(publicHex))
        // Not on the curve (BIP-340 vector 5) and above the field size (vector 14).
        XCTAssertThrowsError(try PublicKey(hex: "eefdea4cdb677750a420fee807eacf21eb9898ae79b9768766e4faa04a2d4a34")) {
            XCTAssertEqual($0 as? NostrError, .invalidPublicKey)
        }
        XCTAssertThrowsError(try PublicKey(hex: "fffffffffffffffffffffffffffffffffffffffffffffffffffffffefffffc30"))
        XCTAssertThrowsError(try PublicKey(bytes: [UInt8](repeating: 2, count: 33)))
        XCTAssertThrowsError(try PublicKey(hex: "zz"))
    }

    func testSignVerifyRoundTripAndTamper() throws {
        var rng = SplitMix64(seed: 1)
        let keys = Keys.generate(using: &rng)
        let message = [UInt8](repeating: 7, count: 32)
        let sig = try keys.sign(message, using: &rng)
        XCTAssertEqual(sig.count, 64)
        XCTAssertTrue(Schnorr.verify(signature: sig, message: message, publicKey: keys.publicKey))
        var tampered = sig
        tampered[10] ^= 1
        XCTAssertFalse(Schnorr.verify(signature: tampered, message: message, publicKey: keys.publicKey))
        XCTAssertFalse(Schnorr.verify(signature: Array(sig.dropLast()), message: message, publicKey: keys.publicKey))
        let other = Keys.generate(using: &rng)
        XCTAssertFalse(Schnorr.verify(signature: sig, message: message, publicKey: other.publicKey))
        XCTAssertThrowsError(try keys.sign(message, auxRand: [1, 2, 3])) {
            XCTAssertEqual($0 as? NostrError, .invalidAuxRandLength(3))
        }
    }

    func testGenerateIsDeterministicForASeed() {
        var a = SplitMix64(seed: 42), b = SplitMix64(seed: 42)
        XCTAssertEqual(SecretKey.generate(using: &a).publicKey, SecretKey.generate(using: &b).publicKey)
    }

    func testSharedXIsSymmetricAndMatchesNIP44Vector() throws {
        var rng = SplitMix64(seed: 9)
        let a = SecretKey.generate(using: &rng), b = SecretKey.generate(using: &rng)
        let ab = try a.sharedX(with: b.publicKey)
        XCTAssertEqual(ab.count, 32)
        XCTAssertEqual(ab, try b.sharedX(with: a.publicKey))
        XCTAssertNotEqual(ab, try a.sharedX(with: a.publicKey))
    }
}
