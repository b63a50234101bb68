import Conformance
import Foundation
import TestSupport
import XCTest

/// The mlswg framing vectors (message-protection, transcript-hashes), run through the same code
/// path as `burrow conformance mls`.
final class MLSFramingConformanceTests: XCTestCase {
    private func run(_ test: String, json: [UInt8]) -> ConformanceReport { MLSConformance.run(test: test, json: json) }

    private func vector(_ test: String) throws -> [[String: Any]] {
        let json = try Fixtures.data("mls/\(test).json")
        return try XCTUnwrap(JSONSerialization.jsonObject(with: json) as? [[String: Any]])
    }

    private func json(_ cases: [[String: Any]]) throws -> [UInt8] {
        [UInt8](try JSONSerialization.data(withJSONObject: cases))
    }

    func testMessageProtection() throws {
        let report = run("message-protection", json: try [UInt8](Fixtures.data("mls/message-protection.json")))
        XCTAssertEqual(report.failures, [])
        XCTAssertEqual(report.failed, 0)
        XCTAssertEqual(report.skipped, 0)
        XCTAssertEqual(report.passed, 1, report.summaryLine)
    }

    func testTranscriptHashes() throws {
        let report = run("transcript-hashes", json: try [UInt8](Fixtures.data("mls/transcript-hashes.json")))
        XCTAssertEqual(report.failures, [])
        XCTAssertEqual(report.failed, 0)
        XCTAssertEqual(report.skipped, 0)
        XCTAssertEqual(report.passed, 1, report.summaryLine)
    }

    /// A tampered message, a wrong expected value or another signer fails its case; another
    /// suite is skipped.
    func testMessageProtectionDetectsBadCases() throws {
        let original = try vector("message-protection")[0]
        func hex(_ field: String) throws -> String { try XCTUnwrap(original[field] as? String, field) }
        /// The case with one hex digit of `field` changed (`index` counts from the end when negative).
        func flipped(_ field: String, at index: Int) throws -> [String: Any] {
            var copy = original
            var digits = Array(try hex(field))
            let i = index < 0 ? digits.count + index : index
            digits[i] = digits[i] == "0" ? "1" : "0"
            copy[field] = String(digits)
            return copy
        }
        var otherSigner = original
        otherSigner["signature_pub"] = String(repeating: "11", count: 32)
        var otherSuite = original
        otherSuite["cipher_suite"] = 3
        let cases = [
            try flipped("application_priv", at: -1),  // the AEAD tag
            try flipped("proposal_pub", at: -1),  // the membership tag
            try flipped("application", at: 0),  // the expected plaintext
            try flipped("membership_key", at: 0),
            otherSigner,
            otherSuite,
        ]
        let report = run("message-protection", json: try json(cases))
        XCTAssertEqual(report.passed, 0, report.failures.joined(separator: "\n"))
        XCTAssertEqual(report.failed, 5)
        XCTAssertEqual(report.skipped, 1)
    }

    func testTranscriptHashesDetectBadCases() throws {
        let original = try vector("transcript-hashes")[0]
        var wrongKey = original
        wrongKey["confirmation_key"] = String(repeating: "00", count: 32)
        var wrongInterim = original
        wrongInterim["interim_transcript_hash_before"] = String(repeating: "00", count: 32)
        var notACommit = original
        notACommit["authenticated_content"] = "00"
        let report = run("transcript-hashes", json: try json([wrongKey, wrongInterim, notACommit]))
        XCTAssertEqual(report.passed, 0)
        XCTAssertEqual(report.failed, 3)
    }
}
