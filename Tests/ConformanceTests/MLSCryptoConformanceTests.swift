import Conformance
import Foundation
import TestSupport
import XCTest

/// The vendored crypto, key-schedule and secret-tree vectors, through the same
/// `MLSConformance.run` path as `burrow conformance mls TEST FILE`.
final class MLSCryptoConformanceTests: XCTestCase {
    private func run(_ test: String, _ fixture: String) throws -> ConformanceReport {
        let report = MLSConformance.run(test: test, json: Array(try Fixtures.data(fixture)))
        XCTAssertEqual(report.failed, 0, report.failures.joined(separator: "\n"))
        return report
    }

    func testCryptoBasics() throws {
        let report = try run("crypto-basics", "mls/crypto-basics.json")
        XCTAssertEqual(report.passed, 1)
        XCTAssertEqual(report.skipped, 0)
    }

    /// Base mode passes (keys, encapsulation, key schedule, 257 encryptions, 3 exports);
    /// PSK, auth and auth-PSK modes are reported as skipped.
    func testHPKEBaseMode() throws {
        let report = try run("hpke", "hpke/rfc9180-x25519-sha256-aes128gcm.json")
        XCTAssertEqual(report.passed, 1)
        XCTAssertEqual(report.skipped, 3)
    }

    /// 1, 8 and 32 leaves: sender-data key/nonce and generations 0 and 15 of both ratchets of
    /// every leaf.
    func testSecretTree() throws {
        let report = try run("secret-tree", "mls/secret-tree.json")
        XCTAssertEqual(report.passed, 3)
    }

    /// Five epochs chained from `initial_init_secret`: GroupContext, joiner/welcome/epoch secrets,
    /// all derived secrets, external_pub and an exporter output per epoch.
    func testKeySchedule() throws {
        let report = try run("key-schedule", "mls/key-schedule.json")
        XCTAssertEqual(report.passed, 1)
    }

    /// Eleven cases with 0 to 10 external PSKs.
    func testPSKSecret() throws {
        let report = try run("psk_secret", "mls/psk_secret.json")
        XCTAssertEqual(report.passed, 11)
    }

    func testUnknownTestNameIsOneFailure() {
        let report = MLSConformance.run(test: "no-such-test", json: Array("[]".utf8))
        XCTAssertEqual(report.failed, 1)
        XCTAssertEqual(report.passed, 0)
    }

    func testMalformedFileIsOneFailure() {
        let report = MLSConformance.run(test: "crypto-basics", json: Array("{\"not\": \"an array\"}".utf8))
        XCTAssertEqual(report.failed, 1)
    }

    func testOtherCipherSuitesAreSkipped() throws {
        var cases = try XCTUnwrap(JSONSerialization.jsonObject(with: Fixtures.data("mls/crypto-basics.json")) as? [[String: Any]])
        var other = cases[0]
        other["cipher_suite"] = 2
        cases.append(other)
        let report = MLSConformance.run(test: "crypto-basics", json: Array(try JSONSerialization.data(withJSONObject: cases)))
        XCTAssertEqual(report.summaryLine, "1 passed, 0 failed, 1 skipped")
    }

    func testTamperedVectorFails() throws {
        var cases = try XCTUnwrap(JSONSerialization.jsonObject(with: Fixtures.data("mls/crypto-basics.json")) as? [[String: Any]])
        var derive = try XCTUnwrap(cases[0]["derive_secret"] as? [String: Any])
        derive["label"] = "DeriveSecreT"
        cases[0]["derive_secret"] = derive
        let report = MLSConformance.run(test: "crypto-basics", json: Array(try JSONSerialization.data(withJSONObject: cases)))
        XCTAssertEqual(report.failed, 1)
        XCTAssertTrue(report.failures.first?.contains("derive_secret.out") ?? false, report.failures.joined())
    }
}
