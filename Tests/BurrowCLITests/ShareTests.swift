import Foundation
import TestSupport
import XCTest

/// `burrow share` (issue 23): settings checked and stored, `run` publishing on its own from a
/// fixed source at the interval asked, the fields Whistle reads arriving at another member,
/// pause, status, and a share that outlives a restart of `run`.
final class ShareTests: XCTestCase {
    var root: URL!
    var relay: RelayProcess!
    var pass: String { root.appendingPathComponent("pass").path }

    override func setUp() async throws {
        root = URL(fileURLWithPath: "/tmp").appendingPathComponent("bw-share-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        try "share passphrase".write(to: root.appendingPathComponent("pass"), atomically: true, encoding: .utf8)
        relay = try await RelayProcess.start()
    }

    override func tearDown() async throws {
        relay?.stop()
        try? FileManager.default.removeItem(at: root)
    }

    func home(_ name: String) throws -> BurrowHome {
        try BurrowHome.create(in: root, name: name, relay: relay.url, passphraseFile: pass)
    }

    func runProcess(_ home: BurrowHome) throws -> PeerProcess {
        try PeerProcess(executable: BurrowProcess.binary, arguments: [
            "run", "--home", home.path, "--passphrase-file", pass, "--json", "--timeout", "5", "--no-embedded-relay"])
    }

    func testSettingsAreCheckedAndRunSharesOnItsOwn() async throws {
        let alice = try home("alice"), bob = try home("bob")
        try bob.ok(["keypackage", "publish"])
        try alice.ok(["group", "create", "Family", "--invite", try bob.pubkey])
        try bob.ok(["sync"])
        try bob.ok(["invite", "accept", "Family"])

        XCTAssertEqual(try alice.errorCode(["share", "start", "Family", "--interval", "5s"]), "invalid_input")
        XCTAssertEqual(try alice.errorCode(["share", "start", "Family", "--interval", "2h"]), "invalid_input")
        XCTAssertEqual(try alice.errorCode(["share", "start", "Family", "--fuzz", "30m"]), "invalid_input")
        XCTAssertEqual(try alice.errorCode(["share", "start", "Family", "--source", "carrier-pigeon"]), "invalid_input")
        XCTAssertEqual(try alice.errorCode(["share", "start", "Family", "--source", "fixed:91,0"]), "invalid_input")
        XCTAssertEqual(try alice.errorCode(["share", "start", "Nowhere", "--source", "fixed:1,1"]), "unknown_group")
        XCTAssertEqual(try alice.errorCode(["share", "stop", "Family"]), "invalid_input", "not sharing yet")
        XCTAssertEqual((try alice.ok(["share", "status"])["shares"] as? [Any])?.count, 0)

        let started = try XCTUnwrap(try alice.ok(["share", "start", "Family", "--source", "fixed:-33.9,151.2", "--interval", "10s",
                                                  "--battery", "off"])["share"] as? [String: Any])
        XCTAssertEqual(started["source"] as? String, "fixed:-33.9,151.2")
        XCTAssertEqual(started["interval"] as? Int, 10)
        XCTAssertTrue(try alice.human(["share", "status"]).stdout.contains("Family: sharing from fixed:-33.9,151.2, every 10 s"))

        // `run` publishes without anyone typing a position.
        let run = try runProcess(alice)
        defer { run.stop() }
        _ = try await run.waitForLine(prefix: #"{"type":"ready""#, timeout: .seconds(30))
        let first = try await bob.location(of: try alice.pubkey, in: "Family", within: .seconds(30))
        XCTAssertEqual(first["lat"] as? Double, -33.9)
        XCTAssertEqual(first["lon"] as? Double, 151.2)
        XCTAssertEqual(first["interval"] as? Int, 10)
        XCTAssertEqual(first["stationary"] as? Bool, false)
        let firstTime = try XCTUnwrap(first["ts"] as? Int)
        // The next one an interval later.
        let second = try await bob.location(of: try alice.pubkey, in: "Family", within: .seconds(30)) { ($0["ts"] as? Int ?? 0) > firstTime }
        XCTAssertGreaterThanOrEqual((second["ts"] as? Int ?? 0) - firstTime, 9)
        let status = try XCTUnwrap((try alice.ok(["share", "status"])["shares"] as? [[String: Any]])?.first)
        let lastPublish = try XCTUnwrap(status["last_publish_at"] as? Int)
        // Where the schedule stands: a fixed spot is still, but stillness needs 2 minutes to show.
        XCTAssertEqual(status["stationary"] as? Bool, false)
        XCTAssertEqual(status["interval_in_force"] as? Int, 10)
        let next = try XCTUnwrap(status["next_publish_at"] as? Int)
        XCTAssertTrue((lastPublish + 9...lastPublish + 11).contains(next), "next \(next), last \(lastPublish)")
        XCTAssertTrue(try alice.human(["share", "status"]).stdout.contains("moving, every 10 s, next publish "))

        // Paused: nothing more; a restart of `run` keeps the share (and its pause).
        try alice.ok(["share", "pause", "Family"])
        run.stop()
        let again = try runProcess(alice)
        defer { again.stop() }
        _ = try await again.waitForLine(prefix: #"{"type":"ready""#, timeout: .seconds(30))
        let paused = try XCTUnwrap((try alice.ok(["share", "status"])["shares"] as? [[String: Any]])?.first)
        XCTAssertEqual(paused["paused"] as? Bool, true)
        try alice.ok(["share", "resume"])
        let resumed = try XCTUnwrap((try alice.ok(["share", "status"])["shares"] as? [[String: Any]])?.first)
        XCTAssertEqual(resumed["paused"] as? Bool, false)
        let lastBefore = try XCTUnwrap(resumed["last_publish_at"] as? Int)
        let deadline = ContinuousClock.now + .seconds(30)
        var published = lastBefore
        while ContinuousClock.now < deadline, published == lastBefore {
            try await Task.sleep(for: .seconds(1))
            published = (try alice.ok(["share", "status"])["shares"] as? [[String: Any]])?.first?["last_publish_at"] as? Int ?? lastBefore
        }
        XCTAssertGreaterThan(published, lastBefore, "the restarted run shares again")
        try alice.ok(["share", "stop", "Family"])
        XCTAssertEqual((try alice.ok(["share", "status"])["shares"] as? [Any])?.count, 0)
    }

    /// Bob's `run` prints a `location` line per update, one `battery_low` alert per fall below
    /// 20 %, and one `stale` alert when Alice's location is older than twice her interval.
    func testRunPrintsLocationLinesAndAlertsOncePerCrossing() async throws {
        let alice = try home("alice"), bob = try home("bob")
        try bob.ok(["keypackage", "publish"])
        try alice.ok(["group", "create", "Family", "--invite", try bob.pubkey])
        try bob.ok(["sync"])
        try bob.ok(["invite", "accept", "Family"])
        let a = try alice.pubkey
        let bobRun = try PeerProcess(executable: BurrowProcess.binary, arguments: [
            "run", "--home", bob.path, "--passphrase-file", pass, "--json", "--timeout", "5", "--no-embedded-relay",
            "--maintenance-interval", "1"])
        defer { bobRun.stop() }
        _ = try await bobRun.waitForLine(prefix: #"{"type":"ready""#, timeout: .seconds(30))

        for battery in ["50", "15", "10"] {
            try alice.ok(["location", "Family", "--lat", "-33.9", "--lon", "151.2", "--batt", battery])
            _ = try await bobRun.waitForLine(containing: #""batt":\#(battery),"interval""#, timeout: .seconds(20))
        }
        let alerts = { bobRun.lines.filter { $0.contains(#""type":"alert""#) } }
        XCTAssertEqual(alerts().count, 1, "one alert for one fall below 20 %: \(alerts())")
        XCTAssertTrue(alerts().first?.contains(#""alert":"battery_low""#) ?? false)
        XCTAssertTrue(alerts().first?.contains(#""batt":15"#) ?? false)
        XCTAssertTrue(bobRun.lines.contains { $0.hasPrefix(#"{"type":"location""#) && $0.contains(a) })

        // Shared at 10 s, then stopped: stale after 20 s, said once.
        try alice.ok(["share", "start", "Family", "--source", "fixed:-33.9,151.2", "--interval", "10s", "--battery", "off"])
        let aliceRun = try PeerProcess(executable: BurrowProcess.binary, arguments: [
            "run", "--home", alice.path, "--passphrase-file", pass, "--json", "--timeout", "5", "--no-embedded-relay"])
        defer { aliceRun.stop() }
        _ = try await bobRun.waitForLine(containing: #""interval":10,"stationary""#, timeout: .seconds(30))
        aliceRun.stop()
        let stale = try await bobRun.waitForLine(containing: #""alert":"stale""#, timeout: .seconds(40))
        XCTAssertTrue(stale.contains(a), stale)
        try await Task.sleep(for: .seconds(3))
        XCTAssertEqual(bobRun.lines.filter { $0.contains(#""alert":"stale""#) }.count, 1, "once per stale location")
    }

    /// History, GPX and retention: every location in time order, per member and since a time;
    /// a GPX 1.1 file valid against TopoGrafix's schema (xmllint); `--keep` bounded.
    func testHistoryAndGPX() throws {
        let alice = try home("alice"), bob = try home("bob")
        try bob.ok(["keypackage", "publish"])
        try alice.ok(["group", "create", "Family", "--invite", try bob.pubkey])
        try bob.ok(["sync"])
        try bob.ok(["invite", "accept", "Family"])
        try alice.ok(["profile", "set", "--name", "Alice <&>"])
        for (lat, lon) in [("-33.90", "151.20"), ("-33.91", "151.21"), ("-33.92", "151.22")] {
            try alice.ok(["location", "Family", "--lat", lat, "--lon", lon, "--alt", "12.5"])
        }
        try bob.ok(["location", "Family", "--lat", "40.7", "--lon", "-74.0"])
        try bob.ok(["sync"])
        let all = try XCTUnwrap(try bob.ok(["locations", "Family", "--history"])["locations"] as? [[String: Any]])
        XCTAssertEqual(all.count, 4)
        let alices = try XCTUnwrap(try bob.ok(["locations", "Family", "--history", "--member", try alice.pubkey])["locations"] as? [[String: Any]])
        XCTAssertEqual(alices.compactMap { $0["lat"] as? Double }, [-33.90, -33.91, -33.92])
        let future = Int(Date().timeIntervalSince1970) + 3600
        XCTAssertEqual((try bob.ok(["locations", "Family", "--history", "--since", String(future)])["locations"] as? [Any])?.count, 0)
        XCTAssertEqual(try bob.errorCode(["locations", "Family", "--member", try alice.pubkey]), "usage")
        XCTAssertEqual(try bob.errorCode(["locations", "Family", "--keep", "0"]), "invalid_input")
        XCTAssertEqual(try bob.ok(["locations", "Family", "--keep", "7"])["keep_days"] as? Int, 7)

        let gpx = root.appendingPathComponent("family.gpx").path
        let written = try bob.ok(["locations", "Family", "--gpx", gpx])
        XCTAssertEqual(written["gpx"] as? String, gpx)
        let document = try String(contentsOfFile: gpx, encoding: .utf8)
        XCTAssertEqual(document.components(separatedBy: "<trk>").count - 1, 2, "a track per member")
        XCTAssertEqual(document.components(separatedBy: "<trkpt ").count - 1, 4)
        let schema = Fixtures.url("location/gpx-1.1.xsd").path
        let check = try BurrowProcess.run(["--noout", "--schema", schema, gpx], executable: URL(fileURLWithPath: "/usr/bin/xmllint"))
        XCTAssertEqual(check.status, 0, check.stdout + check.stderr)
        XCTAssertTrue(check.stderr.contains("validates"), check.stderr)
    }
}
