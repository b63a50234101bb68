import XCTest
@testable import MLS

final class ExtensionTests: XCTestCase {
    func testKnownExtensionsRoundTrip() throws {
        let credential = Credential.basic(identity: [1, 2, 3])
        let list: [Extension] = [
            .applicationID([9, 9]),
            .requiredCapabilities(RequiredCapabilities(extensionTypes: [ExtensionType(0xF2EE)], proposalTypes: [.selfRemove], credentialTypes: [])),
            .externalPub([7, 7, 7]),
            .externalSenders([ExternalSender(signatureKey: [4, 5], credential: credential)]),
            .lastResort,
            .unknown(ExtensionType(0xF2EE), [0xde, 0xad]),
        ]
        let exts = try Extensions(list)
        let decoded = try Extensions(tlsSerialized: exts.tlsSerialized)
        XCTAssertEqual(decoded, exts)
        XCTAssertEqual(decoded.applicationID, [9, 9])
        XCTAssertEqual(decoded.requiredCapabilities?.proposalTypes, [.selfRemove])
        XCTAssertEqual(decoded.externalPub, [7, 7, 7])
        XCTAssertEqual(decoded.externalSenders?.first?.credential, credential)
        XCTAssertTrue(decoded.isLastResort)
        XCTAssertEqual(decoded.unknown(ExtensionType(0xF2EE)), [0xde, 0xad])
        // Byte layout of the application_id extension: type 0x0001, data = opaque<V>.
        XCTAssertEqual(Extension.applicationID([9, 9]).tlsSerialized, [0x00, 0x01, 0x03, 0x02, 9, 9])
    }

    func testDuplicateTypesRejected() {
        let bytes = try! Extensions([.lastResort]).tlsSerialized
        // Two last_resort extensions: 00 0a 00 twice.
        XCTAssertThrowsError(try Extensions(tlsSerialized: [0x06] + Array(bytes.dropFirst()) + Array(bytes.dropFirst())))
        XCTAssertThrowsError(try Extensions([.unknown(ExtensionType(0xF2EE), []), .unknown(ExtensionType(0xF2EE), [1])]))
    }

    func testMalformedKnownExtensionDataRejected() {
        // last_resort must be empty.
        XCTAssertThrowsError(try Extension(tlsSerialized: [0x00, 0x0a, 0x01, 0x00]))
        // required_capabilities with trailing bytes in its data.
        XCTAssertThrowsError(try Extension(tlsSerialized: [0x00, 0x03, 0x04, 0x00, 0x00, 0x00, 0xff]))
        // application_id whose inner length overruns.
        XCTAssertThrowsError(try Extension(tlsSerialized: [0x00, 0x01, 0x02, 0x05, 0x00]))
    }

    func testPlacementRules() throws {
        XCTAssertNoThrow(try Extensions([.lastResort, .unknown(ExtensionType(0xF2EE), [])]).validate(for: .keyPackage))
        XCTAssertThrowsError(try Extensions([.lastResort]).validate(for: .leafNode))
        XCTAssertThrowsError(try Extensions([.applicationID([])]).validate(for: .keyPackage))
        XCTAssertThrowsError(try Extensions([.unknown(ExtensionType(0x2A2A), [])]).validate(for: .groupContext))
        XCTAssertNoThrow(try Extensions([.ratchetTree([0]), .externalPub([1])]).validate(for: .groupInfo))
        XCTAssertNoThrow(try Extensions([.requiredCapabilities(RequiredCapabilities()), .unknown(ExtensionType(0xF2EE), [1])]).validate(for: .groupContext))
        XCTAssertThrowsError(try Extensions([.ratchetTree([0])]).validate(for: .groupContext))
    }

    func testGREASEValues() {
        XCTAssertEqual(GREASE.values.count, 15)
        XCTAssertEqual(GREASE.values.first, 0x0A0A)
        XCTAssertEqual(GREASE.values.last, 0xEAEA)
        XCTAssertTrue(GREASE.values.allSatisfy(GREASE.isGREASE))
        for v: UInt16 in [0x0000, 0x0001, 0x0A00, 0x00A0, 0x1111, 0xFAFA, 0xFFFF, 0x0B0B, 0x1B1B, 0xF2EE] {
            XCTAssertFalse(GREASE.isGREASE(v), "\(v)")
        }
    }

    func testCredentialKeepsUnknownTypesOpaque() throws {
        let other = Credential.other(CredentialType(0xBEEF), body: [1, 2, 3])
        XCTAssertEqual(other.tlsSerialized, [0xbe, 0xef, 0x03, 1, 2, 3])
        XCTAssertEqual(try Credential(tlsSerialized: other.tlsSerialized), other)
        let x509 = Credential.other(.x509, body: [0x02, 0xaa, 0xbb, 0x01, 0xcc])
        XCTAssertEqual(try x509.x509Certificates(), [[0xaa, 0xbb], [0xcc]])
    }

    func testLifetimeBoundsMatchOpenMLS() {
        let lt = Lifetime(notBefore: 100, notAfter: 200)
        XCTAssertFalse(lt.contains(100))
        XCTAssertTrue(lt.contains(150))
        XCTAssertFalse(lt.contains(200))
        XCTAssertTrue(Lifetime(notBefore: 0, notAfter: Lifetime.maximumRange).hasAcceptableRange)
        XCTAssertFalse(Lifetime(notBefore: 0, notAfter: Lifetime.maximumRange + 1).hasAcceptableRange)
        XCTAssertEqual(Lifetime.maximumRange, 7_261_200)
    }
}
