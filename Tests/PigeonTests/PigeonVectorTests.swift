import Conformance
import TestSupport
import XCTest

/// The published Pigeon vectors (`Tests/Fixtures/pigeon/`) through the runner that
/// `burrow conformance pigeon FILE` uses: every case of every file passes, and the counts are
/// the files' (so a case that silently disappeared would fail the test).
final class PigeonVectorTests: XCTestCase {
    func run(_ file: String) throws -> ConformanceReport {
        PigeonConformance.run(json: [UInt8](try Fixtures.data("pigeon/\(file)")))
    }

    func testCards() throws {
        let report = try run("cards.json")
        XCTAssertEqual(report.failures, [])
        XCTAssertEqual(report.passed, 6)  // 3 cards, 3 safety numbers
        XCTAssertEqual(report.failed, 0)
    }

    func testReject() throws {
        let report = try run("reject.json")
        XCTAssertEqual(report.failures, [])
        XCTAssertEqual(report.passed, 23)  // 13 card_reject, 1 card_accept, 9 scripts
        XCTAssertEqual(report.failed, 0)
    }

    func testConversations() throws {
        let report = try run("conversations.json")
        XCTAssertEqual(report.failures, [])
        XCTAssertEqual(report.passed, 2)
        XCTAssertEqual(report.failed, 0)
    }

    func testTransport() throws {
        let report = try run("transport.json")
        XCTAssertEqual(report.failures, [])
        XCTAssertEqual(report.passed, 2)
        XCTAssertEqual(report.failed, 0)
    }

    /// The runner fails what it should: not JSON, another format, an unknown kind, and a script
    /// whose expected frame was altered.
    func testRunnerCountsBrokenCasesAsFailed() throws {
        XCTAssertEqual(PigeonConformance.run(json: Array("nope".utf8)).failed, 1)
        XCTAssertEqual(PigeonConformance.run(json: Array(#"{"format":"other","cases":[]}"#.utf8)).failed, 1)
        let unknown = PigeonConformance.run(json: Array(#"{"format":"burrow-pigeon-v1-vectors","cases":[{"kind":"x"}]}"#.utf8))
        XCTAssertEqual(unknown.failed, 1)
        XCTAssertFalse(unknown.succeeded)

        var text = String(decoding: try Fixtures.data("pigeon/conversations.json"), as: UTF8.self)
        // The first occurrence of the first handshake1 is the `start` step's expected frame:
        // change its last byte (…a800 → …a801); the `deliver` steps keep the genuine frame.
        let original = "0b978208561057e50ffed111ce6501eb1f4aaf340c1cfc9996b7d52bca9fbb65d79bc20f7d20bb5b29015705d2bde10d0000019b76daa800"
        let range = try XCTUnwrap(text.range(of: original))
        text.replaceSubrange(range, with: String(original.dropLast()) + "1")
        let report = PigeonConformance.run(json: Array(text.utf8))
        XCTAssertEqual(report.passed, 1)
        XCTAssertEqual(report.failed, 1, "\(report.failures)")
    }
}
