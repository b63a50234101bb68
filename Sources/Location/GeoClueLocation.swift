import Foundation

/// GeoClue2's `org.freedesktop.GeoClue2.Location` properties, as read from the bus: the values a
/// `LocationUpdated` signal points at. GeoClue marks what it does not know with sentinels
/// (altitude `-DBL_MAX`, speed and heading `-1`), which become nil here.
public struct GeoClueLocation: Sendable, Equatable {
    public var latitude: Double
    public var longitude: Double
    /// Metres.
    public var accuracy: Double
    public var altitude: Double
    public var speed: Double
    /// `Timestamp` (`(tt)`): seconds and microseconds since the epoch.
    public var seconds: UInt64
    public var microseconds: UInt64

    /// GeoClue's "unknown altitude".
    public static let unknownAltitude = -Double.greatestFiniteMagnitude

    public init(latitude: Double, longitude: Double, accuracy: Double, altitude: Double = unknownAltitude, speed: Double = -1,
                seconds: UInt64, microseconds: UInt64 = 0) {
        self.latitude = latitude
        self.longitude = longitude
        self.accuracy = accuracy
        self.altitude = altitude
        self.speed = speed
        self.seconds = seconds
        self.microseconds = microseconds
    }

    /// The position as any source's: 3D when GeoClue knows the altitude, else 2D (GeoClue reports
    /// only positions it has; checking the values is `UnverifiedFix.validated`'s job). A timestamp
    /// past any real clock becomes infinity, which `validated` refuses.
    public var reported: UnverifiedFix {
        let knowsAltitude = altitude.isFinite && altitude > Self.unknownAltitude
        let time = seconds <= 1 << 40 ? Double(seconds) + Double(min(microseconds, 999_999)) / 1_000_000 : .infinity
        return UnverifiedFix(mode: knowsAltitude ? .threeD : .twoD, time: time, latitude: latitude, longitude: longitude,
                             altitude: knowsAltitude ? altitude : nil, accuracy: accuracy, speed: speed >= 0 ? speed : nil)
    }
}
