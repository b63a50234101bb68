import Foundation
import TestSupport
import XCTest

/// `share` from Debian's gpsd (issue 23): gpsfake replays a walk kept in
/// Tests/Fixtures/location (its times moved to now), `run` reads gpsd's reports over its JSON
/// protocol and publishes; another member reads the positions of the walk. When gpsd goes,
/// `share status` says so.
final class ShareGPSDTests: XCTestCase {
    var root: URL!
    var relay: RelayProcess!
    var pass: String { root.appendingPathComponent("pass").path }

    override func setUp() async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/gpsfake") else {
            throw XCTSkip("gpsfake is not installed: `make test` installs gpsd-clients")
        }
        root = URL(fileURLWithPath: "/tmp").appendingPathComponent("bw-gpsd-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        try "gpsd passphrase".write(to: root.appendingPathComponent("pass"), atomically: true, encoding: .utf8)
        relay = try await RelayProcess.start()
    }

    override func tearDown() async throws {
        relay?.stop()
        if let root { try? FileManager.default.removeItem(at: root) }
    }

    func testAWalkReplayedByGpsfakeIsPublishedAndAGoneGpsdIsReported() async throws {
        let alice = try BurrowHome.create(in: root, name: "alice", relay: relay.url, passphraseFile: pass)
        let bob = try BurrowHome.create(in: root, name: "bob", relay: relay.url, passphraseFile: pass)
        try bob.ok(["keypackage", "publish"])
        try alice.ok(["group", "create", "Family", "--invite", try bob.pubkey])
        try bob.ok(["sync"])
        try bob.ok(["invite", "accept", "Family"])

        let port = try LoopbackPorts.free(1, .tcp)[0]
        try alice.ok(["share", "start", "Family", "--source", "gpsd:127.0.0.1:\(port)", "--interval", "10s", "--battery", "off"])
        let run = try PeerProcess(executable: BurrowProcess.binary, arguments: [
            "run", "--home", alice.path, "--passphrase-file", pass, "--json", "--timeout", "5", "--no-embedded-relay"])
        defer { run.stop() }
        _ = try await run.waitForLine(prefix: #"{"type":"ready""#, timeout: .seconds(30))

        // The walk, its first fix now, at one fix a second.
        let track = root.appendingPathComponent("walk-now.nmea")
        let retimed = try BurrowProcess.run([Fixtures.url("location/nmea.py").path, "retime", Fixtures.url("location/walk.nmea").path, track.path],
                                            executable: URL(fileURLWithPath: "/usr/bin/python3"))
        XCTAssertEqual(retimed.status, 0, retimed.stderr)
        let gpsfake = try PeerProcess(executable: URL(fileURLWithPath: "/usr/bin/gpsfake"),
                                      arguments: ["-q", "-1", "-c", "0.5", "-n", "-P", String(port), track.path])
        defer { gpsfake.stop() }

        // Bob reads a position of the walk (south and east: negative latitude), at 10 s.
        let location = try await bob.location(of: try alice.pubkey, in: "Family", within: .seconds(60))
        XCTAssertEqual(try XCTUnwrap(location["lat"] as? Double), -33.8688, accuracy: 0.002)
        XCTAssertEqual(try XCTUnwrap(location["lon"] as? Double), 151.2093, accuracy: 0.001)
        XCTAssertEqual(location["interval"] as? Int, 10)
        // gpsd's eph once it has one (its very first report may come without).
        let accuracy = try XCTUnwrap(location["acc"] as? Double)
        XCTAssertTrue(accuracy == 0 || abs(accuracy - 17.1) < 0.5, "\(accuracy)")
        let status = try XCTUnwrap((try alice.ok(["share", "status"])["shares"] as? [[String: Any]])?.first)
        XCTAssertNotNil(status["last_publish_at"] as? Int)

        // gpsd gone: the reader retries, and the status says what is wrong.
        gpsfake.stop()
        let problemDeadline = ContinuousClock.now + .seconds(30)
        var problem: String?
        while ContinuousClock.now < problemDeadline, problem == nil {
            problem = (try alice.ok(["share", "status"])["shares"] as? [[String: Any]])?.first?["error"] as? String
            if problem == nil { try await Task.sleep(for: .milliseconds(500)) }
        }
        XCTAssertTrue(problem?.contains("gpsd at 127.0.0.1:\(port)") ?? false, String(describing: problem))
        XCTAssertTrue(try alice.human(["share", "status"]).stdout.contains("problem: gpsd at"))
    }
}
