/// The dedup record of the event pipeline: which event ids were handled, and how.
/// Marked in the same transaction as the state change the event caused.
public struct ProcessedEventRepository {
    let transaction: StoreTransaction

    /// Records that `eventID` was handled. Returns false, keeping the first record, if it
    /// was already marked.
    @discardableResult
    public func mark(eventID: [UInt8], outcome: String, at processedAt: Int64 = StoreClock.now()) throws -> Bool {
        try require32(eventID, "the event id")
        return try transaction.connection().execute(
            "INSERT OR IGNORE INTO processed_events (event_id, outcome, processed_at) VALUES (?, ?, ?)",
            [.blob(eventID), .text(outcome), .integer(processedAt)]) > 0
    }

    /// Whether `eventID` was handled.
    public func contains(eventID: [UInt8]) throws -> Bool {
        try require32(eventID, "the event id")
        return try transaction.connection().queryFirst(
            "SELECT 1 FROM processed_events WHERE event_id = ?", [.blob(eventID)]) { _ in true } ?? false
    }

    /// The record for `eventID`, if marked.
    public func get(eventID: [UInt8]) throws -> ProcessedEvent? {
        try require32(eventID, "the event id")
        return try transaction.connection().queryFirst(
            "SELECT event_id, outcome, processed_at FROM processed_events WHERE event_id = ?", [.blob(eventID)]) {
            ProcessedEvent(eventID: $0.blob(0) ?? [], outcome: $0.text(1) ?? "", processedAt: $0.int64(2))
        }
    }

    /// Every handled event's id (a backup's copy: a restored node does not handle them again).
    public func allIDs() throws -> [[UInt8]] {
        try transaction.connection().query("SELECT event_id FROM processed_events ORDER BY processed_at", []) { $0.blob(0) ?? [] }
    }

    /// The number of handled events.
    public func count() throws -> Int {
        try transaction.connection().queryFirst("SELECT count(*) FROM processed_events") { $0.int(0) } ?? 0
    }
}
