import Foundation
import TestSupport
import XCTest

/// An MDK 0.8.0 member (mdk-python) reads what `burrow share` publishes (issue 23): the
/// Whistle payload with the fields Whistle reads (`interval` in force, `stationary`), the
/// position within the fuzz radius of the shared one and `acc` raised to at least the radius.
final class LocationShareInteropTests: MarmotInteropFlows {
    func testMDKReadsSharedLocations() async throws {
        let alice = try await mdk("alice")
        let home = try burrow("burrow")
        let me = try home.pubkey
        let created = try XCTUnwrap(try home.ok(["group", "create", "Family", "--invite", alice.pubkey])["group"] as? [String: Any])
        let gid = try XCTUnwrap(created["nostr_group_id"] as? String)
        let joined = try await alice.sync()
        XCTAssertEqual(joined.welcomes.first?.accepted, true, "\(joined.welcomes)")

        try home.ok(["share", "start", gid, "--source", "fixed:51.5,-0.12", "--interval", "10s", "--fuzz", "50m", "--battery", "off"])
        let run = try PeerProcess(executable: BurrowProcess.binary, arguments: [
            "run", "--home", home.path, "--passphrase-file", passFile, "--json", "--timeout", "5", "--no-embedded-relay"])
        defer { run.stop() }
        _ = try await run.waitForLine(prefix: #"{"type":"ready""#, timeout: .seconds(30))

        var payloads: [[String: Any]] = []
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline, payloads.count < 2 {
            _ = try await alice.sync()
            payloads = try await alice.messages(group: gid).filter { $0.sender == me && $0.kind == 1 }.compactMap {
                try JSONSerialization.jsonObject(with: Data($0.content.utf8)) as? [String: Any]
            }
            if payloads.count < 2 { try await Task.sleep(for: .seconds(2)) }
        }
        XCTAssertGreaterThanOrEqual(payloads.count, 2, "two shares an interval apart reached MDK")
        for payload in payloads {
            XCTAssertEqual(payload["type"] as? String, "location")
            XCTAssertEqual(payload["interval"] as? Int, 10)
            XCTAssertEqual(payload["stationary"] as? Bool, false)
            XCTAssertEqual(payload["v"] as? Int, 1)
            XCTAssertGreaterThanOrEqual(payload["acc"] as? Double ?? 0, 50, "acc is at least the fuzz radius")
            let lat = try XCTUnwrap(payload["lat"] as? Double), lon = try XCTUnwrap(payload["lon"] as? Double)
            let north = (lat - 51.5) * 111_320, east = (lon + 0.12) * 111_320 * cos(51.5 * .pi / 180)
            XCTAssertLessThanOrEqual((north * north + east * east).squareRoot(), 50.5, "within the fuzz radius")
        }
        let first = try XCTUnwrap(payloads.first?["lat"] as? Double), second = try XCTUnwrap(payloads.dropFirst().first?["lat"] as? Double)
        XCTAssertNotEqual(first, second, "each publish draws its own blur")
    }
}
