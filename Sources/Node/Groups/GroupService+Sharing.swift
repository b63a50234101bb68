import Foundation
import Location
import Marmot
import Nostr
import Store

/// Where `run` reads positions for a share (issue 23).
public enum ShareSource: Equatable, Sendable, CustomStringConvertible {
    /// gpsd's JSON protocol on TCP (default 127.0.0.1:2947).
    case gpsd(host: String, port: Int)
    /// A fixed position: a home hub.
    case fixed(latitude: Double, longitude: Double)
    /// GeoClue2 on the system D-Bus (a laptop's Wi-Fi/3G/GPS positioning).
    case geoclue

    public static let defaultGPSDPort = 2947

    /// `gpsd`, `gpsd:HOST:PORT`, or `fixed:LAT,LON` (negative numbers welcome).
    public init(parsing text: String) throws {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed == "gpsd" {
            self = .gpsd(host: "127.0.0.1", port: Self.defaultGPSDPort)
            return
        }
        if trimmed.hasPrefix("gpsd:") {
            let rest = trimmed.dropFirst(5)
            guard let colon = rest.lastIndex(of: ":"), let port = Int(rest[rest.index(after: colon)...]), (1...65535).contains(port),
                  !rest[..<colon].isEmpty else {
                throw NodeError.invalidInput("a gpsd source is gpsd or gpsd:HOST:PORT")
            }
            self = .gpsd(host: String(rest[..<colon]), port: port)
            return
        }
        if trimmed.hasPrefix("fixed:") {
            let parts = trimmed.dropFirst(6).split(separator: ",", omittingEmptySubsequences: false)
            guard parts.count == 2, let lat = Double(parts[0]), let lon = Double(parts[1]), lat.isFinite, lon.isFinite,
                  (-90...90).contains(lat), (-180...180).contains(lon) else {
                throw NodeError.invalidInput("a fixed source is fixed:LAT,LON with latitude within ±90 and longitude within ±180")
            }
            self = .fixed(latitude: lat, longitude: lon)
            return
        }
        if trimmed == "geoclue" {
            self = .geoclue
            return
        }
        throw NodeError.invalidInput("a source is gpsd[:HOST:PORT], geoclue or fixed:LAT,LON")
    }

    public var description: String {
        switch self {
        case .gpsd(let host, let port): return "gpsd:\(host):\(port)"
        case .fixed(let lat, let lon): return "fixed:\(lat),\(lon)"
        case .geoclue: return "geoclue"
        }
    }
}

/// A share as `share status` shows it.
public struct ShareView: Sendable, Equatable {
    public let mlsGroupID: String
    public let groupName: String
    public let source: String
    public let interval: Int64
    public let fuzz: Int64
    public let battery: Bool
    public let paused: Bool
    public let lastFixAt: Int64?
    public let lastPublishAt: Int64?
    public let lastError: String?
    /// `location_denied`, `source_unavailable`, `no_fix` or `publish_failed` with `lastError`.
    public let lastErrorCode: String?
    /// Where `run`'s schedule stood when it last recorded it (nil before it ran).
    public let schedule: StoredLocationShare.ScheduleState?
}

/// What stopped a share last, for `share status`: a code scripts can act on and words for people.
public struct ShareProblem: Error, Sendable, Equatable {
    public enum Code: String, Sendable {
        /// The location service refused us (GeoClue with no agent allowing `burrow`).
        case locationDenied = "location_denied"
        /// gpsd or GeoClue cannot be reached; retried with backoff.
        case sourceUnavailable = "source_unavailable"
        /// The source answers but has no usable fix (a tunnel, indoors, a stale fix).
        case noFix = "no_fix"
        case publishFailed = "publish_failed"
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }
}

extension GroupService {
    /// The fuzz radii `share start --fuzz` accepts, in metres.
    public static let fuzzRadii: [Int64] = [0, 10, 50, 200]

    /// `share start`: shares our location with GROUP from `source` on Whistle's schedule,
    /// under `burrow run` (persisted: it survives restarts). Starting again replaces it.
    public func startSharing(_ groupText: String, source: String, interval: Int64, fuzz: Int64, battery: Bool) throws -> ShareView {
        let parsed = try ShareSource(parsing: source)
        guard ShareSchedule.intervalRange.contains(interval) else {
            throw NodeError.invalidInput("the interval is 10 s to 1 h (10…3600 seconds)")
        }
        guard Self.fuzzRadii.contains(fuzz) else { throw NodeError.invalidInput("fuzz is off, 10m, 50m or 200m") }
        let id = try groupID(groupText)
        return try store.transaction { tx in
            guard let row = try tx.groups.get(mlsGroupID: id.bytes), row.state.isReadable else {
                throw NodeError.invalidInput("we are not a member of that group")
            }
            let existing = try tx.locationShares.get(mlsGroupID: id.bytes)
            try tx.locationShares.set(StoredLocationShare(mlsGroupID: id.bytes, source: parsed.description, interval: interval, fuzz: fuzz,
                                                          battery: battery, paused: false, createdAt: existing?.createdAt ?? Self.now()))
            return try shareView(id.bytes, tx)
        }
    }

    /// `share stop`: no more sharing with GROUP.
    public func stopSharing(_ groupText: String) throws {
        let id = try groupID(groupText)
        guard try store.transaction({ try $0.locationShares.delete(mlsGroupID: id.bytes) }) else {
            throw NodeError.invalidInput("we are not sharing our location with that group")
        }
    }

    /// `share pause/resume [GROUP]`: every share, or GROUP's.
    public func setSharingPaused(_ paused: Bool, group groupText: String?) throws -> [ShareView] {
        let only = try groupText.map { try groupID($0).bytes }
        return try store.transaction { tx in
            let shares = try tx.locationShares.list().filter { only == nil || $0.mlsGroupID == only }
            guard !shares.isEmpty else { throw NodeError.invalidInput("we are not sharing our location with that group") }
            for share in shares { try tx.locationShares.setPaused(paused, mlsGroupID: share.mlsGroupID) }
            return try shares.map { try shareView($0.mlsGroupID, tx) }
        }
    }

    /// `share status`: every share with what happened last.
    public func shares() throws -> [ShareView] {
        try store.transaction { tx in try tx.locationShares.list().map { try shareView($0.mlsGroupID, tx) } }
    }

    /// The stored shares, for `run`.
    public func storedShares() throws -> [StoredLocationShare] {
        try store.transaction { try $0.locationShares.list() }
    }

    /// Records what a share's source or publish did (for `share status`).
    public func recordShare(_ mlsGroupID: [UInt8], fixAt: Int64? = nil, publishAt: Int64? = nil, problem: ShareProblem?) {
        _ = try? store.transaction {
            try $0.locationShares.record(mlsGroupID: mlsGroupID, fixAt: fixAt, publishAt: publishAt, error: problem?.message,
                                         code: problem?.code.rawValue)
        }
    }

    /// Records where `run`'s schedule for a share stands (for `share status`).
    public func recordShare(_ mlsGroupID: [UInt8], schedule: StoredLocationShare.ScheduleState) {
        _ = try? store.transaction { try $0.locationShares.record(mlsGroupID: mlsGroupID, schedule: schedule) }
    }

    /// Publishes what the schedule planned into the group: the fix blurred by `fuzz` metres,
    /// with the interval in force and whether we stand still, as Whistle reads them.
    public func publishShared(_ mlsGroupID: [UInt8], plan: ShareSchedule.Publish, fuzz: Int64, timeout: Duration) async throws -> SentMessage {
        var rng = SystemRandomNumberGenerator()
        let fix = LocationFuzz.apply(plan.fix, radius: Double(fuzz), using: &rng)
        let id = try await catchUpIfReachable(Hex.encode(mlsGroupID), timeout: timeout)
        let sent = try await send(id, rumor: { now in
            let payload = try LocationPayload(latitude: fix.latitude, longitude: fix.longitude, altitude: fix.altitude ?? 0,
                                              accuracy: fix.accuracy, timestamp: Int64(exactly: fix.time.rounded(.down)) ?? now,
                                              battery: plan.battery, interval: plan.interval, stationary: plan.stationary)
            return try InnerEvent.location(payload, author: self.publicKey, createdAt: now)
        }, timeout: timeout)
        recordShare(mlsGroupID, publishAt: Self.now(), problem: nil)
        return sent
    }

    private func shareView(_ mlsGroupID: [UInt8], _ tx: StoreTransaction) throws -> ShareView {
        guard let share = try tx.locationShares.get(mlsGroupID: mlsGroupID) else { throw StoreError.storeCorrupt("a share vanished") }
        let name = try tx.groups.get(mlsGroupID: mlsGroupID).flatMap { try? LoadedGroup($0).group.data.name } ?? ""
        return ShareView(mlsGroupID: Hex.encode(mlsGroupID), groupName: name, source: share.source, interval: share.interval,
                         fuzz: share.fuzz, battery: share.battery, paused: share.paused, lastFixAt: share.lastFixAt,
                         lastPublishAt: share.lastPublishAt, lastError: share.lastError,
                         lastErrorCode: share.lastErrorCode, schedule: share.schedule)
    }
}
