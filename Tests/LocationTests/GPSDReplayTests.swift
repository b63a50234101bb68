import Foundation
import Location
@testable import NodeRuntime
import TestSupport
import XCTest

/// The long tracks of Tests/Fixtures/location replayed through Debian's gpsd (gpsfake, fast)
/// and read by `GPSDReader` as `run` reads them; the schedule runs on the fixes' own times (its
/// clock is injected), so 50 minutes of driving take seconds and the publishes are exactly
/// those a node would make on the road.
final class GPSDReplayTests: XCTestCase {
    struct Replay {
        var publishes: [(t: Double, publish: ShareSchedule.Publish)] = []
        var rejected: [FixError: Int] = [:]
        var fixes = 0
    }

    override func setUp() async throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/gpsfake") else {
            throw XCTSkip("gpsfake is not installed: `make test` installs gpsd-clients")
        }
    }

    /// gpsfake waits for its first client (no `-n`), then feeds the whole track once (`-1`) at
    /// 2 ms a sentence, after ten minutes of fix-less lead-in (`nmea.py lead`: gpsd's first second
    /// goes to finding the device's protocol). The replay ends with the track's last second
    /// (`seconds` after its start): gpsfake keeps gpsd and its clients waiting for a while after.
    private func replay(_ track: String, seconds: Double, interval: Int64, start: Double) async throws -> Replay {
        let led = FileManager.default.temporaryDirectory.appendingPathComponent("lead-\(UUID().uuidString.prefix(8))-\(track)")
        defer { try? FileManager.default.removeItem(at: led) }
        let made = try BurrowProcess.run([Fixtures.url("location/nmea.py").path, "lead", Fixtures.url("location/\(track)").path, led.path, "600"],
                                         executable: URL(fileURLWithPath: "/usr/bin/python3"))
        XCTAssertEqual(made.status, 0, made.stderr)
        let port = try LoopbackPorts.free(1, .tcp)[0]
        let gpsfake = try PeerProcess(executable: URL(fileURLWithPath: "/usr/bin/gpsfake"),
                                      arguments: ["-q", "-1", "-c", "0.002", "-P", String(port), led.path])
        defer { gpsfake.stop() }
        var connection: (fixes: AsyncStream<UnverifiedFix>, close: @Sendable () -> Void)?
        let deadline = ContinuousClock.now + .seconds(20)
        while connection == nil {
            do { connection = try await GPSDReader.positions(host: "127.0.0.1", port: port) } catch {
                guard ContinuousClock.now < deadline else { throw error }
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        guard let connection else { throw XCTSkip("unreachable") }
        defer { connection.close() }
        var schedule = try ShareSchedule(interval: interval)
        var result = Replay()
        for await reported in connection.fixes {
            // The track's clock: each report happens at its fix time (gpsd stamps no-fix
            // reports with none: they keep the previous second).
            let now = reported.mode == .none ? (result.publishes.last?.t ?? start) : reported.time
            do {
                let fix = try reported.validated(now: now, maximumAge: Double(schedule.intervalInForce))
                result.fixes += 1
                if let plan = schedule.receive(fix, now: now) { result.publishes.append((now - start, plan)) }
                if reported.time >= start + seconds - 1 { break }
            } catch {
                // The lead-in is not the track's.
                if result.fixes > 0 { result.rejected[error, default: 0] += 1 }
            }
        }
        return result
    }

    /// 2026-01-01 08:00:00 UTC, where nmea.py starts every track.
    let trackStart = 1_767_254_400.0

    func testADriveWithALongStopThroughGpsdPublishesSixTimesAndBacksOffWhileStopped() async throws {
        let replay = try await replay("drive-with-stop.nmea", seconds: 3000, interval: 300, start: trackStart)
        XCTAssertGreaterThanOrEqual(replay.fixes, 2990, "gpsd reported nearly every second of 50 minutes")
        XCTAssertEqual(replay.rejected, [:])
        // 10 minutes driving: at 0, 5 and 10 minutes. Stopped from 10:00, stationary from 12:00:
        // one publish at the 20-minute interval (30:00) instead of six. Moving again at 40:00:
        // published once it lasted 30 s, then every 5 minutes.
        let expected: [(Double, ShareSchedule.Reason, Bool, Int64)] = [
            (0, .first, false, 300), (300, .scheduled, false, 300), (600, .scheduled, false, 300),
            (1800, .scheduled, true, 1200), (2430, .leftStationary, false, 300), (2730, .scheduled, false, 300),
        ]
        XCTAssertEqual(replay.publishes.count, expected.count, "\(replay.publishes.map { ($0.t, $0.publish.reason) })")
        for (got, want) in zip(replay.publishes, expected) {
            XCTAssertEqual(got.t, want.0, accuracy: 2)
            XCTAssertEqual(got.publish.reason, want.1)
            XCTAssertEqual(got.publish.stationary, want.2)
            XCTAssertEqual(got.publish.interval, want.3)
        }
        // South and east of the equator and Greenwich: the last publish is 15 m/s × 20 min north of home.
        let last = try XCTUnwrap(replay.publishes.last?.publish.fix)
        XCTAssertEqual(last.latitude, -33.8688 + (600 + 330) * 15 / 111_320, accuracy: 0.0005)
        XCTAssertEqual(last.longitude, 151.2093, accuracy: 0.00001)
    }

    func testATunnelPublishesNothingWithoutAFixAndResumesWhenItReturns() async throws {
        let replay = try await replay("tunnel.nmea", seconds: 120, interval: 10, start: trackStart)
        XCTAssertEqual(replay.rejected[.noFix] ?? 0, 60, accuracy: 2, "a minute with no fix")
        let times = replay.publishes.map(\.t)
        XCTAssertFalse(times.contains { $0 > 29 && $0 < 90 }, "nothing published in the tunnel: \(times)")
        XCTAssertEqual(times.filter { $0 < 30 }, [0, 10, 20])
        let out = try XCTUnwrap(replay.publishes.first { $0.t >= 90 })
        XCTAssertEqual(out.t, 90, accuracy: 1, "at once when the fix returns: the interval passed in the dark")
        XCTAssertEqual(out.publish.fix.latitude, -33.8688 + 15 * 90 / 111_320, accuracy: 0.0002)
    }
}
