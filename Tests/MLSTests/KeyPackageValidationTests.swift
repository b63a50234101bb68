import Foundation
import TestSupport
import XCTest
@testable import MLS

/// `KeyPackage.validate(at:)` over real MDK packages (classic and current profile) and
/// packages broken one rule at a time.
final class KeyPackageValidationTests: XCTestCase {
    private let suite = CipherSuiteProvider.mls128DHKEMX25519AES128GCMSHA256Ed25519

    private func sampleEvent() throws -> (KeyPackage, UInt64) {
        let event = try XCTUnwrap(JSONSerialization.jsonObject(with: Fixtures.data("marmot-samples/kp_event.json")) as? [String: Any])
        let bytes = [UInt8](try XCTUnwrap(Data(base64Encoded: try XCTUnwrap(event["content"] as? String))))
        return (try KeyPackage(tlsSerialized: bytes), try XCTUnwrap(event["created_at"] as? UInt64))
    }

    func testMDKSampleValidatesAtCaptureTime() throws {
        let (kp, createdAt) = try sampleEvent()
        let verified = try kp.validate(at: createdAt)
        XCTAssertEqual(verified.keyPackage, kp)
        XCTAssertEqual(verified.reference, kp.reference(suite: suite))
    }

    func testNostrcKeyPackagesValidateInsideTheirWindow() throws {
        let root = try XCTUnwrap(JSONSerialization.jsonObject(with: Fixtures.data("marmot/nostrc/protocol-vectors.json")) as? [String: Any])
        let cases = try XCTUnwrap((root["key_package"] as? [String: Any])?["cases"] as? [[String: Any]])
        for c in cases {
            let kp = try KeyPackage(tlsSerialized: hex(try XCTUnwrap(c["serialized_key_package_hex"] as? String)))
            // The README's window: between 1776279533 and 1783540733.
            XCTAssertNoThrow(try kp.validate(at: 1_776_279_534))
            XCTAssertNoThrow(try kp.validate(at: 1_783_540_732))
            XCTAssertThrowsError(try kp.validate(at: 1_800_000_000)) {
                guard case .keyPackageLifetime(_, _, 1_800_000_000)? = $0 as? MLSError else { return XCTFail("\($0)") }
            }
        }
    }

    /// A current-profile (MDK ≥ 0.9) KeyPackage in an MLSMessage: app_data_dictionary
    /// extensions (0x0006) are unknown to MLS and carried opaquely, and it still validates.
    func testCurrentProfileKeyPackageFromMarmotTS() throws {
        let root = try XCTUnwrap(JSONSerialization.jsonObject(with: Fixtures.data("marmot/marmot-ts/key-package-lifetime-rust.json")) as? [String: Any])
        let lifetimeCase = try XCTUnwrap(root["lifetime"] as? [String: Any])
        let bytes = hex(try XCTUnwrap(lifetimeCase["key_package_tls_hex"] as? String))
        XCTAssertEqual(suite.hash(bytes), hex(try XCTUnwrap(lifetimeCase["key_package_tls_sha256"] as? String)))
        let message = try MLSMessage(tlsSerialized: bytes)
        XCTAssertEqual(message.tlsSerialized, bytes)
        guard case .keyPackage(let kp) = message.body else { return XCTFail("not a KeyPackage") }
        guard case .keyPackage(let lifetime) = kp.leafNode.source else { return XCTFail("source") }
        XCTAssertEqual(lifetime.tlsSerialized, hex(try XCTUnwrap(lifetimeCase["serialized_hex"] as? String)))
        XCTAssertEqual(kp.leafNode.capabilities.extensions, [ExtensionType(0x0006)])
        XCTAssertEqual(kp.leafNode.capabilities.proposals, [ProposalType(0x0008)])
        XCTAssertNotNil(kp.extensions.unknown(ExtensionType(0x0006)))
        let time = try XCTUnwrap(root["validation_time"] as? UInt64)
        XCTAssertNoThrow(try kp.validate(at: time))
    }

    /// marmot-ts's boundary verdicts (MDK/OpenMLS) against `Lifetime`'s rules.
    func testLifetimeBoundariesMatchMDKVerdicts() throws {
        let root = try XCTUnwrap(JSONSerialization.jsonObject(with: Fixtures.data("marmot/marmot-ts/key-package-lifetime-rust.json")) as? [String: Any])
        let time = try XCTUnwrap(root["validation_time"] as? UInt64)
        let boundaries = try XCTUnwrap(root["boundaries"] as? [String: [String: Any]])
        XCTAssertEqual(boundaries.count, 4)
        for (name, b) in boundaries {
            let lifetime = Lifetime(notBefore: try XCTUnwrap(b["not_before"] as? UInt64), notAfter: try XCTUnwrap(b["not_after"] as? UInt64))
            XCTAssertEqual(lifetime.contains(time), b["current"] as? Bool, name)
            XCTAssertEqual(lifetime.hasAcceptableRange, b["range_acceptable"] as? Bool, name)
            XCTAssertEqual(lifetime.contains(time) && lifetime.hasAcceptableRange, b["accepted"] as? Bool, name)
        }
    }

    private func assertInvalid(_ kp: KeyPackage, at time: UInt64, _ rule: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try kp.validate(at: time), file: file, line: line) { error in
            guard case .invalidKeyPackage(let text)? = error as? MLSError else { return XCTFail("\(error)", file: file, line: line) }
            XCTAssertTrue(text.contains(rule), "\(text)", file: file, line: line)
        }
    }

    func testEachRuleRejectsBrokenPackages() throws {
        let (original, time) = try sampleEvent()

        var kp = original
        kp.cipherSuite = CipherSuite(0x0002)
        assertInvalid(kp, at: time, "cipher suite")

        kp = original
        kp.version = ProtocolVersion(2)
        assertInvalid(kp, at: time, "version")

        kp = original
        kp.leafNode.source = .update
        assertInvalid(kp, at: time, "leaf_node_source")

        kp = original
        kp.leafNode.signature[0] ^= 1
        assertInvalid(kp, at: time, "leaf node signature")

        kp = original
        kp.signature[0] ^= 1
        assertInvalid(kp, at: time, "KeyPackage signature")

        kp = original
        kp.extensions = Extensions()  // signed content changed
        assertInvalid(kp, at: time, "KeyPackage signature")
    }

    /// Rules behind the signatures: build packages signed with our own key so only the rule
    /// under test is broken.
    func testRulesOnSelfSignedPackages() throws {
        var rng = SystemRandomNumberGenerator()
        let key = try SignaturePrivateKey.generate(using: &rng)
        let time: UInt64 = 1_800_000_000
        func make(initKey: [UInt8] = [UInt8](repeating: 1, count: 32), capabilities: Capabilities = Capabilities(extensions: [.lastResort]),
                  leafExtensions: Extensions = Extensions(), extensions: Extensions = [.lastResort].asExtensions,
                  lifetime: Lifetime = Lifetime(notBefore: 1_799_996_400, notAfter: 1_807_257_600)) throws -> KeyPackage {
            var leaf = LeafNode(encryptionKey: [UInt8](repeating: 2, count: 32), signatureKey: key.publicKey.bytes,
                                credential: .basic(identity: [UInt8](repeating: 3, count: 32)), capabilities: capabilities,
                                source: .keyPackage(lifetime), extensions: leafExtensions)
            try leaf.sign(with: key, suite: suite, position: nil)
            var kp = KeyPackage(initKey: initKey, leafNode: leaf, extensions: extensions)
            try kp.sign(with: key, suite: suite)
            return kp
        }
        XCTAssertNoThrow(try make().validate(at: time))
        // Round trip of a freshly signed package keeps it valid.
        XCTAssertNoThrow(try KeyPackage(tlsSerialized: try make().tlsSerialized).validate(at: time))

        assertInvalid(try make(initKey: [UInt8](repeating: 2, count: 32)), at: time, "init_key equals")
        assertInvalid(try make(initKey: [1, 2, 3]), at: time, "32-byte")
        assertInvalid(try make(capabilities: Capabilities()), at: time, "KeyPackage extension 0x000a")
        assertInvalid(try make(capabilities: Capabilities(cipherSuites: [], extensions: [.lastResort])), at: time, "cipher suite")
        assertInvalid(try make(capabilities: Capabilities(versions: [], extensions: [.lastResort])), at: time, "version")
        assertInvalid(try make(capabilities: Capabilities(extensions: [.lastResort], credentials: [])), at: time, "credential type")
        assertInvalid(try make(leafExtensions: [.unknown(ExtensionType(0xF2EE), [])].asExtensions), at: time, "leaf extension 0xf2ee")
        // Over the 84 days + 1 hour cap.
        XCTAssertThrowsError(try make(lifetime: Lifetime(notBefore: 1_799_996_400, notAfter: 1_799_996_400 + Lifetime.maximumRange + 1)).validate(at: time)) {
            guard case .keyPackageLifetime? = $0 as? MLSError else { return XCTFail("\($0)") }
        }
        XCTAssertNoThrow(try make(lifetime: Lifetime(notBefore: 1_799_996_400, notAfter: 1_799_996_400 + Lifetime.maximumRange)).validate(at: time))
    }
}

private extension Array where Element == Extension {
    var asExtensions: Extensions { (try? Extensions(self)) ?? Extensions() }
}
