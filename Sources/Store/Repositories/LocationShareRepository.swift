import SQLite

/// A group we share our location with, as `burrow share start` set it.
public struct StoredLocationShare: Sendable, Equatable {
    public let mlsGroupID: [UInt8]
    /// `gpsd:HOST:PORT`, `geoclue` or `fixed:LAT,LON`.
    public var source: String
    /// Seconds, 10…3600.
    public var interval: Int64
    /// Metres of blur; 0 for none.
    public var fuzz: Int64
    /// Whether the battery level is read and shared.
    public var battery: Bool
    public var paused: Bool
    public let createdAt: Int64
    public var lastFixAt: Int64?
    public var lastPublishAt: Int64?
    /// What went wrong last with the source or a publish (no secrets: a reason in words).
    public var lastError: String?
    /// Its code (`location_denied`, …), when there is one.
    public var lastErrorCode: String?
    /// Where `run`'s schedule stood when it last said: nil before it ran.
    public var schedule: ScheduleState?

    /// `run`'s schedule for a share, as `share status` shows it.
    public struct ScheduleState: Sendable, Equatable {
        public var stationary: Bool
        /// Seconds: the interval, ×4 while stationary.
        public var intervalInForce: Int64
        public var nextPublishAt: Int64

        public init(stationary: Bool, intervalInForce: Int64, nextPublishAt: Int64) {
            self.stationary = stationary
            self.intervalInForce = intervalInForce
            self.nextPublishAt = nextPublishAt
        }
    }

    public init(mlsGroupID: [UInt8], source: String, interval: Int64, fuzz: Int64, battery: Bool, paused: Bool = false,
                createdAt: Int64, lastFixAt: Int64? = nil, lastPublishAt: Int64? = nil, lastError: String? = nil,
                lastErrorCode: String? = nil, schedule: ScheduleState? = nil) {
        self.mlsGroupID = mlsGroupID
        self.source = source
        self.interval = interval
        self.fuzz = fuzz
        self.battery = battery
        self.paused = paused
        self.createdAt = createdAt
        self.lastFixAt = lastFixAt
        self.lastPublishAt = lastPublishAt
        self.lastError = lastError
        self.lastErrorCode = lastErrorCode
        self.schedule = schedule
    }
}

/// The groups we share our location with.
public struct LocationShareRepository {
    let transaction: StoreTransaction

    private static let columns = "mls_group_id, source, interval, fuzz, battery, paused, created_at, last_fix_at, last_publish_at, last_error, last_error_code, stationary, interval_in_force, next_publish_at"

    private static func row(_ r: SQLiteStatement) -> StoredLocationShare {
        StoredLocationShare(mlsGroupID: r.blob(0) ?? [], source: r.text(1) ?? "", interval: r.int64(2), fuzz: r.int64(3),
                            battery: r.int64(4) != 0, paused: r.int64(5) != 0, createdAt: r.int64(6),
                            lastFixAt: r.isNull(7) ? nil : r.int64(7), lastPublishAt: r.isNull(8) ? nil : r.int64(8), lastError: r.text(9), lastErrorCode: r.text(10),
                            schedule: r.isNull(11) || r.isNull(12) || r.isNull(13) ? nil
                                : StoredLocationShare.ScheduleState(stationary: r.int64(11) != 0, intervalInForce: r.int64(12), nextPublishAt: r.int64(13)))
    }

    /// Starts or replaces the share of a group (its record of what happened is kept).
    public func set(_ share: StoredLocationShare) throws {
        guard (10...3600).contains(share.interval), (0...1000).contains(share.fuzz), !share.source.isEmpty, share.source.utf8.count <= 256
        else { throw StoreError.invalidInput("a location share needs a source, an interval of 10…3600 s and a fuzz of 0…1000 m") }
        if try get(mlsGroupID: share.mlsGroupID) != nil {
            try transaction.connection().execute(
                "UPDATE location_shares SET source = ?, interval = ?, fuzz = ?, battery = ?, paused = ? WHERE mls_group_id = ?",
                [.text(share.source), .integer(share.interval), .integer(share.fuzz), .integer(share.battery ? 1 : 0),
                 .integer(share.paused ? 1 : 0), .blob(share.mlsGroupID)])
            return
        }
        try transaction.connection().execute(
            "INSERT INTO location_shares (mls_group_id, source, interval, fuzz, battery, paused, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [.blob(share.mlsGroupID), .text(share.source), .integer(share.interval), .integer(share.fuzz), .integer(share.battery ? 1 : 0),
             .integer(share.paused ? 1 : 0), .integer(share.createdAt)])
    }

    public func get(mlsGroupID: [UInt8]) throws -> StoredLocationShare? {
        try transaction.connection().queryFirst("SELECT \(Self.columns) FROM location_shares WHERE mls_group_id = ?",
                                                [.blob(mlsGroupID)], row: Self.row)
    }

    public func list() throws -> [StoredLocationShare] {
        try transaction.connection().query("SELECT \(Self.columns) FROM location_shares ORDER BY created_at, mls_group_id", row: Self.row)
    }

    /// Whether a share was removed.
    @discardableResult
    public func delete(mlsGroupID: [UInt8]) throws -> Bool {
        try transaction.connection().execute("DELETE FROM location_shares WHERE mls_group_id = ?", [.blob(mlsGroupID)]) > 0
    }

    public func setPaused(_ paused: Bool, mlsGroupID: [UInt8]) throws {
        try transaction.connection().execute("UPDATE location_shares SET paused = ? WHERE mls_group_id = ?",
                                             [.integer(paused ? 1 : 0), .blob(mlsGroupID)])
    }

    /// Where `run`'s schedule stands for a share.
    public func record(mlsGroupID: [UInt8], schedule: StoredLocationShare.ScheduleState) throws {
        guard (10...14400).contains(schedule.intervalInForce) else { throw StoreError.invalidInput("an interval in force of 10…14400 s") }
        try transaction.connection().execute(
            "UPDATE location_shares SET stationary = ?, interval_in_force = ?, next_publish_at = ? WHERE mls_group_id = ?",
            [.integer(schedule.stationary ? 1 : 0), .integer(schedule.intervalInForce), .integer(schedule.nextPublishAt), .blob(mlsGroupID)])
    }

    /// What happened last: a fix, a publish, an error and its code (nil clears them).
    public func record(mlsGroupID: [UInt8], fixAt: Int64?, publishAt: Int64?, error: String?, code: String? = nil) throws {
        try transaction.connection().execute(
            """
            UPDATE location_shares SET last_fix_at = coalesce(?, last_fix_at), last_publish_at = coalesce(?, last_publish_at),
                last_error = ?, last_error_code = ? WHERE mls_group_id = ?
            """,
            [fixAt.map { .integer($0) } ?? .null, publishAt.map { .integer($0) } ?? .null, error.map { .text(String($0.prefix(200))) } ?? .null,
             (error == nil ? nil : code).map { .text(String($0.prefix(40))) } ?? .null, .blob(mlsGroupID)])
    }
}
