import Conformance
import TestSupport
import XCTest

/// The mlswg Welcome and passive-client vectors, run through the same code path as
/// `burrow conformance mls`.
final class MLSGroupConformanceTests: XCTestCase {
    private func run(_ test: String, expectedCases: Int, file: StaticString = #filePath, line: UInt = #line) throws {
        let json = try [UInt8](Fixtures.data("mls/\(test).json"))
        let report = MLSConformance.run(test: test, json: json)
        XCTAssertEqual(report.failures, [], file: file, line: line)
        XCTAssertEqual(report.failed, 0, file: file, line: line)
        // The vendored files hold suite-1 cases only: every one must run and pass.
        XCTAssertEqual(report.skipped, 0, report.summaryLine, file: file, line: line)
        XCTAssertEqual(report.passed, expectedCases, report.summaryLine, file: file, line: line)
    }

    func testWelcome() throws { try run("welcome", expectedCases: 1) }

    func testPassiveClientWelcome() throws { try run("passive-client-welcome", expectedCases: 8) }

    func testPassiveClientHandlingCommit() throws { try run("passive-client-handling-commit", expectedCases: 13) }
}
