import Foundation
import TestSupport
import XCTest

/// `share --source geoclue` (issue 23) end to end: `run` asks a GeoClue2 mock (python-dbusmock,
/// Tests/Fixtures/location/geoclue_template.py) on a private system bus for positions and
/// publishes them; another member reads them. A GeoClue that refuses us shows as
/// `location_denied` in `share status`, in words for people and as a code for scripts.
final class ShareGeoClueTests: XCTestCase {
    var root: URL!
    var relay: RelayProcess!
    var bus: PrivateBus!
    var pass: String { root.appendingPathComponent("pass").path }

    override func setUp() async throws {
        try DBusMockPrerequisites.require()
        root = URL(fileURLWithPath: "/tmp").appendingPathComponent("bw-geoclue-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        try "geoclue passphrase".write(to: root.appendingPathComponent("pass"), atomically: true, encoding: .utf8)
        relay = try await RelayProcess.start()
        bus = try await PrivateBus()
    }

    override func tearDown() async throws {
        relay?.stop()
        bus?.stop()
        if let root { try? FileManager.default.removeItem(at: root) }
    }

    private var systemBus: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = bus.address
        environment["PYTHONUNBUFFERED"] = "1"
        return environment
    }

    /// GeoClue on the private bus, with `parameters` (the template's JSON).
    private func geoclue(_ parameters: String) async throws -> PeerProcess {
        let mock = try PeerProcess(
            executable: URL(fileURLWithPath: DBusMockPrerequisites.python),
            arguments: ["-m", "dbusmock", "--template", Fixtures.url("location/geoclue_template.py").path, "-p", parameters],
            environment: systemBus)
        _ = try await mock.waitForLine(containing: "geoclue mock ready", timeout: .seconds(15))
        return mock
    }

    private func family() throws -> (alice: BurrowHome, bob: BurrowHome) {
        let alice = try BurrowHome.create(in: root, name: "alice", relay: relay.url, passphraseFile: pass)
        let bob = try BurrowHome.create(in: root, name: "bob", relay: relay.url, passphraseFile: pass)
        try bob.ok(["keypackage", "publish"])
        try alice.ok(["group", "create", "Family", "--invite", try bob.pubkey])
        try bob.ok(["sync"])
        try bob.ok(["invite", "accept", "Family"])
        return (alice, bob)
    }

    private func run(_ home: BurrowHome) async throws -> PeerProcess {
        let run = try PeerProcess(executable: BurrowProcess.binary, arguments: [
            "run", "--home", home.path, "--passphrase-file", pass, "--json", "--timeout", "5", "--no-embedded-relay"],
            environment: systemBus)
        _ = try await run.waitForLine(prefix: #"{"type":"ready""#, timeout: .seconds(30))
        return run
    }

    func testPositionsFromGeoClueArePublishedToTheFamily() async throws {
        let mock = try await geoclue(#"{"location": [-33.8688, 151.2093, 30.0]}"#)
        defer { mock.kill() }
        let (alice, bob) = try family()
        let started = try alice.ok(["share", "start", "Family", "--source", "geoclue", "--interval", "1m", "--battery", "off"])
        XCTAssertEqual((started["share"] as? [String: Any])?["source"] as? String, "geoclue")
        let run = try await run(alice)
        defer { run.stop() }

        let location = try await bob.location(of: try alice.pubkey, in: "Family", within: .seconds(60))
        XCTAssertEqual(try XCTUnwrap(location["lat"] as? Double), -33.8688, accuracy: 0.0001)
        XCTAssertEqual(try XCTUnwrap(location["lon"] as? Double), 151.2093, accuracy: 0.0001)
        XCTAssertEqual(try XCTUnwrap(location["acc"] as? Double), 30, accuracy: 0.01)
        XCTAssertEqual(location["interval"] as? Int, 60)
        let status = try XCTUnwrap((try alice.ok(["share", "status"])["shares"] as? [[String: Any]])?.first)
        XCTAssertNotNil(status["last_publish_at"] as? Int)
        XCTAssertTrue(status["error_code"] is NSNull, "\(status)")
    }

    func testAGeoClueThatRefusesIsReportedAsLocationDenied() async throws {
        let mock = try await geoclue(#"{"denied": true, "location": [48.8566, 2.3522, 20.0]}"#)
        defer { mock.kill() }
        let (alice, _) = try family()
        try alice.ok(["share", "start", "Family", "--source", "geoclue", "--battery", "off"])
        let run = try await run(alice)
        defer { run.stop() }

        let deadline = ContinuousClock.now + .seconds(30)
        var status: [String: Any]?
        while ContinuousClock.now < deadline, status?["error_code"] as? String == nil {
            status = (try alice.ok(["share", "status"])["shares"] as? [[String: Any]])?.first
            if status?["error_code"] as? String == nil { try await Task.sleep(for: .milliseconds(500)) }
        }
        XCTAssertEqual(status?["error_code"] as? String, "location_denied", String(describing: status))
        XCTAssertTrue(status?["last_publish_at"] is NSNull, "nothing was published")
        let human = try alice.human(["share", "status"]).stdout
        XCTAssertTrue(human.contains("problem: GeoClue refused location access"), human)
    }
}
