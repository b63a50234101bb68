import Nostr

/// Whistle's location update, the content of an inner kind-1 event:
/// `{"type":"location","lat":…,"lon":…,"alt":…,"acc":…,"ts":…,"batt":…,"interval":…,"stationary":…,"v":1}`
/// (WhistleCore LocationPayload; `interval` since Whistle 1.2.1, `stationary` since 1.7).
///
/// Reading is strict about types (numbers for the coordinates, integer literals for `ts`,
/// `batt`, `interval`, `v`, a boolean for `stationary`) and about ranges a real fix has:
/// latitude within ±90, longitude within ±180, accuracy ≥ 0, battery 0–100, interval > 0.
/// Unknown members are ignored, as Whistle's decoder does.
public struct LocationPayload: Equatable, Sendable {
    public static let type = "location"
    public static let currentVersion: Int64 = 1
    /// Whistle's default publishing cadence, and the staleness basis when `interval` is absent.
    public static let defaultInterval: Int64 = 3600

    public var latitude: Double
    public var longitude: Double
    /// Metres; 0 when unknown.
    public var altitude: Double
    /// Horizontal accuracy in metres.
    public var accuracy: Double
    /// Unix seconds of the fix.
    public var timestamp: Int64
    /// Battery percentage, when the sender shares it.
    public var battery: Int64?
    /// The sender's publishing interval in seconds.
    public var interval: Int64?
    /// nil when the sender does not say.
    public var stationary: Bool?
    public var version: Int64

    /// A payload as `burrow location` sends it: altitude and accuracy 0 unless given, the
    /// battery only when given, the node's interval (default 3600 s), version 1.
    public init(latitude: Double, longitude: Double, altitude: Double = 0, accuracy: Double = 0, timestamp: Int64,
                battery: Int64? = nil, interval: Int64? = LocationPayload.defaultInterval, stationary: Bool? = nil) throws {
        self.latitude = latitude
        self.longitude = longitude
        self.altitude = altitude
        self.accuracy = accuracy
        self.timestamp = timestamp
        self.battery = battery
        self.interval = interval
        self.stationary = stationary
        self.version = Self.currentVersion
        try validate()
    }

    /// Parses and checks a kind-1 content string.
    public init(json content: String) throws {
        let fields = try PayloadFields(requiredKind: MarmotKind.location, content: content)
        guard try fields.string("type") == Self.type else { throw fields.fail("type", "not \"location\"") }
        latitude = try fields.number("lat")
        longitude = try fields.number("lon")
        altitude = try fields.number("alt")
        accuracy = try fields.number("acc")
        timestamp = try fields.integer("ts")
        battery = try fields.optionalInteger("batt")
        interval = try fields.optionalInteger("interval")
        stationary = try fields.optionalBool("stationary")
        version = try fields.integer("v")
        try validate()
    }

    private func validate() throws {
        func fail(_ field: String, _ reason: String) -> MarmotError {
            .invalidPayload(kind: MarmotKind.location, field: field, reason: reason)
        }
        guard latitude.isFinite, (-90...90).contains(latitude) else { throw fail("lat", "outside -90…90") }
        guard longitude.isFinite, (-180...180).contains(longitude) else { throw fail("lon", "outside -180…180") }
        guard altitude.isFinite else { throw fail("alt", "not finite") }
        guard accuracy.isFinite, accuracy >= 0 else { throw fail("acc", "negative or not finite") }
        guard timestamp >= 0 else { throw fail("ts", "negative") }
        if let battery { guard (0...100).contains(battery) else { throw fail("batt", "outside 0…100") } }
        if let interval { guard interval > 0 else { throw fail("interval", "not positive") } }
    }

    /// The JSON Whistle reads, members in the documented order, optional ones only when set.
    public var json: String {
        var members: [JSONMember] = [
            JSONMember("type", .string(Self.type)),
            JSONMember("lat", .double(latitude)),
            JSONMember("lon", .double(longitude)),
            JSONMember("alt", .double(altitude)),
            JSONMember("acc", .double(accuracy)),
            JSONMember("ts", .integer(timestamp)),
        ]
        if let battery { members.append(JSONMember("batt", .integer(battery))) }
        if let interval { members.append(JSONMember("interval", .integer(interval))) }
        if let stationary { members.append(JSONMember("stationary", .bool(stationary))) }
        members.append(JSONMember("v", .integer(version)))
        return JSONValue.object(members).jsonString
    }

    /// Whistle's staleness rule: older than twice the sender's interval (3600 s when absent).
    public func isStale(now: Int64) -> Bool {
        let (age, ageOverflow) = now.subtractingReportingOverflow(timestamp)
        let (limit, limitOverflow) = (interval ?? Self.defaultInterval).multipliedReportingOverflow(by: 2)
        return !ageOverflow && !limitOverflow && age > limit
    }
}
