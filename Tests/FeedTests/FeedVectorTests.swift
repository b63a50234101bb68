import Conformance
import Feed
import Foundation
import TestSupport
import XCTest

/// The published feed vectors (feed.md 13), through the same runner as `burrow conformance
/// feed`. Every case of a kind this build implements must pass; the counts pin how many ran, so
/// a kind that silently stopped running fails here.
final class FeedVectorTests: XCTestCase {
    private func run(_ file: String) throws -> ConformanceReport {
        FeedConformance.run(json: [UInt8](try Fixtures.data("feed/\(file)")))
    }

    func testEnvelopesCanonicalJSONContentsAndChains() throws {
        let report = try run("envelopes.json")
        XCTAssertEqual(report.failures, [])
        XCTAssertEqual(report.passed, 45, "19 canonical_json, 5 envelope, 13 content, 8 chain")
        XCTAssertEqual(report.skipped, 0)
    }

    func testAudiencesSelfContactsGroupAndOpening() throws {
        let report = try run("audiences.json")
        XCTAssertEqual(report.failures, [])
        XCTAssertEqual(report.passed, 17, "2 self, 2 contacts_key, 2 contacts, 2 group, 9 open")
        XCTAssertEqual(report.skipped, 0)
    }

    func testEnvelopeAndContentRejects() throws {
        let report = try run("reject.json")
        XCTAssertEqual(report.failures, [])
        XCTAssertEqual(report.passed, 89, "33 envelope_reject, 31 content_reject, 10 frame_reject, 5 link_reject, 7 event_reject, 3 chunk_reject")
        XCTAssertEqual(report.skipped, 0)
    }

    func testMLKEMAndBundles() throws {
        let report = try run("pq.json")
        XCTAssertEqual(report.failures, [])
        XCTAssertEqual(report.passed, 25, "1 keygen, 2 encaps, 4 decaps, 2 bundles, 7 bundle rejects, 3 exchanges, 6 feed-keys rejects")
        XCTAssertEqual(report.skipped, 0)
    }

    func testSyncFramesPresenceLinksPacketsAndSessions() throws {
        let report = try run("sync.json")
        XCTAssertEqual(report.failures, [])
        XCTAssertEqual(report.passed, 17, "7 frames, 2 presence, 1 link, 2 mesh packets, 1 relay event, 4 sessions")
        XCTAssertEqual(report.skipped, 0)
    }

    func testARunnerProvesNothingWithoutCases() {
        XCTAssertFalse(FeedConformance.run(json: Array("nope".utf8)).succeeded)
        XCTAssertFalse(FeedConformance.run(json: Array(#"{"format":"burrow-feed-v1-vectors","cases":[]}"#.utf8)).succeeded)
    }

    func testBase64URLIsStrict() {
        XCTAssertEqual(Base64URL.decode("AA"), [0])
        XCTAssertNil(Base64URL.decode("AB"), "unused bits must be zero")
        XCTAssertNil(Base64URL.decode("AA=="), "no padding")
        XCTAssertNil(Base64URL.decode("A"), "length 1 mod 4")
        XCTAssertNil(Base64URL.decode("A+"), "standard alphabet refused")
        XCTAssertNil(Base64URL.decode("AAAA", count: 4))
        for n in 0..<40 {
            let bytes = (0..<n).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            XCTAssertEqual(Base64URL.decode(Base64URL.encode(bytes), count: n), bytes)
        }
    }
}
