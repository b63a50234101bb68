import Foundation
import Nostr

/// gpsd's JSON protocol (gpsd_json(5)), the part a position reader needs: the `?WATCH` command
/// that starts reports, and the lines that come back. Each line is one JSON object with a
/// `class`; a TPV report carries the fix. Lines come from a socket anyone on the host may
/// serve, so they are bounded and parsed strictly: anything else is a typed error, and a
/// malformed line costs nothing but itself.
public enum GPSDProtocol {
    /// The longest line read (gpsd's own SKY reports stay well under 8 KiB).
    public static let maximumLine = 64 * 1024

    /// Asks for JSON reports of every device.
    public static let watch = #"?WATCH={"enable":true,"json":true};"# + "\n"

    /// What one line says.
    public enum Report: Equatable, Sendable {
        /// A time-position-velocity report.
        case position(UnverifiedFix)
        /// Any other class (VERSION, DEVICES, WATCH, SKY, …): nothing for us.
        case other(String)
    }

    public static func parse(line: some Collection<UInt8>) throws(GPSDError) -> Report {
        guard line.count <= maximumLine else { throw .lineTooLong(line.count) }
        let value: JSONValue
        do { value = try JSONValue.parse(Array(line)) } catch { throw .notJSON }
        guard value.objectValue != nil, let kind = value["class"]?.stringValue else { throw .noClass }
        guard kind == "TPV" else { return .other(kind) }
        guard let modeNumber = value["mode"]?.integerValue else { throw .badField("mode") }
        let mode: UnverifiedFix.Mode
        switch modeNumber {
        case 0, 1: mode = .none
        case 2: mode = .twoD
        case 3: mode = .threeD
        default: throw .badField("mode")
        }
        func number(_ key: String) throws(GPSDError) -> Double? {
            guard let field = value[key] else { return nil }
            switch field {
            case .integer(let i): return Double(i)
            case .double(let d): return d
            default: throw .badField(key)
            }
        }
        // Without a fix gpsd leaves out time and position: a report of no fix.
        guard mode != .none else { return .position(UnverifiedFix(mode: .none, time: 0, latitude: 0, longitude: 0)) }
        guard let timeText = value["time"]?.stringValue, let time = parseTime(timeText) else { throw .badField("time") }
        guard let lat = try number("lat"), let lon = try number("lon") else { throw .badField("lat") }
        var altitude = try number("altHAE")
        if altitude == nil { altitude = try number("altMSL") }
        if altitude == nil { altitude = try number("alt") }
        // eph is the 95 % horizontal error; older gpsd gives only epx and epy.
        var accuracy = try number("eph")
        if accuracy == nil, let epx = try number("epx"), let epy = try number("epy") { accuracy = (epx * epx + epy * epy).squareRoot() }
        return .position(UnverifiedFix(mode: mode, time: time, latitude: lat, longitude: lon, altitude: altitude, accuracy: accuracy,
                                       speed: try number("speed")))
    }

    /// gpsd's ISO 8601 UTC times: `2026-11-28T12:00:00.000Z` (fraction optional).
    static func parseTime(_ text: String) -> Double? {
        let bytes = Array(text.utf8)
        guard bytes.count >= 20, bytes.last == UInt8(ascii: "Z") else { return nil }
        func digits(_ range: Range<Int>) -> Int? {
            var value = 0
            for index in range {
                guard index < bytes.count, (48...57).contains(bytes[index]) else { return nil }
                value = value * 10 + Int(bytes[index] - 48)
            }
            return value
        }
        guard bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"), bytes[10] == UInt8(ascii: "T"),
              bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
              let year = digits(0..<4), let month = digits(5..<7), let day = digits(8..<10),
              let hour = digits(11..<13), let minute = digits(14..<16), let second = digits(17..<19),
              (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61 else { return nil }
        var fraction = 0.0
        if bytes.count > 20 {
            guard bytes[19] == UInt8(ascii: "."), (1...9).contains(bytes.count - 21), let value = digits(20..<(bytes.count - 1)) else { return nil }
            fraction = Double(value) / pow(10, Double(bytes.count - 21))
        } else if bytes.count != 20 {
            return nil
        }
        var parts = DateComponents()
        parts.timeZone = TimeZone(identifier: "UTC")
        (parts.year, parts.month, parts.day, parts.hour, parts.minute, parts.second) = (year, month, day, hour, minute, second)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        guard let date = calendar.date(from: parts) else { return nil }
        return date.timeIntervalSince1970 + fraction
    }
}

/// A gpsd line we could not use (never quoting it: it is someone else's bytes).
public enum GPSDError: Error, Equatable, Sendable, CustomStringConvertible {
    case lineTooLong(Int)
    case notJSON
    case noClass
    case badField(String)

    public var description: String {
        switch self {
        case .lineTooLong(let count): return "a gpsd line of \(count) bytes, over \(GPSDProtocol.maximumLine)"
        case .notJSON: return "a gpsd line that is not JSON"
        case .noClass: return "a gpsd report without a class"
        case .badField(let name): return "a gpsd report with a bad \(name)"
        }
    }
}
