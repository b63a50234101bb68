import Conformance
import TestSupport
import XCTest

/// The mlswg tree vectors, run through the same code path as `burrow conformance mls`.
final class MLSTreeConformanceTests: XCTestCase {
    private func run(_ test: String, expectedCases: Int, file: StaticString = #filePath, line: UInt = #line) throws {
        let json = try [UInt8](Fixtures.data("mls/\(test).json"))
        let report = MLSConformance.run(test: test, json: json)
        XCTAssertEqual(report.failures, [], file: file, line: line)
        XCTAssertEqual(report.failed, 0, file: file, line: line)
        // The vendored files hold suite-1 cases only: every one must run and pass.
        XCTAssertEqual(report.skipped, 0, report.summaryLine, file: file, line: line)
        XCTAssertEqual(report.passed, expectedCases, report.summaryLine, file: file, line: line)
    }

    func testTreeMath() throws { try run("tree-math", expectedCases: 10) }

    func testTreeOperations() throws { try run("tree-operations", expectedCases: 5) }

    func testTreeValidation() throws { try run("tree-validation", expectedCases: 14) }

    func testTreeKEM() throws { try run("treekem", expectedCases: 11) }

    func testUnknownTestNameFails() {
        let report = MLSConformance.run(test: "no-such-test", json: Array("[]".utf8))
        XCTAssertEqual(report.failed, 1)
    }

    func testNonJSONFails() {
        let report = MLSConformance.run(test: "tree-math", json: Array("not json".utf8))
        XCTAssertEqual(report.failed, 1)
    }

    /// A corrupted expectation must be reported as a failure, not pass silently.
    func testTreeMathDetectsWrongExpectation() {
        let json = #"[{"n_leaves":2,"n_nodes":3,"root":1,"left":[null,0,null],"right":[null,2,null],"parent":[1,null,1],"sibling":[2,null,1]}]"#
        let report = MLSConformance.run(test: "tree-math", json: Array(json.utf8))
        XCTAssertEqual(report.passed, 0)
        XCTAssertEqual(report.failed, 1)
    }
}
