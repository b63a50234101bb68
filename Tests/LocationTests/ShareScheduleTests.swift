import Foundation
import Location
import TestSupport
import XCTest

/// The sharing schedule with the clock injected: hours of fixes in milliseconds.
final class ShareScheduleTests: XCTestCase {
    let start = 1_795_000_000.0
    let home = (lat: 52.52, lon: 13.405)

    func fix(_ t: Double, lat: Double, lon: Double, speed: Double? = nil, accuracy: Double = 8) throws -> Fix {
        try UnverifiedFix(mode: .threeD, time: t, latitude: lat, longitude: lon, altitude: 40, accuracy: accuracy, speed: speed)
            .validated(now: t, maximumAge: 3600)
    }

    /// A position `meters` north of home.
    func north(_ meters: Double) -> (Double, Double) { (home.lat + meters / 111_320, home.lon) }

    func testIntervalAndThresholdBounds() {
        XCTAssertThrowsError(try ShareSchedule(interval: 9))
        XCTAssertThrowsError(try ShareSchedule(interval: 3601))
        XCTAssertThrowsError(try ShareSchedule(interval: 60, batteryThreshold: 0))
        XCTAssertNoThrow(try ShareSchedule(interval: 10))
        XCTAssertNoThrow(try ShareSchedule(interval: 3600))
    }

    /// A drive with a long stop, a fix every 10 s for 3 hours at a 5-minute interval: the
    /// first fix publishes; while moving, one publish per interval; after two minutes still
    /// the node is stationary and backs off to 20 minutes; leaving the stop publishes once
    /// movement has lasted 30 s.
    func testDriveWithALongStop() throws {
        var schedule = try ShareSchedule(interval: 300)
        var publishes: [(t: Double, publish: ShareSchedule.Publish)] = []
        var position = 0.0
        for step in 0..<1080 {
            let t = start + Double(step) * 10
            let minute = Double(step) / 6
            // Drive 40 minutes at 15 m/s, stop 80 minutes, drive 60 minutes.
            let driving = minute < 40 || minute >= 120
            if driving { position += 150 }
            let (lat, lon) = north(position)
            let reading = try fix(t, lat: lat, lon: lon, speed: driving ? 15 : 0)
            if let p = schedule.receive(reading, now: t) { publishes.append((t, p)) }
            if let p = schedule.tick(now: t + 5) { publishes.append((t + 5, p)) }
        }
        XCTAssertEqual(publishes.first?.publish.reason, .first)
        let stopStart = start + 40 * 60, stopEnd = start + 120 * 60
        let duringStop = publishes.filter { $0.t > stopStart + 150 && $0.t < stopEnd }
        XCTAssertTrue(duringStop.allSatisfy { $0.publish.stationary && $0.publish.interval == 1200 }, "\(duringStop.map(\.publish))")
        // 80 minutes stopped at a 20-minute interval: at most four publishes, not sixteen.
        XCTAssertLessThanOrEqual(duringStop.count, 4)
        XCTAssertGreaterThanOrEqual(duringStop.count, 3)
        let left = try XCTUnwrap(publishes.first { $0.publish.reason == .leftStationary })
        XCTAssertEqual(left.t, stopEnd + 30, accuracy: 10, "published once movement lasted 30 s")
        XCTAssertFalse(left.publish.stationary)
        XCTAssertEqual(left.publish.interval, 300)
        // While moving, publishes are an interval apart (never closer, except leaving the stop).
        let moving = publishes.filter { !$0.publish.stationary && $0.publish.reason == .scheduled }
        for (a, b) in zip(moving, moving.dropFirst()) where b.t - a.t < 600 { XCTAssertGreaterThanOrEqual(b.t - a.t, 300) }
        XCTAssertEqual(publishes.filter { $0.t < stopStart }.count, 1 + 40 * 60 / 300 - 1, accuracy: 1)
    }

    /// A slow walk with a fix every second and no speed: movement adds up from where we
    /// stood, so it is noticed.
    func testSlowWalkWithoutSpeedLeavesStationary() throws {
        var schedule = try ShareSchedule(interval: 600)
        var t = start
        _ = schedule.receive(try fix(t, lat: home.lat, lon: home.lon), now: t)
        for _ in 0..<200 {
            t += 1
            _ = schedule.receive(try fix(t, lat: home.lat, lon: home.lon), now: t)
        }
        XCTAssertTrue(schedule.stationary)
        var left: ShareSchedule.Publish?
        for step in 1...120 where left == nil {
            t += 1
            let (lat, lon) = north(Double(step) * 1.2)
            left = schedule.receive(try fix(t, lat: lat, lon: lon), now: t)
        }
        XCTAssertEqual(left?.reason, .leftStationary)
    }

    /// A tunnel: no fix for longer than the interval, so the scheduled publish is skipped
    /// rather than showing the last position as current.
    func testNoStalePositionIsPublished() throws {
        var schedule = try ShareSchedule(interval: 60)
        XCTAssertNotNil(schedule.receive(try fix(start, lat: home.lat, lon: home.lon, speed: 10), now: start))
        XCTAssertNil(schedule.tick(now: start + 61), "the only fix is older than the interval")
        XCTAssertNotNil(schedule.receive(try fix(start + 90, lat: home.lat + 0.01, lon: home.lon, speed: 10), now: start + 90))
        XCTAssertEqual(schedule.nextWake(now: start + 90), start + 150)
    }

    /// The battery alert: one extra publish per crossing below the threshold.
    func testBatteryAlertOncePerCrossing() throws {
        var schedule = try ShareSchedule(interval: 3600)
        _ = schedule.receive(try fix(start, lat: home.lat, lon: home.lon), now: start)
        XCTAssertNil(schedule.receive(battery: 35, now: start + 1))
        let low = schedule.receive(battery: 19, now: start + 2)
        XCTAssertEqual(low?.reason, .batteryLow)
        XCTAssertEqual(low?.battery, 19)
        XCTAssertNil(schedule.receive(battery: 15, now: start + 3), "once per crossing")
        XCTAssertNil(schedule.receive(battery: 25, now: start + 4))
        XCTAssertEqual(schedule.receive(battery: 18, now: start + 5)?.reason, .batteryLow, "re-armed after charging")
    }

    /// Hours of schedule at a 10-second interval take milliseconds and wake exactly when due.
    func testTicksOnlyWhenDue() throws {
        var schedule = try ShareSchedule(interval: 10)
        var t = start
        var count = 0
        _ = schedule.receive(try fix(t, lat: home.lat, lon: home.lon, speed: 2), now: t)
        count += 1
        for _ in 0..<3600 {
            t = schedule.nextWake(now: t)
            _ = try fix(t - 1, lat: home.lat, lon: home.lon, speed: 2)
            _ = schedule.receive(try fix(t - 1, lat: home.lat, lon: home.lon, speed: 2), now: t - 1)
            if schedule.tick(now: t) != nil { count += 1 }
        }
        XCTAssertEqual(count, 3601)
        XCTAssertEqual(t - start, 36_000, accuracy: 1)
    }
}

final class FixAndGPSDTests: XCTestCase {
    let now = 1_795_000_000.0

    func testFixesThatAreNeverShown() {
        func check(_ fix: UnverifiedFix, _ error: FixError, maxAge: Double = 60) {
            XCTAssertThrowsError(try fix.validated(now: now, maximumAge: maxAge)) { XCTAssertEqual($0 as? FixError, error) }
        }
        check(UnverifiedFix(mode: .none, time: now, latitude: 1, longitude: 1), .noFix)
        check(UnverifiedFix(mode: .twoD, time: now, latitude: .nan, longitude: 1), .outOfRange)
        check(UnverifiedFix(mode: .twoD, time: now, latitude: 90.5, longitude: 1), .outOfRange)
        check(UnverifiedFix(mode: .twoD, time: now, latitude: 1, longitude: -180.1), .outOfRange)
        check(UnverifiedFix(mode: .twoD, time: now, latitude: 1, longitude: 1, accuracy: -1), .outOfRange)
        check(UnverifiedFix(mode: .twoD, time: now, latitude: 1, longitude: 1, speed: .infinity), .outOfRange)
        check(UnverifiedFix(mode: .twoD, time: now - 61, latitude: 1, longitude: 1), .stale)
        check(UnverifiedFix(mode: .twoD, time: now + 120, latitude: 1, longitude: 1), .fromTheFuture)
        let good = try? UnverifiedFix(mode: .twoD, time: now - 5, latitude: -33.9, longitude: -74.0, altitude: 12)
            .validated(now: now, maximumAge: 60)
        XCTAssertEqual(good?.latitude, -33.9)
        XCTAssertNil(good?.altitude, "a 2D fix has no altitude")
    }

    func testTPVReportsAndGarbage() throws {
        let line = #"{"class":"TPV","device":"/dev/pts/1","mode":3,"time":"2026-11-28T12:00:01.500Z","ept":0.005,"lat":40.7,"lon":-74.0,"altHAE":12.5,"eph":7.5,"speed":1.25}"#
        guard case .position(let fix) = try GPSDProtocol.parse(line: Array(line.utf8)) else { return XCTFail("a TPV is a position") }
        XCTAssertEqual(fix.mode, .threeD)
        XCTAssertEqual(fix.time, 1_795_867_201.5, accuracy: 0.001)
        XCTAssertEqual(fix.longitude, -74.0)
        XCTAssertEqual(fix.altitude, 12.5)
        XCTAssertEqual(fix.accuracy, 7.5)
        XCTAssertEqual(fix.speed, 1.25)
        let old = #"{"class":"TPV","mode":2,"time":"2026-11-28T12:00:01Z","lat":1,"lon":2,"epx":3,"epy":4}"#
        guard case .position(let older) = try GPSDProtocol.parse(line: Array(old.utf8)) else { return XCTFail() }
        XCTAssertEqual(older.accuracy, 5, "from epx and epy")
        guard case .position(let none) = try GPSDProtocol.parse(line: Array(#"{"class":"TPV","mode":1}"#.utf8)) else { return XCTFail() }
        XCTAssertEqual(none.mode, .none)
        XCTAssertEqual(try GPSDProtocol.parse(line: Array(#"{"class":"SKY","satellites":[]}"#.utf8)), .other("SKY"))

        func refused(_ text: String, _ error: GPSDError) {
            XCTAssertThrowsError(try GPSDProtocol.parse(line: Array(text.utf8)), text) { XCTAssertEqual($0 as? GPSDError, error, text) }
        }
        refused("not json at all", .notJSON)
        refused(#"{"mode":3}"#, .noClass)
        refused(#"[1,2,3]"#, .noClass)
        refused(#"{"class":"TPV","mode":"3"}"#, .badField("mode"))
        refused(#"{"class":"TPV","mode":7}"#, .badField("mode"))
        refused(#"{"class":"TPV","mode":3,"time":"yesterday","lat":1,"lon":2}"#, .badField("time"))
        refused(#"{"class":"TPV","mode":3,"time":"2026-13-28T12:00:01Z","lat":1,"lon":2}"#, .badField("time"))
        refused(#"{"class":"TPV","mode":3,"time":"2026-11-28T12:00:01.Z","lat":1,"lon":2}"#, .badField("time"))
        refused(#"{"class":"TPV","mode":3,"time":"2026-11-28T12:00:01Z","lat":"north","lon":2}"#, .badField("lat"))
        refused(#"{"class":"TPV","mode":3,"time":"2026-11-28T12:00:01Z","lon":2}"#, .badField("lat"))
        let long = "{\"class\":\"X\",\"pad\":\"" + String(repeating: "a", count: GPSDProtocol.maximumLine) + "\"}"
        refused(long, .lineTooLong(long.utf8.count))
        // At the bound: a line of exactly maximumLine bytes is read.
        let padding = GPSDProtocol.maximumLine - #"{"class":"X","pad":""}"#.utf8.count
        let atBound = "{\"class\":\"X\",\"pad\":\"" + String(repeating: "a", count: padding) + "\"}"
        XCTAssertEqual(atBound.utf8.count, GPSDProtocol.maximumLine)
        XCTAssertEqual(try GPSDProtocol.parse(line: Array(atBound.utf8)), .other("X"))
    }

    /// Fuzzed points fall inside the radius, cover the disc evenly (as many in the outer ring
    /// as its area says), and say at least the radius as their accuracy.
    func testFuzzIsUniformWithinTheRadius() throws {
        var rng = SplitMix64(seed: 0xF022)
        let fix = try UnverifiedFix(mode: .threeD, time: now, latitude: -33.9, longitude: 151.2, accuracy: 5).validated(now: now, maximumAge: 60)
        var outerHalfArea = 0
        let draws = 20_000
        for _ in 0..<draws {
            let fuzzed = LocationFuzz.apply(fix, radius: 200, using: &rng)
            let distance = fuzzed.distance(to: fix)
            XCTAssertLessThanOrEqual(distance, 200.5)
            XCTAssertEqual(fuzzed.accuracy, 200)
            if distance > 200 / 2.0.squareRoot() { outerHalfArea += 1 }
        }
        // The ring beyond R/√2 holds half the disc's area.
        XCTAssertEqual(Double(outerHalfArea) / Double(draws), 0.5, accuracy: 0.02)
        XCTAssertEqual(LocationFuzz.apply(fix, radius: 0, using: &rng), fix, "off is off")
    }
}
