import XCTest
@testable import Store

/// Passphrase → Argon2id → database key, and the key-check value.
final class StoreKeyTests: XCTestCase {
    /// Expected values computed independently with pyca/cryptography 50.0.2's Argon2id
    /// (RFC 9106, version 0x13, one lane — libsodium's crypto_pwhash uses one lane) and Python's
    /// hmac module: Argon2id("burrow test vector", salt 00…0f, t=3, m=8192 KiB, 32 bytes), then
    /// HMAC-SHA256(key, "burrow key check").
    func testKeyDerivationMatchesAnIndependentArgon2id() throws {
        let parameters = try StoreKDFParameters(memoryMiB: 8, passes: 3, salt: Array(0..<16))
        let key = try StoreKey(passphrase: Array("burrow test vector".utf8), parameters: parameters)
        try key.withKeyLiteral { literal in
            XCTAssertEqual(String(decoding: literal, as: UTF8.self),
                           "x'e3fef2ac1136e86b83987c4adaa8ed83aeb624e0c4431b488b1aa61dc04cfb07'")
        }
        XCTAssertEqual(Sodium.hex(key.checkValue()), "256524de86f855491e430e1c990b4bb867391c624fe5b4af7da0b140baa5b0ab")
    }

    func testKeyDerivationIsDeterministicPerSalt() throws {
        let p = try StoreKDFParameters(memoryMiB: 8, salt: [UInt8](repeating: 1, count: 16))
        let q = try StoreKDFParameters(memoryMiB: 8, salt: [UInt8](repeating: 2, count: 16))
        let a = try StoreKey(passphrase: testPassphrase, parameters: p)
        let b = try StoreKey(passphrase: testPassphrase, parameters: p)
        let c = try StoreKey(passphrase: testPassphrase, parameters: q)
        XCTAssertEqual(a.checkValue(), b.checkValue())
        XCTAssertTrue(a.matches(checkValue: b.checkValue()))
        XCTAssertFalse(a.matches(checkValue: c.checkValue()))
        XCTAssertFalse(a.matches(checkValue: Array(b.checkValue().prefix(31))))
        try a.withKeyLiteral { literal in
            let text = String(decoding: literal, as: UTF8.self)
            XCTAssertEqual(literal.count, 67)
            XCTAssertTrue(text.hasPrefix("x'") && text.hasSuffix("'"))
            XCTAssertTrue(text.dropFirst(2).dropLast().allSatisfy { "0123456789abcdef".contains($0) })
        }
        XCTAssertEqual(String(describing: try SecretBuffer(count: 4)), "SecretBuffer(4 bytes, redacted)")
    }
}
