import Crypto
import Foundation
import XCTest
@testable import MLS
import TestSupport

/// Our RFC 9180 composition against swift-crypto's own HPKE, both directions, plus the failure
/// cases a hostile peer can reach.
final class HPKETests: XCTestCase {
    private let suite = HPKESuite.x25519SHA256AES128GCM
    private let swiftCryptoSuite = Crypto.HPKE.Ciphersuite(kem: .Curve25519_HKDF_SHA256, kdf: .HKDF_SHA256, aead: .AES_GCM_128)
    private let info: [UInt8] = Array("Burrow HPKE cross-check".utf8)
    private let messages: [[UInt8]] = [[], Array("first".utf8), [UInt8](repeating: 0xab, count: 1000), Array("fourth".utf8)]

    func testSwiftCryptoSealsOursOpens() throws {
        var rng = SplitMix64(seed: 1)
        let recipient = try suite.generateKeyPair(using: &rng)
        let swiftKey = try Curve25519.KeyAgreement.PublicKey(rawRepresentation: recipient.publicKey.bytes)
        var sender = try Crypto.HPKE.Sender(recipientKey: swiftKey, ciphersuite: swiftCryptoSuite, info: Data(info))

        var ours = try suite.setupBaseRecipient(enc: Array(sender.encapsulatedKey), recipient: recipient.privateKey, info: info)
        for (index, message) in messages.enumerated() {
            let aad = Array("aad \(index)".utf8)
            let ciphertext = try sender.seal(message, authenticating: aad)
            XCTAssertEqual(try ours.open(aad: aad, ciphertext: Array(ciphertext)), message)
        }
        for length in [1, 16, 32, 100] {
            let context = Array("exporter \(length)".utf8)
            let theirs = try sender.exportSecret(context: context, outputByteCount: length)
            XCTAssertEqual(try ours.export(exporterContext: context, length: length), Secret(theirs))
        }
    }

    func testOursSealsSwiftCryptoOpens() throws {
        var rng = SplitMix64(seed: 2)
        let swiftPrivate = Curve25519.KeyAgreement.PrivateKey()
        let recipientKey = HPKEPublicKey(Array(swiftPrivate.publicKey.rawRepresentation))
        var (enc, ours) = try suite.setupBaseSender(recipient: recipientKey, info: info, using: &rng)
        var recipient = try Crypto.HPKE.Recipient(privateKey: swiftPrivate, ciphersuite: swiftCryptoSuite, info: Data(info), encapsulatedKey: Data(enc))
        for (index, message) in messages.enumerated() {
            let aad = Array("aad \(index)".utf8)
            let ciphertext = try ours.seal(aad: aad, plaintext: message)
            XCTAssertEqual(Array(try recipient.open(ciphertext, authenticating: aad)), message)
        }
        let theirs = try recipient.exportSecret(context: [1, 2, 3], outputByteCount: 42)
        XCTAssertEqual(try ours.export(exporterContext: [1, 2, 3], length: 42), Secret(theirs))
    }

    func testSingleShotRoundTripAndDeterministicEphemeral() throws {
        var rng = SplitMix64(seed: 3)
        let recipient = try suite.generateKeyPair(using: &rng)
        let ephemeral = try suite.generateKeyPair(using: &rng)
        let first = try suite.sealBase(recipient: recipient.publicKey, info: info, aad: [9], plaintext: [1, 2, 3], ephemeral: ephemeral)
        let second = try suite.sealBase(recipient: recipient.publicKey, info: info, aad: [9], plaintext: [1, 2, 3], ephemeral: ephemeral)
        XCTAssertEqual(first.enc, second.enc)
        XCTAssertEqual(first.ciphertext, second.ciphertext)
        XCTAssertEqual(first.enc, ephemeral.publicKey.bytes)
        XCTAssertEqual(try suite.openBase(enc: first.enc, recipient: recipient.privateKey, info: info, aad: [9], ciphertext: first.ciphertext), [1, 2, 3])
    }

    func testTamperedCiphertextWrongAADAndWrongKeyAreTypedErrors() throws {
        var rng = SplitMix64(seed: 4)
        let recipient = try suite.generateKeyPair(using: &rng)
        let other = try suite.generateKeyPair(using: &rng)
        let sealed = try suite.sealBase(recipient: recipient.publicKey, info: info, aad: [1], plaintext: Array("hello".utf8), using: &rng)

        var tampered = sealed.ciphertext
        tampered[0] ^= 1
        XCTAssertThrowsError(try suite.openBase(enc: sealed.enc, recipient: recipient.privateKey, info: info, aad: [1], ciphertext: tampered)) {
            XCTAssertEqual($0 as? MLSCryptoError, .decryptionFailed)
        }
        XCTAssertThrowsError(try suite.openBase(enc: sealed.enc, recipient: recipient.privateKey, info: info, aad: [2], ciphertext: sealed.ciphertext)) {
            XCTAssertEqual($0 as? MLSCryptoError, .decryptionFailed)
        }
        XCTAssertThrowsError(try suite.openBase(enc: sealed.enc, recipient: other.privateKey, info: info, aad: [1], ciphertext: sealed.ciphertext)) {
            XCTAssertEqual($0 as? MLSCryptoError, .decryptionFailed)
        }
        XCTAssertThrowsError(try suite.openBase(enc: sealed.enc, recipient: recipient.privateKey, info: info, aad: [1], ciphertext: [1, 2, 3])) {
            XCTAssertEqual($0 as? MLSCryptoError, .decryptionFailed)
        }
        XCTAssertThrowsError(try suite.openBase(enc: Array(sealed.enc.dropLast()), recipient: recipient.privateKey, info: info, aad: [1], ciphertext: sealed.ciphertext)) {
            XCTAssertEqual($0 as? MLSCryptoError, .invalidLength(field: "HPKE enc", expected: 32, actual: 31))
        }
    }

    func testFailedOpenDoesNotAdvanceSequence() throws {
        var rng = SplitMix64(seed: 5)
        let recipient = try suite.generateKeyPair(using: &rng)
        var (enc, sender) = try suite.setupBaseSender(recipient: recipient.publicKey, info: info, using: &rng)
        var receiver = try suite.setupBaseRecipient(enc: enc, recipient: recipient.privateKey, info: info)
        let ciphertext = try sender.seal(aad: [], plaintext: [42])
        XCTAssertThrowsError(try receiver.open(aad: [], ciphertext: Array(ciphertext.reversed())))
        XCTAssertEqual(receiver.sequenceNumber, 0)
        XCTAssertEqual(try receiver.open(aad: [], ciphertext: ciphertext), [42])
        XCTAssertEqual(receiver.sequenceNumber, 1)
    }

    func testLowOrderPublicKeyIsRejected() throws {
        var rng = SplitMix64(seed: 6)
        let ephemeral = try suite.generateKeyPair(using: &rng)
        // The all-zero u-coordinate is a point of small order: X25519 yields the zero secret.
        XCTAssertThrowsError(try suite.encap(recipient: HPKEPublicKey([UInt8](repeating: 0, count: 32)), ephemeral: ephemeral)) {
            XCTAssertEqual($0 as? MLSCryptoError, .diffieHellmanFailed)
        }
        XCTAssertThrowsError(try suite.encap(recipient: HPKEPublicKey([1, 2, 3]), ephemeral: ephemeral)) {
            guard case .invalidPublicKey = $0 as? MLSCryptoError else { return XCTFail("\($0)") }
        }
    }

    func testExportLengthBounds() throws {
        var rng = SplitMix64(seed: 7)
        let recipient = try suite.generateKeyPair(using: &rng)
        let (_, context) = try suite.setupBaseSender(recipient: recipient.publicKey, info: info, using: &rng)
        XCTAssertEqual(try context.export(exporterContext: [], length: 0).count, 0)
        XCTAssertEqual(try context.export(exporterContext: [], length: 255 * 32).count, 255 * 32)
        XCTAssertThrowsError(try context.export(exporterContext: [], length: 255 * 32 + 1)) {
            XCTAssertEqual($0 as? MLSCryptoError, .invalidOutputLength(255 * 32 + 1))
        }
    }
}

