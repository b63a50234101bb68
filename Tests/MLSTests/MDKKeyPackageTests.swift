import Foundation
import TestSupport
import XCTest
@testable import MLS

/// Real KeyPackages produced by MDK (OpenMLS 0.8.1) decode, re-encode byte-identically and carry
/// the fields Marmot relies on (MIP-00, Tests/Fixtures/marmot-samples/kp_decoded.txt).
final class MDKKeyPackageTests: XCTestCase {
    func testMarmotSampleKeyPackageMatchesDecodedDump() throws {
        let event = try JSONSerialization.jsonObject(with: Fixtures.data("marmot-samples/kp_event.json")) as! [String: Any]
        let bytes = [UInt8](Data(base64Encoded: event["content"] as! String)!)
        let kp = try KeyPackage(tlsSerialized: bytes)
        XCTAssertEqual(kp.tlsSerialized, bytes)

        XCTAssertEqual(kp.version, .mls10)
        XCTAssertEqual(kp.cipherSuite, .mls128DHKEMX25519AES128GCMSHA256Ed25519)
        XCTAssertEqual(kp.initKey.count, 32)
        XCTAssertEqual(kp.leafNode.encryptionKey.count, 32)
        XCTAssertEqual(kp.leafNode.signatureKey.count, 32)
        XCTAssertEqual(kp.leafNode.credential.basicIdentity.map { hex($0) }, event["pubkey"] as? String)
        XCTAssertEqual(kp.leafNode.credential.basicIdentity.map { hex($0) }, "466d7fcae563e5cb09a0d1870bb580344804617879a14949cf22285f1bae3f27")

        let caps = kp.leafNode.capabilities
        XCTAssertEqual(caps.versions.map(\.rawValue), [0x1])
        XCTAssertEqual(caps.cipherSuites.map(\.rawValue), [0x1, 0x6a6a])
        XCTAssertEqual(caps.extensions.map(\.rawValue), [0xa, 0xf2ee, 0xcaca])
        XCTAssertEqual(caps.proposals.map(\.rawValue), [0xa, 0x2a2a])
        XCTAssertEqual(caps.credentials.map(\.rawValue), [0x1, 0x2a2a])
        XCTAssertTrue(caps.cipherSuites[1].isGREASE && caps.extensions[2].isGREASE)
        XCTAssertTrue(caps.supportsProposal(.selfRemove))
        XCTAssertTrue(caps.supportsExtension(ExtensionType(0xF2EE)))

        guard case .keyPackage(let lifetime) = kp.leafNode.source else { return XCTFail("leaf source \(kp.leafNode.source)") }
        XCTAssertEqual(lifetime, Lifetime(notBefore: 1_795_306_997, notAfter: 1_802_568_197))
        XCTAssertTrue(lifetime.hasAcceptableRange)
        XCTAssertTrue(lifetime.contains(event["created_at"] as! UInt64))
        XCTAssertTrue(kp.leafNode.extensions.isEmpty)
        XCTAssertEqual(kp.leafNode.signature.count, 64)
        XCTAssertEqual(kp.extensions.list, [.lastResort])
        XCTAssertEqual(kp.extensions.tlsSerialized, [0x03, 0x00, 0x0a, 0x00])
        XCTAssertTrue(kp.extensions.isLastResort)
        XCTAssertEqual(kp.signature.count, 64)

        // The signed contents are the encoding minus the trailing signature.
        XCTAssertEqual(kp.toBeSigned + [0x40, 0x40] + kp.signature, bytes)
        XCTAssertEqual(kp.leafNode.toBeSigned(position: nil) + [0x40, 0x40] + kp.leafNode.signature, kp.leafNode.tlsSerialized)
    }

    func testNostrcProtocolVectorKeyPackages() throws {
        let root = try JSONSerialization.jsonObject(with: Fixtures.data("marmot/nostrc/protocol-vectors.json")) as! [String: Any]
        let cases = (root["key_package"] as! [String: Any])["cases"] as! [[String: Any]]
        XCTAssertEqual(cases.count, 3)
        var all: [(String, [UInt8])] = cases.map { ($0["nostr_pubkey"] as! String, hex($0["serialized_key_package_hex"] as! String)) }
        for c in cases {
            XCTAssertEqual([UInt8](Data(base64Encoded: c["event_content_base64"] as! String)!), hex(c["serialized_key_package_hex"] as! String))
        }
        // The lifecycle's own KeyPackage event (Bob's).
        let steps = (root["group_lifecycle"] as! [String: Any])["steps"] as! [[String: Any]]
        let bob = (root["group_lifecycle"] as! [String: Any])["bob_pubkey"] as! String
        all.append((bob, [UInt8](Data(base64Encoded: steps[0]["event_content"] as! String)!)))

        for (pubkey, bytes) in all {
            let kp = try KeyPackage(tlsSerialized: bytes)
            XCTAssertEqual(kp.tlsSerialized, bytes)
            XCTAssertEqual(kp.leafNode.credential.basicIdentity.map { hex($0) }, pubkey)
            XCTAssertEqual(kp.leafNode.credential.credentialType, .basic)
            let caps = kp.leafNode.capabilities
            XCTAssertEqual(caps.versions, [.mls10])
            XCTAssertEqual(caps.cipherSuites.first, .mls128DHKEMX25519AES128GCMSHA256Ed25519)
            XCTAssertTrue(caps.cipherSuites.dropFirst().allSatisfy(\.isGREASE))
            XCTAssertEqual(Array(caps.extensions.prefix(2)), [.lastResort, ExtensionType(0xF2EE)])
            XCTAssertTrue(caps.extensions.dropFirst(2).allSatisfy(\.isGREASE))
            XCTAssertEqual(caps.proposals.first, .selfRemove)
            XCTAssertTrue(caps.satisfies(RequiredCapabilities(extensionTypes: [ExtensionType(0xF2EE)], proposalTypes: [.selfRemove])))
            XCTAssertTrue(kp.extensions.isLastResort)
            guard case .keyPackage(let lifetime) = kp.leafNode.source else { return XCTFail("source") }
            XCTAssertTrue(lifetime.hasAcceptableRange)
            // README: valid between 1776279533 and 1783540733.
            XCTAssertTrue(lifetime.contains(1_780_000_000))
        }
    }

    func testKeyPackageDecodingRejectsTruncationAndTrailingBytes() throws {
        let event = try JSONSerialization.jsonObject(with: Fixtures.data("marmot-samples/kp_event.json")) as! [String: Any]
        let bytes = [UInt8](Data(base64Encoded: event["content"] as! String)!)
        for cut in [1, 10, 100, bytes.count - 1] {
            XCTAssertThrowsError(try KeyPackage(tlsSerialized: Array(bytes.prefix(cut))), "cut \(cut)")
        }
        XCTAssertThrowsError(try KeyPackage(tlsSerialized: bytes + [0])) {
            XCTAssertEqual($0 as? TLSDecodingError, .trailingBytes(1))
        }
    }
}

/// Signatures and references of the real MDK KeyPackages, through the crypto module's
/// VerifyWithLabel and RefHash.
final class MDKKeyPackageSignatureTests: XCTestCase {
    private let suite = CipherSuiteProvider.mls128DHKEMX25519AES128GCMSHA256Ed25519

    /// (KeyPackage bytes, expected `i` tag) for every MDK KeyPackage in the fixtures.
    private func samples() throws -> [([UInt8], [UInt8])] {
        var out: [([UInt8], [UInt8])] = []
        let event = try JSONSerialization.jsonObject(with: Fixtures.data("marmot-samples/kp_event.json")) as! [String: Any]
        let tags = event["tags"] as! [[String]]
        out.append(([UInt8](Data(base64Encoded: event["content"] as! String)!), hex(tags.first { $0[0] == "i" }![1])))
        let root = try JSONSerialization.jsonObject(with: Fixtures.data("marmot/nostrc/protocol-vectors.json")) as! [String: Any]
        for c in (root["key_package"] as! [String: Any])["cases"] as! [[String: Any]] {
            let ref = hex(c["key_package_ref"] as! String)
            XCTAssertEqual(ref.first, 0x20)
            out.append((hex(c["serialized_key_package_hex"] as! String), Array(ref.dropFirst())))
        }
        let steps = (root["group_lifecycle"] as! [String: Any])["steps"] as! [[String: Any]]
        let tags0 = steps[0]["event_tags"] as! [[String]]
        out.append(([UInt8](Data(base64Encoded: steps[0]["event_content"] as! String)!), hex(tags0.first { $0[0] == "i" }![1])))
        return out
    }

    func testSignaturesVerifyAndReferencesMatchITags() throws {
        let all = try samples()
        XCTAssertEqual(all.count, 5)
        for (bytes, ref) in all {
            let kp = try KeyPackage(tlsSerialized: bytes)
            XCTAssertNoThrow(try kp.leafNode.verifySignature(suite: suite, position: nil))
            XCTAssertNoThrow(try kp.verifySignature(suite: suite))
            XCTAssertEqual(kp.reference(suite: suite), ref)
        }
    }

    func testTamperedKeyPackageFailsVerification() throws {
        let (bytes, _) = try samples()[0]
        var kp = try KeyPackage(tlsSerialized: bytes)
        kp.extensions = Extensions()
        XCTAssertThrowsError(try kp.verifySignature(suite: suite)) { XCTAssertEqual($0 as? MLSCryptoError, .invalidSignature) }
        var leafTampered = try KeyPackage(tlsSerialized: bytes)
        leafTampered.leafNode.capabilities.proposals = []
        XCTAssertThrowsError(try leafTampered.leafNode.verifySignature(suite: suite, position: nil))
        // The package signature covers the leaf, so it breaks too.
        XCTAssertThrowsError(try leafTampered.verifySignature(suite: suite))
    }

    func testSignThenVerifyRoundTrip() throws {
        var rng = SystemRandomNumberGenerator()
        let key = try SignaturePrivateKey.generate(using: &rng)
        var leaf = LeafNode(
            encryptionKey: [UInt8](repeating: 1, count: 32), signatureKey: key.publicKey.bytes,
            credential: .basic(identity: [UInt8](repeating: 2, count: 32)),
            capabilities: Capabilities(extensions: [.lastResort], proposals: [.selfRemove]),
            source: .update)
        let position = TreePosition(groupID: [9, 9], leafIndex: 4)
        try leaf.sign(with: key, suite: suite, position: position)
        XCTAssertNoThrow(try leaf.verifySignature(suite: suite, position: position))
        // The position is signed for update leaves: another index or group fails.
        XCTAssertThrowsError(try leaf.verifySignature(suite: suite, position: TreePosition(groupID: [9, 9], leafIndex: 5)))
        XCTAssertThrowsError(try leaf.verifySignature(suite: suite, position: TreePosition(groupID: [9], leafIndex: 4)))
        XCTAssertThrowsError(try leaf.verifySignature(suite: suite, position: nil))
    }
}
