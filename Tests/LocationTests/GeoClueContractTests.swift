import DBus
import Foundation
import Location
@testable import NodeRuntime
import TestSupport
import XCTest

/// GeoClue's sentinels for what it does not know, and its timestamp.
final class GeoClueLocationTests: XCTestCase {
    func testUnknownAltitudeAndSpeedAreLeftOutAndTheTimestampKept() throws {
        let flat = GeoClueLocation(latitude: -33.8688, longitude: 151.2093, accuracy: 25, seconds: 1_795_000_000, microseconds: 500_000)
        XCTAssertEqual(flat.reported, UnverifiedFix(mode: .twoD, time: 1_795_000_000.5, latitude: -33.8688, longitude: 151.2093,
                                                    accuracy: 25))
        let high = GeoClueLocation(latitude: 46.5, longitude: 7.9, accuracy: 5, altitude: 3454, speed: 1.5, seconds: 1_795_000_000)
        XCTAssertEqual(high.reported.mode, .threeD)
        XCTAssertEqual(high.reported.altitude, 3454)
        XCTAssertEqual(high.reported.speed, 1.5)
    }

    /// Whatever GeoClue says still passes the same checks as gpsd's fixes.
    func testAbsurdValuesFromTheBusAreNeverAFix() {
        let now = 1_795_000_000.0
        let future = GeoClueLocation(latitude: 1, longitude: 1, accuracy: 5, seconds: .max, microseconds: .max)
        XCTAssertThrowsError(try future.reported.validated(now: now, maximumAge: 60)) { XCTAssertEqual($0 as? FixError, .fromTheFuture) }
        let offEarth = GeoClueLocation(latitude: 91, longitude: 1, accuracy: 5, seconds: UInt64(now))
        XCTAssertThrowsError(try offEarth.reported.validated(now: now, maximumAge: 60)) { XCTAssertEqual($0 as? FixError, .outOfRange) }
        let negative = GeoClueLocation(latitude: 1, longitude: 1, accuracy: -5, seconds: UInt64(now))
        XCTAssertThrowsError(try negative.reported.validated(now: now, maximumAge: 60)) { XCTAssertEqual($0 as? FixError, .outOfRange) }
        let old = GeoClueLocation(latitude: 1, longitude: 1, accuracy: 5, seconds: UInt64(now) - 61)
        XCTAssertThrowsError(try old.reported.validated(now: now, maximumAge: 60)) { XCTAssertEqual($0 as? FixError, .stale) }
    }
}

/// `GeoClueReader` against a GeoClue2 mock (python-dbusmock with
/// Tests/Fixtures/location/geoclue_template.py) on a private dbus-daemon, as the BlueZ contract
/// tests do: the client it asks for, what it sets, Start and Stop, the positions it reads, and
/// how it reports a refusal, an absent GeoClue and one that leaves.
final class GeoClueContractTests: XCTestCase {
    var bus: PrivateBus!
    var mock: PeerProcess?
    var control: DBusConnection!

    override func setUp() async throws {
        try DBusMockPrerequisites.require()
        bus = try await PrivateBus()
        control = try DBusConnection(address: bus.address)
    }

    override func tearDown() async throws {
        mock?.kill()
        control?.close()
        bus?.stop()
    }

    private func startMock(denied: Bool = false) async throws {
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = bus.address
        environment["PYTHONUNBUFFERED"] = "1"
        let process = try PeerProcess(
            executable: URL(fileURLWithPath: DBusMockPrerequisites.python),
            arguments: ["-m", "dbusmock", "--template", Fixtures.url("location/geoclue_template.py").path, "-p", "{\"denied\": \(denied)}"],
            environment: environment)
        mock = process
        try await waitForOwner(true)
    }

    private func waitForOwner(_ owned: Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(15)
        while ContinuousClock.now < deadline {
            let answer = try? control.callBlocking("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "NameHasOwner",
                                                   [.string(GeoClueReader.bus)])
            if answer?.first?.boolValue == owned { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        XCTFail("org.freedesktop.GeoClue2 \(owned ? "never came up: \(mock?.standardError ?? "")" : "kept its owner")")
    }

    @discardableResult
    private func setLocation(_ lat: Double, _ lon: Double, accuracy: Double, altitude: Double = GeoClueLocation.unknownAltitude,
                             speed: Double = -1, at seconds: UInt64) throws -> String? {
        try control.callBlocking(GeoClueReader.bus, GeoClueReader.managerPath, "org.burrow.GeoClueMock", "SetLocation",
                                 [.double(lat), .double(lon), .double(accuracy), .double(altitude), .double(speed), .uint64(seconds)])
            .first?.stringValue
    }

    private func clients() throws -> [[String: DBusValue]] {
        let answer = try control.callBlocking(GeoClueReader.bus, GeoClueReader.managerPath, "org.burrow.GeoClueMock", "Clients")
        guard case .array(_, let items)? = answer.first else { return [] }
        return items.compactMap(\.dictValue)
    }

    /// Collects a stream's fixes as they come; `ended` once it finishes.
    final class Collector: @unchecked Sendable {
        private let lock = NSLock()
        private var fixes: [UnverifiedFix] = []
        private var finished = false

        init(_ stream: AsyncStream<UnverifiedFix>) {
            Task {
                for await fix in stream { self.lock.withLock { self.fixes.append(fix) } }
                self.lock.withLock { self.finished = true }
            }
        }

        var ended: Bool { lock.withLock { finished } }

        /// The `count`th fix, waiting up to 10 s for it.
        func fix(_ count: Int) async throws -> UnverifiedFix? {
            let deadline = ContinuousClock.now + .seconds(10)
            while ContinuousClock.now < deadline {
                if let fix = lock.withLock({ fixes.count >= count ? fixes[count - 1] : nil }) { return fix }
                try await Task.sleep(for: .milliseconds(20))
            }
            return nil
        }

        func waitForEnd() async throws -> Bool {
            let deadline = ContinuousClock.now + .seconds(10)
            while !ended, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
            return ended
        }
    }

    func testReadsPositionsAsAClientNamedBurrowAtExactAccuracyAndStopsOnClose() async throws {
        try await startMock()
        let now = UInt64(Date().timeIntervalSince1970)
        try setLocation(-33.8688, 151.2093, accuracy: 25, at: now)
        let (fixes, close) = try await GeoClueReader.positions(busAddress: bus.address)
        let collector = Collector(fixes)

        // The position known at Start arrives at once, then each new one.
        let got1 = try await collector.fix(1)
        let first = try XCTUnwrap(got1, "no position at Start")
        XCTAssertEqual(first, UnverifiedFix(mode: .twoD, time: Double(now), latitude: -33.8688, longitude: 151.2093, accuracy: 25))
        try setLocation(-33.8600, 151.2100, accuracy: 8, altitude: 12.5, speed: 1.4, at: now + 5)
        let got2 = try await collector.fix(2)
        let second = try XCTUnwrap(got2, "no position after SetLocation")
        XCTAssertEqual(second, UnverifiedFix(mode: .threeD, time: Double(now + 5), latitude: -33.86, longitude: 151.21, altitude: 12.5,
                                             accuracy: 8, speed: 1.4))
        XCTAssertNoThrow(try second.validated(now: Double(now + 5), maximumAge: 60))

        let client = try XCTUnwrap(try clients().first)
        XCTAssertEqual(client["DesktopId"]?.stringValue, "burrow")
        XCTAssertEqual(client["RequestedAccuracyLevel"]?.intValue, 8)
        XCTAssertEqual(client["Active"]?.boolValue, true)
        XCTAssertEqual(client["Calls"]?.stringsValue, ["Start"])

        close()
        let ended = try await collector.waitForEnd()
        XCTAssertTrue(ended, "the stream ends on close")
        let deadline = ContinuousClock.now + .seconds(5)
        while try clients().first?["Calls"]?.stringsValue != ["Start", "Stop"], ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        XCTAssertEqual(try clients().first?["Calls"]?.stringsValue, ["Start", "Stop"], "close stops the client")
    }

    func testARefusalIsDeniedAndAnAbsentGeoClueUnavailable() async throws {
        do {
            _ = try await GeoClueReader.positions(busAddress: bus.address)
            XCTFail("positions without GeoClue on the bus")
        } catch {
            guard case .unavailable(let reason) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(reason.contains("not running"), reason)
        }

        try await startMock(denied: true)
        do {
            _ = try await GeoClueReader.positions(busAddress: bus.address)
            XCTFail("positions although GeoClue refused")
        } catch {
            guard case .denied(let reason) = error else { return XCTFail("\(error)") }
            XCTAssertTrue(reason.contains("disallowed"), reason)
            XCTAssertTrue(error.description.hasPrefix("GeoClue refused location access"), error.description)
        }
        XCTAssertEqual(try clients().first?["Calls"]?.stringsValue, ["Start"])
        XCTAssertEqual(try clients().first?["Active"]?.boolValue, false)
    }

    func testTheStreamEndsWhenGeoClueLeavesTheBus() async throws {
        try await startMock()
        let (fixes, close) = try await GeoClueReader.positions(busAddress: bus.address)
        defer { close() }
        mock?.kill()
        try await waitForOwner(false)
        let ended = try await Collector(fixes).waitForEnd()
        XCTAssertTrue(ended, "the stream ends when GeoClue goes")
    }
}
