import Foundation
import Marmot
import Nostr
import Store

/// What members' locations were over time (issue 23): history, GPX tracks, and how long it is
/// kept (30 days unless `locations --keep` says otherwise; `run`'s upkeep deletes the rest).
extension GroupService {
    public static let defaultLocationRetentionDays: Int64 = 30
    public static let locationRetentionRange: ClosedRange<Int64> = 1...3650

    /// Every location in GROUP, oldest first; only `member`'s (a key, npub or name) and those
    /// stamped at or after `since` when given.
    public func locationHistory(_ groupText: String, member: String? = nil, since: Int64? = nil) throws -> [LocationView] {
        let who = try member.map { try profiles.resolvePerson($0).bytes }
        let now = Self.now()
        return try store.transaction { tx in
            let loaded = try resolveGroup(groupText, in: tx)
            var names: [[UInt8]: String?] = [:]
            return try tx.messages.list(mlsGroupID: loaded.row.mlsGroupID, kinds: [MarmotKind.location]).compactMap { message in
                guard who == nil || message.sender == who, let payload = try? LocationPayload(json: message.content),
                      payload.timestamp >= since ?? Int64.min else { return nil }
                if names[message.sender] == nil {
                    names[message.sender] = .some(try tx.memberNames.name(pubkey: message.sender, mlsGroupID: loaded.row.mlsGroupID))
                }
                return LocationView(member: Hex.encode(message.sender), name: names[message.sender] ?? nil, payload: payload,
                                    stale: payload.isStale(now: now))
            }.sorted { $0.payload.timestamp < $1.payload.timestamp }
        }
    }

    /// How many days location messages are kept.
    public func locationRetentionDays() throws -> Int64 {
        try store.transaction { try $0.settings.get(Settings.locationRetentionDays) }.flatMap { Int64($0) } ?? Self.defaultLocationRetentionDays
    }

    public func setLocationRetention(days: Int64) throws {
        guard Self.locationRetentionRange.contains(days) else { throw NodeError.invalidInput("--keep is 1 to 3650 days") }
        try store.transaction { try $0.settings.set(Settings.locationRetentionDays, String(days)) }
    }

    /// Deletes location messages older than the retention (`run`'s upkeep); how many.
    @discardableResult
    func pruneLocationHistory(now: Int64) -> Int {
        guard let days = try? locationRetentionDays() else { return 0 }
        let cutoff = now - days * 86_400
        return (try? store.transaction { try $0.messages.delete(kind: MarmotKind.location, createdBefore: cutoff) }) ?? 0
    }
}

/// GPX 1.1 (topografix.com/GPX/1/1): one track per member, its points in time order.
public enum LocationGPX {
    public static func document(title: String, history: [LocationView]) -> String {
        var out = """
        <?xml version="1.0" encoding="UTF-8"?>
        <gpx version="1.1" creator="burrow" xmlns="http://www.topografix.com/GPX/1/1">
        <metadata><name>\(LocationMap.escape(title))</name></metadata>

        """
        var order: [String] = []
        var byMember: [String: [LocationView]] = [:]
        for entry in history {
            if byMember[entry.member] == nil { order.append(entry.member) }
            byMember[entry.member, default: []].append(entry)
        }
        for member in order {
            let points = byMember[member] ?? []
            let name = points.last?.name ?? member
            out += "<trk><name>\(LocationMap.escape(name))</name><trkseg>\n"
            for point in points {
                let p = point.payload
                out += "<trkpt lat=\"\(decimal(p.latitude))\" lon=\"\(decimal(p.longitude))\">"
                if p.altitude != 0 { out += "<ele>\(decimal(p.altitude))</ele>" }
                out += "<time>\(iso8601(p.timestamp))</time></trkpt>\n"
            }
            out += "</trkseg></trk>\n"
        }
        return out + "</gpx>\n"
    }

    /// A plain decimal (never an exponent, which xsd:decimal refuses).
    static func decimal(_ value: Double) -> String { String(format: "%.7f", value) }

    static func iso8601(_ seconds: Int64) -> String {
        var time = time_t(seconds)
        var parts = tm()
        guard gmtime_r(&time, &parts) != nil else { return "1970-01-01T00:00:00Z" }
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02dZ", Int(parts.tm_year) + 1900, parts.tm_mon + 1, parts.tm_mday,
                      parts.tm_hour, parts.tm_min, parts.tm_sec)
    }
}
