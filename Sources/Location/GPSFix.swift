import Foundation

/// A position a source reported, before it is trusted: gpsd's TPV, GeoClue's Location, or a
/// fixed home position. Only `validated` yields a `Fix` the scheduler accepts.
public struct UnverifiedFix: Sendable, Equatable {
    public enum Mode: Int, Sendable, Equatable {
        /// No fix (gpsd mode 0 or 1).
        case none = 1
        case twoD = 2
        case threeD = 3
    }

    public var mode: Mode
    /// Unix seconds of the fix, as the source stamped it.
    public var time: Double
    public var latitude: Double
    public var longitude: Double
    public var altitude: Double?
    /// Horizontal accuracy in metres (95 %), when the source says.
    public var accuracy: Double?
    /// Metres per second over ground, when the source says.
    public var speed: Double?

    public init(mode: Mode, time: Double, latitude: Double, longitude: Double, altitude: Double? = nil, accuracy: Double? = nil,
                speed: Double? = nil) {
        self.mode = mode
        self.time = time
        self.latitude = latitude
        self.longitude = longitude
        self.altitude = altitude
        self.accuracy = accuracy
        self.speed = speed
    }

    /// The fix, if it is one a person may be shown: a 2D or 3D mode, finite coordinates within
    /// range, a non-negative accuracy and speed, and a time no older than `maximumAge` seconds
    /// before `now` (nor more than a minute after it). Never a fake or stale position.
    public func validated(now: Double, maximumAge: Double) throws(FixError) -> Fix {
        guard mode != .none else { throw .noFix }
        guard latitude.isFinite, longitude.isFinite, (-90...90).contains(latitude), (-180...180).contains(longitude) else {
            throw .outOfRange
        }
        if let altitude, !altitude.isFinite { throw .outOfRange }
        if let accuracy, !(accuracy.isFinite && accuracy >= 0) { throw .outOfRange }
        if let speed, !(speed.isFinite && speed >= 0) { throw .outOfRange }
        guard time.isFinite, time <= now + 60 else { throw .fromTheFuture }
        guard now - time <= maximumAge else { throw .stale }
        return Fix(time: time, latitude: latitude, longitude: longitude, altitude: mode == .threeD ? altitude : nil,
                   accuracy: accuracy ?? 0, speed: speed)
    }
}

/// Why a reported position is not used.
public enum FixError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The source has no 2D or 3D fix (a tunnel, indoors).
    case noFix
    /// NaN, infinite, or outside ±90° / ±180°, a negative accuracy or speed.
    case outOfRange
    /// Older than the interval in force.
    case stale
    /// Stamped more than a minute ahead of our clock.
    case fromTheFuture

    public var description: String {
        switch self {
        case .noFix: return "no 2D or 3D fix"
        case .outOfRange: return "a position outside valid ranges"
        case .stale: return "a fix older than the interval"
        case .fromTheFuture: return "a fix stamped in the future"
        }
    }
}

/// A position that passed `UnverifiedFix.validated`.
public struct Fix: Sendable, Equatable {
    public let time: Double
    public let latitude: Double
    public let longitude: Double
    /// Metres, with a 3D fix only.
    public let altitude: Double?
    /// Horizontal accuracy in metres; 0 when the source did not say.
    public let accuracy: Double
    public let speed: Double?

    /// Metres between two positions (haversine on a spherical Earth: family distances).
    public func distance(to other: Fix) -> Double {
        let radius = 6_371_000.0
        let (φ1, φ2) = (latitude * .pi / 180, other.latitude * .pi / 180)
        let Δφ = φ2 - φ1, Δλ = (other.longitude - longitude) * .pi / 180
        let a = sin(Δφ / 2) * sin(Δφ / 2) + cos(φ1) * cos(φ2) * sin(Δλ / 2) * sin(Δλ / 2)
        return 2 * radius * atan2(a.squareRoot(), (1 - a).squareRoot())
    }

    /// The same fix moved to another place (fuzzing).
    func moved(latitude: Double, longitude: Double, accuracy: Double) -> Fix {
        Fix(time: time, latitude: latitude, longitude: longitude, altitude: altitude, accuracy: accuracy, speed: speed)
    }
}
