import Crypto
import Nostr
@testable import Pigeon
import TestSupport
import XCTest

/// The primitive rules of section 1 on top of swift-crypto, and bech32m (BIP-350).
final class PrimitivesTests: XCTestCase {
    func bytes(_ hex: String) -> [UInt8] { (try? Hex.decode(hex)) ?? [] }

    /// RFC 5869 appendix A, the SHA-256 cases (1: basic, 2: long inputs and 82 bytes out,
    /// 3: no salt, no info): `Primitives.hkdfSHA256` and swift-crypto's `HKDF` both give them.
    func testHKDFMatchesRFC5869AndSwiftCrypto() {
        let cases: [(ikm: [UInt8], salt: [UInt8], info: [UInt8], okm: String)] = [
            ([UInt8](repeating: 0x0b, count: 22), Array(0x00...0x0c), Array(0xf0...0xf9),
             "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865"),
            (Array(0x00...0x4f), Array(0x60...0xaf), Array(0xb0...0xff),
             "b11e398dc80327a1c8e7f78c596a49344f012eda2d4efad8a050cc4c19afa97c59045a99cac7827271cb41c65e590e09da3275600c2f09b8"
                + "367793a9aca3db71cc30c58179ec3e87c14c01d5c1f3434f1d87"),
            ([UInt8](repeating: 0x0b, count: 22), [], [],
             "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8"),
        ]
        for (index, c) in cases.enumerated() {
            let okm = bytes(c.okm)
            XCTAssertEqual(Primitives.hkdfSHA256(ikm: c.ikm, salt: c.salt, info: c.info, count: okm.count), okm, "case \(index + 1)")
            let reference = HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: c.ikm), salt: c.salt, info: c.info, outputByteCount: okm.count)
            XCTAssertEqual(reference.withUnsafeBytes { Array($0) }, okm, "case \(index + 1), swift-crypto")
        }
        // Random shapes, against swift-crypto's HKDF.
        var rng = SplitMix64(seed: 0x5eed_4b4d)
        for round in 0..<300 {
            let ikm = (0..<Int.random(in: 0...80, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            let salt = (0..<Int.random(in: 0...80, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            let info = (0..<Int.random(in: 0...80, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            let count = Int.random(in: 1...200, using: &rng)
            let reference = HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: ikm), salt: salt, info: info, outputByteCount: count)
            XCTAssertEqual(Primitives.hkdfSHA256(ikm: ikm, salt: salt, info: info, count: count),
                           reference.withUnsafeBytes { Array($0) }, "round \(round)")
        }
    }

    /// RFC 8032 section 7.1, test 1: the signature is deterministic and exact.
    func testEd25519IsDeterministicPerRFC8032() throws {
        let key = try Ed25519PrivateKey(seed: bytes("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60"))
        XCTAssertEqual(key.publicKey.bytes, bytes("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a"))
        let expected = bytes("e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b")
        XCTAssertEqual(try key.sign([]), expected)
        XCTAssertEqual(try key.sign([]), expected)
        XCTAssertTrue(key.publicKey.isValidSignature(expected, for: []))
        XCTAssertFalse(key.publicKey.isValidSignature(expected, for: [0]))
    }

    /// A signature with s + L (the other encoding of the same scalar) is refused.
    func testEd25519RefusesNonCanonicalS() throws {
        let key = Ed25519PrivateKey.generate()
        let message = Array("burrow".utf8)
        let signature = try key.sign(message)
        XCTAssertTrue(key.publicKey.isValidSignature(signature, for: message))
        // s + L, little-endian addition.
        var s = Array(signature[32..<64])
        var carry = 0
        for i in 0..<32 {
            let sum = Int(s[i]) + Int(Ed25519PublicKey.groupOrderLE[i]) + carry
            s[i] = UInt8(sum & 0xff)
            carry = sum >> 8
        }
        XCTAssertEqual(carry, 0, "s + L fits 256 bits for any s < L")
        XCTAssertFalse(key.publicKey.isValidSignature(Array(signature[0..<32]) + s, for: message))
        // s = L exactly, and s = 2^256 − 1.
        XCTAssertFalse(key.publicKey.isValidSignature(Array(signature[0..<32]) + Ed25519PublicKey.groupOrderLE, for: message))
        XCTAssertFalse(key.publicKey.isValidSignature(Array(signature[0..<32]) + [UInt8](repeating: 0xff, count: 32), for: message))
        XCTAssertFalse(key.publicKey.isValidSignature(Array(signature.prefix(63)), for: message))
    }

    /// DH with a low-order point gives 32 zero bytes: refused.
    func testX25519ZeroResultIsAnError() throws {
        let key = X25519PrivateKey.generate()
        for u in [[UInt8](repeating: 0, count: 32), [1] + [UInt8](repeating: 0, count: 31)] {
            XCTAssertThrowsError(try key.sharedSecret(with: X25519PublicKey(bytes: u)))
        }
        let other = X25519PrivateKey.generate()
        XCTAssertEqual(try key.sharedSecret(with: other.publicKey), try other.sharedSecret(with: key.publicKey))
        // RFC 7748 section 6.1.
        let alice = try X25519PrivateKey(bytes: bytes("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a"))
        XCTAssertEqual(alice.publicKey.bytes, bytes("8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a"))
        let bob = try X25519PublicKey(bytes: bytes("de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f"))
        XCTAssertEqual(try alice.sharedSecret(with: bob), bytes("4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742"))
    }

    func testConstantTimeEqual() {
        XCTAssertTrue(constantTimeEqual([1, 2, 3], [1, 2, 3]))
        XCTAssertFalse(constantTimeEqual([1, 2, 3], [1, 2, 4]))
        XCTAssertFalse(constantTimeEqual([1, 2, 3], [1, 2]))
        XCTAssertTrue(constantTimeEqual([UInt8](), [UInt8]()))
    }

    /// Secrets never reach `description`.
    func testSecretsAreRedacted() throws {
        let secret = bytes("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a")
        let key = try X25519PrivateKey(bytes: secret)
        let texts = ["\(key)", String(reflecting: SecretBytes(secret)), "\(SecretBytes(secret))",
                     "\(try Ed25519PrivateKey(seed: secret))"]
        for text in texts { XCTAssertFalse(text.contains("77076d0a"), text) }
    }

    // MARK: bech32m (BIP-350)

    func testBech32mValidVectors() throws {
        let valid = [
            "A1LQFN3A", "a1lqfn3a",
            "an83characterlonghumanreadablepartthatcontainsthetheexcludedcharactersbioandnumber11sg7hg6",
            "abcdef1l7aum6echk45nj3s0wdvt2fg8x9yrzpqzd3ryx",
            "11" + String(repeating: "l", count: 82) + "ludsr8",
            "split1checkupstagehandshakeupstreamerranterredcaperredlc445v", "?1v759aa",
        ]
        for string in valid {
            // 5-bit payloads whose length is not a whole number of bytes fail only the 8-bit
            // regrouping, never the checksum.
            do {
                _ = try Bech32m.decode(string, maximumLength: 90)
            } catch let error as NostrError {
                XCTAssertEqual(error, .bech32InvalidPadding, string)
            }
        }
        XCTAssertEqual(try Bech32m.decode("abcdef1l7aum6echk45nj3s0wdvt2fg8x9yrzpqzd3ryx", maximumLength: 90).data,
                       bytes("ffbbcdeb38bdab49ca307b9ac5a928398a418820"))
    }

    func testBech32mInvalidVectors() {
        let invalid = [
            "\u{20}1xj0phk", "\u{7f}1g6xzxy", "\u{80}1vctc34",
            "an84characterslonghumanreadablepartthatcontainsthetheexcludedcharactersbioandnumber11d6pts4",
            "qyrz8wqd2c9m", "1qyrz8wqd2c9m", "y1b0jsk6g", "lt1igcx5c0", "in1muywd", "mm1crxm3i", "au1s5cgom",
            "M1VUXWEZ", "16plkw9", "1p2gdwpf",
        ]
        for string in invalid {
            XCTAssertThrowsError(try Bech32m.decode(string, maximumLength: 90), string)
        }
    }

    func testBech32mRoundTripAndVariantSeparation() throws {
        let data: [UInt8] = Array(0..<200)
        let text = Bech32m.encode(hrp: "burrowcard", data: data)
        XCTAssertEqual(try Bech32m.decode(text, maximumLength: 1500).data, data)
        XCTAssertEqual(try Bech32m.decode(text.uppercased(), maximumLength: 1500).data, data)
        XCTAssertThrowsError(try Bech32m.decode(text, maximumLength: 100))
        // The same data checksummed as bech32 (BIP-173) is not bech32m.
        let npub = try PublicKey(hex: "d537fe92ad5429981358fa94061387d7adfd9498ebc547454bef6905f9886842").npub
        XCTAssertThrowsError(try Bech32m.decode(npub, maximumLength: 90)) { XCTAssertEqual($0 as? NostrError, .bech32InvalidChecksum) }
    }
}
