import XCTest
@testable import MLS
import TestSupport

/// RFC 9420 §5 labeled functions beyond the published vectors: label separation, tampering,
/// and that secrets never print.
final class LabeledFunctionsTests: XCTestCase {
    private let cs = CipherSuiteProvider.mls128DHKEMX25519AES128GCMSHA256Ed25519

    func testOnlySuiteOneIsSupported() throws {
        XCTAssertNoThrow(try CipherSuiteProvider(CipherSuite(1)))
        XCTAssertThrowsError(try CipherSuiteProvider(CipherSuite(2))) {
            XCTAssertEqual($0 as? MLSCryptoError, .unsupportedCipherSuite(2))
        }
        XCTAssertEqual([cs.Nh, cs.kdfNh, cs.aeadNk, cs.aeadNn], [32, 32, 16, 12])
    }

    func testSignatureBindsLabelContentAndKey() throws {
        var rng = SplitMix64(seed: 10)
        let key = try SignaturePrivateKey.generate(using: &rng)
        let other = try SignaturePrivateKey.generate(using: &rng)
        let content: [UInt8] = Array("LeafNodeTBS bytes".utf8)
        let signature = try cs.signWithLabel(key, label: "LeafNodeTBS", content: content)
        XCTAssertNoThrow(try cs.verifyWithLabel(key.publicKey, label: "LeafNodeTBS", content: content, signature: signature))

        let failures: [() throws -> Void] = [
            { try self.cs.verifyWithLabel(key.publicKey, label: "KeyPackageTBS", content: content, signature: signature) },
            { try self.cs.verifyWithLabel(key.publicKey, label: "LeafNodeTBS", content: content + [0], signature: signature) },
            { try self.cs.verifyWithLabel(other.publicKey, label: "LeafNodeTBS", content: content, signature: signature) },
            { try self.cs.verifyWithLabel(key.publicKey, label: "LeafNodeTBS", content: content, signature: Array(signature.dropLast())) },
        ]
        for failure in failures {
            XCTAssertThrowsError(try failure()) { XCTAssertEqual($0 as? MLSCryptoError, .invalidSignature) }
        }
        XCTAssertThrowsError(try cs.verifyWithLabel(SignaturePublicKey([1, 2]), label: "LeafNodeTBS", content: content, signature: signature)) {
            guard case .invalidPublicKey = $0 as? MLSCryptoError else { return XCTFail("\($0)") }
        }
    }

    func testEncryptWithLabelBindsLabelAndContext() throws {
        var rng = SplitMix64(seed: 11)
        let keyPair = try cs.hpke.generateKeyPair(using: &rng)
        let sealed = try cs.encryptWithLabel(keyPair.publicKey, label: "UpdatePathNode", context: [1, 2, 3], plaintext: [9, 9], using: &rng)
        XCTAssertEqual(try cs.decryptWithLabel(keyPair.privateKey, label: "UpdatePathNode", context: [1, 2, 3], ciphertext: sealed), [9, 9])
        XCTAssertThrowsError(try cs.decryptWithLabel(keyPair.privateKey, label: "Welcome", context: [1, 2, 3], ciphertext: sealed)) {
            XCTAssertEqual($0 as? MLSCryptoError, .decryptionFailed)
        }
        XCTAssertThrowsError(try cs.decryptWithLabel(keyPair.privateKey, label: "UpdatePathNode", context: [1, 2], ciphertext: sealed)) {
            XCTAssertEqual($0 as? MLSCryptoError, .decryptionFailed)
        }
    }

    func testExpandWithLabelLengthLimits() throws {
        let secret = Secret([UInt8](repeating: 7, count: 32))
        XCTAssertEqual(try cs.expandWithLabel(secret, label: "x", context: [], length: 0).count, 0)
        XCTAssertEqual(try cs.expandWithLabel(secret, label: "x", context: [], length: 8160).count, 8160)
        XCTAssertThrowsError(try cs.expandWithLabel(secret, label: "x", context: [], length: 8161))
        XCTAssertThrowsError(try cs.expandWithLabel(secret, label: "x", context: [], length: -1))
        // DeriveSecret is ExpandWithLabel with an empty context and KDF.Nh bytes.
        XCTAssertEqual(cs.deriveSecret(secret, label: "init"), try cs.expandWithLabel(secret, label: "init", context: [], length: 32))
    }

    func testReferencesUseTheirLabels() {
        let value: [UInt8] = [1, 2, 3]
        XCTAssertEqual(cs.makeKeyPackageRef(value), cs.refHash(label: "MLS 1.0 KeyPackage Reference", value: value))
        XCTAssertEqual(cs.makeProposalRef(value), cs.refHash(label: "MLS 1.0 Proposal Reference", value: value))
        XCTAssertNotEqual(cs.makeKeyPackageRef(value), cs.makeProposalRef(value))
    }

    func testMACVerificationIsExact() {
        let key = Secret([UInt8](repeating: 3, count: 32))
        let tag = cs.mac(key: key, data: [1, 2, 3])
        XCTAssertTrue(cs.verifyMAC(key: key, data: [1, 2, 3], mac: tag))
        var wrong = tag
        wrong[31] ^= 0x80
        XCTAssertFalse(cs.verifyMAC(key: key, data: [1, 2, 3], mac: wrong))
        XCTAssertFalse(cs.verifyMAC(key: key, data: [1, 2, 3], mac: Array(tag.prefix(16))))
        XCTAssertTrue(Secret.constantTimeEquals(tag, tag))
        XCTAssertFalse(Secret.constantTimeEquals(tag, wrong))
        XCTAssertFalse(Secret.constantTimeEquals(tag, Array(tag.dropLast())))
    }

    func testSecretsNeverPrint() throws {
        let bytes: [UInt8] = Array(repeating: 0xAB, count: 32)
        let secret = Secret(bytes)
        let key = try HPKEPrivateKey(secret)
        let signing = try SignaturePrivateKey(seed: secret)
        var dumped = ""
        dump(secret, to: &dumped)
        dump(key, to: &dumped)
        dump(signing, to: &dumped)
        for text in ["\(secret)", String(reflecting: secret), "\(key)", "\(signing)", dumped] {
            XCTAssertFalse(text.lowercased().contains("abab"), text)
            XCTAssertFalse(text.contains("171, 171"), text)
        }
    }
}
