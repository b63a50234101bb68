/// When a node shares its location, as Whistle does on phones (issue 23), as a value: fixes,
/// battery readings and the clock go in; what to publish and when to wake come out. No
/// source, store, relay or clock is reached, so tests run hours of schedule in milliseconds.
///
/// - The interval (10 s to 1 h, default 3600 s) applies while moving; while stationary it is
///   backed off four times.
/// - "Moving" only after 30 s of sustained movement (a fix farther than the movement radius
///   from where we stood, or a speed of walking pace); leaving stationary publishes at once.
///   "Stationary" again after 120 s with every fix within the radius.
/// - A fix older than the interval in force is never published (no stale positions).
/// - Battery: one extra publish when it falls below the threshold (default 20 %), once per
///   crossing; it re-arms when the battery is back at or above the threshold.
public struct ShareSchedule: Sendable {
    public static let intervalRange: ClosedRange<Int64> = 10...3600
    public static let defaultInterval: Int64 = 3600
    /// The stationary back-off.
    public static let stationaryFactor: Int64 = 4
    /// Movement must last this long to count.
    public static let movementConfirmation: Double = 30
    /// With no movement this long we are stationary.
    public static let stillnessConfirmation: Double = 120
    /// Metres from where we stood that count as movement (at least the fix's accuracy).
    public static let movementRadius: Double = 50
    /// Walking pace, in metres per second.
    public static let movingSpeed: Double = 1.0

    public enum Reason: String, Sendable, Equatable {
        /// The first fix after starting.
        case first
        /// The interval in force elapsed.
        case scheduled
        /// We started moving after standing still.
        case leftStationary = "left_stationary"
        /// The battery fell below the threshold.
        case batteryLow = "battery_low"
    }

    /// One publish: the fix and the fields Whistle reads with it.
    public struct Publish: Sendable, Equatable {
        public var fix: Fix
        public var stationary: Bool
        /// The interval in force (receivers call us stale after twice this).
        public var interval: Int64
        public var battery: Int64?
        public var reason: Reason
    }

    public let interval: Int64
    public let batteryThreshold: Int64

    /// Whether we stand still, and since when the current movement or stillness began.
    public private(set) var stationary = false
    private var anchor: Fix?
    /// When movement away from where we stand began (while stationary).
    private var movingSince: Double?
    /// When the current window of stillness began (while moving).
    private var stillSince: Double?
    private var latest: Fix?
    public private(set) var lastPublish: Double?
    private var battery: Int64?
    private var batteryAlertArmed = true
    private var pendingReasons: [Reason] = []

    public init(interval: Int64 = ShareSchedule.defaultInterval, batteryThreshold: Int64 = 20) throws(ShareScheduleError) {
        guard Self.intervalRange.contains(interval) else { throw .intervalOutOfRange(interval) }
        guard (1...99).contains(batteryThreshold) else { throw .thresholdOutOfRange(batteryThreshold) }
        self.interval = interval
        self.batteryThreshold = batteryThreshold
    }

    /// The interval in force: backed off while stationary.
    public var intervalInForce: Int64 { stationary ? interval * Self.stationaryFactor : interval }

    /// A validated fix arrived at `now`; what, if anything, to publish now.
    ///
    /// `anchor` is where we stand (while stationary) or where the current window of stillness
    /// began (while moving); movement is measured from it, so a slow walk with frequent fixes
    /// still adds up to leaving the radius.
    public mutating func receive(_ fix: Fix, now: Double) -> Publish? {
        latest = fix
        guard let reference = anchor else {
            anchor = fix
            stillSince = now
            return publish(.first, now: now)
        }
        let radius = max(Self.movementRadius, fix.accuracy)
        let moved = fix.distance(to: reference) > radius || (fix.speed ?? 0) >= Self.movingSpeed
        if stationary {
            guard moved else {
                movingSince = nil
                return due(now: now)
            }
            if movingSince == nil { movingSince = now }
            if let since = movingSince, now - since >= Self.movementConfirmation {
                stationary = false
                movingSince = nil
                anchor = fix
                stillSince = now
                return publish(.leftStationary, now: now)
            }
            return due(now: now)
        }
        if moved {
            anchor = fix
            stillSince = now
        } else if let since = stillSince, now - since >= Self.stillnessConfirmation {
            stationary = true
        }
        return due(now: now)
    }

    /// A battery reading (percent); a fall below the threshold publishes once.
    public mutating func receive(battery percent: Int64, now: Double) -> Publish? {
        let level = min(100, max(0, percent))
        battery = level
        if level >= batteryThreshold {
            batteryAlertArmed = true
            return nil
        }
        guard batteryAlertArmed else { return nil }
        batteryAlertArmed = false
        return publish(.batteryLow, now: now)
    }

    /// The clock moved on: a scheduled publish when the interval in force elapsed and the
    /// latest fix is recent enough to show.
    public mutating func tick(now: Double) -> Publish? { due(now: now) }

    /// When the caller should call `tick` next: the next scheduled publish. The state changes
    /// only with fixes, so there is no wake-up between publishes; ask again after each input.
    public func nextWake(now: Double) -> Double {
        guard let lastPublish else { return now + Double(interval) }
        return max(now, lastPublish + Double(intervalInForce))
    }

    private mutating func due(now: Double) -> Publish? {
        guard let last = lastPublish, now - last >= Double(intervalInForce) else { return nil }
        return publish(.scheduled, now: now)
    }

    private mutating func publish(_ reason: Reason, now: Double) -> Publish? {
        // Never a position older than the interval in force.
        guard let fix = latest, now - fix.time <= Double(intervalInForce) else { return nil }
        lastPublish = now
        return Publish(fix: fix, stationary: stationary, interval: intervalInForce, battery: battery, reason: reason)
    }
}

public enum ShareScheduleError: Error, Equatable, Sendable, CustomStringConvertible {
    case intervalOutOfRange(Int64)
    case thresholdOutOfRange(Int64)

    public var description: String {
        switch self {
        case .intervalOutOfRange(let seconds): return "an interval of \(seconds) s is outside 10 s … 1 h"
        case .thresholdOutOfRange(let percent): return "a battery threshold of \(percent) % is outside 1 … 99"
        }
    }
}
