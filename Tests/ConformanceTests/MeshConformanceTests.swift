import Conformance
import TestSupport
import XCTest

/// Every public mesh vector file (`vectors/mesh`, vendored under `Tests/Fixtures/mesh`) through
/// the runner `burrow conformance mesh` uses: no failure, and exactly the published case count.
final class MeshConformanceTests: XCTestCase {
    func run(_ file: String, cases: Int, file sourceFile: StaticString = #filePath, line: UInt = #line) throws {
        let report = MeshConformance.run(json: [UInt8](try Fixtures.data("mesh/\(file)")))
        XCTAssertEqual(report.failures, [], file: sourceFile, line: line)
        XCTAssertEqual(report.failed, 0, file: sourceFile, line: line)
        XCTAssertEqual(report.passed, cases, file: sourceFile, line: line)
        XCTAssertEqual(report.summaryLine, "\(cases) passed, 0 failed", file: sourceFile, line: line)
    }

    func testPackets() throws { try run("packets.json", cases: 9) }
    func testFragments() throws { try run("fragments.json", cases: 8) }
    func testReject() throws { try run("reject.json", cases: 41) }
    func testPayloads() throws { try run("payloads.json", cases: 14) }
    func testForwarding() throws { try run("forwarding.json", cases: 10) }
    func testCPace() throws { try run("cpace.json", cases: 6) }
    func testInvite() throws { try run("invite.json", cases: 2) }

    func testRunnerCountsBrokenFilesAndCasesAsFailed() {
        XCTAssertEqual(MeshConformance.run(json: Array("not json".utf8)).failed, 1)
        XCTAssertEqual(MeshConformance.run(json: Array(#"{"format":"other","file":"packets.json","cases":[]}"#.utf8)).failed, 1)
        let broken = #"{"format":"burrow-mesh-v1-vectors","file":"packets.json","cases":[{"name":"x"},{"name":"y","mesh_seed":"zz"}]}"#
        let report = MeshConformance.run(json: Array(broken.utf8))
        XCTAssertEqual(report.passed, 0)
        XCTAssertEqual(report.failed, 2)
        XCTAssertFalse(report.succeeded)
        // A reject case whose frame is accepted fails.
        let reject = #"{"format":"burrow-mesh-v1-vectors","file":"reject.json","cases":[{"name":"z","now_ms":0,"frames":["0102"],"expect":{"error":"bad_ttl","at":0}}]}"#
        let rejectReport = MeshConformance.run(json: Array(reject.utf8))
        XCTAssertEqual(rejectReport.failed, 1)
        XCTAssertTrue(rejectReport.failures.first?.contains("truncated") ?? false, "\(rejectReport.failures)")
    }
}
