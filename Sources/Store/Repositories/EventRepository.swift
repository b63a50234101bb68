import SQLite

/// Raw verified events, keyed by id.
public struct EventRepository {
    let transaction: StoreTransaction

    private static let columns = "id, kind, pubkey, created_at, json, received_at"

    /// Stores an event. Returns false, changing nothing, if an event with that id is stored.
    @discardableResult
    public func insert(_ event: StoredEvent) throws -> Bool {
        try require32(event.id, "the event id")
        try require32(event.pubkey, "the event pubkey")
        guard event.kind >= 0 else { throw StoreError.invalidInput("the event kind is negative") }
        return try transaction.connection().execute(
            "INSERT OR IGNORE INTO events (\(Self.columns)) VALUES (?, ?, ?, ?, ?, ?)",
            [.blob(event.id), .int(event.kind), .blob(event.pubkey), .integer(event.createdAt),
             .text(event.json), .integer(event.receivedAt)]) > 0
    }

    /// The event with this id, if stored.
    public func get(id: [UInt8]) throws -> StoredEvent? {
        try require32(id, "the event id")
        return try transaction.connection().queryFirst(
            "SELECT \(Self.columns) FROM events WHERE id = ?", [.blob(id)], row: Self.decode)
    }

    /// Whether an event with this id is stored.
    public func contains(id: [UInt8]) throws -> Bool {
        try require32(id, "the event id")
        return try transaction.connection().queryFirst("SELECT 1 FROM events WHERE id = ?", [.blob(id)]) { _ in true } ?? false
    }

    /// The number of stored events, of one kind if given.
    public func count(kind: Int? = nil) throws -> Int {
        let conn = try transaction.connection()
        if let kind {
            return try conn.queryFirst("SELECT count(*) FROM events WHERE kind = ?", [.int(kind)]) { $0.int(0) } ?? 0
        }
        return try conn.queryFirst("SELECT count(*) FROM events") { $0.int(0) } ?? 0
    }

    /// Events of `kind`, oldest first (ties by id), optionally within `since...until`
    /// (inclusive, as NIP-01 filters) and at most `limit` of them.
    public func query(kind: Int, since: Int64? = nil, until: Int64? = nil, limit: Int? = nil) throws -> [StoredEvent] {
        if let limit, limit < 0 { throw StoreError.invalidInput("the limit is negative") }
        return try transaction.connection().query(
            """
            SELECT \(Self.columns) FROM events
            WHERE kind = ? AND created_at >= ? AND created_at <= ?
            ORDER BY created_at, id LIMIT ?
            """,
            [.int(kind), .integer(since ?? Int64.min), .integer(until ?? Int64.max), .int(limit ?? -1)],
            row: Self.decode)
    }

    private static func decode(_ row: SQLiteStatement) -> StoredEvent {
        StoredEvent(id: row.blob(0) ?? [], kind: row.int(1), pubkey: row.blob(2) ?? [], createdAt: row.int64(3),
                    json: row.text(4) ?? "", receivedAt: row.int64(5))
    }
}
