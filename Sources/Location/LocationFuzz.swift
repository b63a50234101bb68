import Foundation

/// Blurs a position as Whistle does: a point drawn uniformly within `radius` metres of the
/// fix (uniform over the disc's area, so `r = R·√u`), and the accuracy raised to at least the
/// radius, so no one reads more precision than was shared.
public enum LocationFuzz {
    /// The radii offered: off, 10 m, 50 m, 200 m.
    public static let radii: [Double] = [0, 10, 50, 200]

    public static func apply(_ fix: Fix, radius: Double, using rng: inout some RandomNumberGenerator) -> Fix {
        guard radius > 0 else { return fix }
        let distance = radius * Double.random(in: 0..<1, using: &rng).squareRoot()
        let bearing = Double.random(in: 0..<(2 * .pi), using: &rng)
        let metersPerDegree = 111_320.0
        var latitude = fix.latitude + distance * cos(bearing) / metersPerDegree
        let cosLat = max(1e-6, cos(fix.latitude * .pi / 180))
        var longitude = fix.longitude + distance * sin(bearing) / (metersPerDegree * cosLat)
        latitude = min(90, max(-90, latitude))
        if longitude > 180 { longitude -= 360 }
        if longitude < -180 { longitude += 360 }
        return fix.moved(latitude: latitude, longitude: longitude, accuracy: max(fix.accuracy, radius))
    }
}
