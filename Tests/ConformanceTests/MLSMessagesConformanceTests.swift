import Conformance
import Foundation
import TestSupport
import XCTest

/// The mlswg wire-format vectors, run through the same code path as `burrow conformance mls`.
final class MLSMessagesConformanceTests: XCTestCase {
    private func run(_ test: String, expectedCases: Int, file: StaticString = #filePath, line: UInt = #line) throws {
        let json = try [UInt8](Fixtures.data("mls/\(test).json"))
        let report = MLSConformance.run(test: test, json: json)
        XCTAssertEqual(report.failures, [], file: file, line: line)
        XCTAssertEqual(report.failed, 0, file: file, line: line)
        XCTAssertEqual(report.skipped, 0, file: file, line: line)
        XCTAssertEqual(report.passed, expectedCases, report.summaryLine, file: file, line: line)
    }

    func testDeserialization() throws { try run("deserialization", expectedCases: 14) }

    func testMessages() throws { try run("messages", expectedCases: 300) }

    /// A field that re-encodes differently, or has the wrong wire format, fails its case.
    func testMessagesDetectsMismatch() throws {
        let json = try [UInt8](Fixtures.data("mls/messages.json"))
        let value = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json)) as? [[String: String]])
        var first = value[0]
        var swapped = first
        swapped["mls_welcome"] = first["mls_group_info"]  // a GroupInfo where a Welcome belongs
        first["commit"] = first["commit"]! + "00"  // trailing byte
        var nonMinimal = value[0]
        // remove_proposal is a uint32: make it 5 bytes.
        nonMinimal["remove_proposal"] = nonMinimal["remove_proposal"]! + "00"
        let data = try JSONSerialization.data(withJSONObject: [first, swapped, nonMinimal])
        let report = MLSConformance.run(test: "messages", json: [UInt8](data))
        XCTAssertEqual(report.passed, 0)
        XCTAssertEqual(report.failed, 3)
    }

    /// Non-minimal headers and wrong expectations are failures, not passes.
    func testDeserializationDetectsBadCases() {
        let json = #"[{"vlbytes_header":"4005","length":5},{"vlbytes_header":"05","length":6},{"vlbytes_header":"c0","length":0},{"vlbytes_header":"0500","length":5}]"#
        let report = MLSConformance.run(test: "deserialization", json: Array(json.utf8))
        XCTAssertEqual(report.passed, 0)
        XCTAssertEqual(report.failed, 4)
    }
}
