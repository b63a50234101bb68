import Conformance
import Foundation
import TestSupport
import XCTest

/// The three published Noise_XX_25519_ChaChaPoly_SHA256 vector files through the runner
/// `burrow conformance noise` uses, and a damaged copy that must fail.
final class NoiseConformanceTests: XCTestCase {
    static let files = ["cacophony", "noise-c-basic", "snow"].map { "noise/\($0).Noise_XX_25519_ChaChaPoly_SHA256.json" }

    func testEveryPublishedXXVectorPasses() throws {
        for file in Self.files {
            let report = NoiseConformance.run(json: Array(try Fixtures.data(file)))
            XCTAssertEqual(report.failures, [], file)
            XCTAssertEqual(report.passed, 1, file)
            XCTAssertEqual(report.skipped, 0, file)
            XCTAssertTrue(report.succeeded, file)
        }
    }

    func testADamagedCiphertextFailsAndOtherProtocolsAreSkipped() throws {
        var root = try XCTUnwrap(JSONSerialization.jsonObject(with: try Fixtures.data(Self.files[0])) as? [String: Any])
        var vectors = try XCTUnwrap(root["vectors"] as? [[String: Any]])
        var messages = try XCTUnwrap(vectors[0]["messages"] as? [[String: Any]])
        var ciphertext = try XCTUnwrap(messages[1]["ciphertext"] as? String)
        ciphertext = (ciphertext.last == "0" ? "1" : "0") + ciphertext.dropFirst()
        messages[1]["ciphertext"] = ciphertext
        vectors[0]["messages"] = messages
        var other = vectors[0]
        other["protocol_name"] = "Noise_IK_25519_ChaChaPoly_SHA256"
        root["vectors"] = [vectors[0], other]
        let report = NoiseConformance.run(json: Array(try JSONSerialization.data(withJSONObject: root)))
        XCTAssertEqual(report.failed, 1)
        XCTAssertEqual(report.skipped, 1)
        XCTAssertTrue(report.failures.first?.contains("message 2") ?? false, "\(report.failures)")
        XCTAssertFalse(report.succeeded)
    }
}
