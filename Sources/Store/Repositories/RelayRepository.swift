/// Configured relays, unique by URL. URL normalisation is the caller's job.
public struct RelayRepository {
    let transaction: StoreTransaction

    /// All relays, oldest first.
    public func list() throws -> [StoredRelay] {
        try transaction.connection().query("SELECT url, read, write, added_at FROM relays ORDER BY added_at, id") {
            StoredRelay(url: $0.text(0) ?? "", read: $0.bool(1), write: $0.bool(2), addedAt: $0.int64(3))
        }
    }

    /// Adds a relay. Returns false if it was already there (its read/write flags are then
    /// updated and its added_at kept).
    @discardableResult
    public func add(url: String, read: Bool = true, write: Bool = true, addedAt: Int64 = StoreClock.now()) throws -> Bool {
        guard !url.isEmpty else { throw StoreError.invalidInput("the relay URL is empty") }
        let conn = try transaction.connection()
        // No UPSERT in SQLite 3.15: insert-or-ignore, then update what already existed.
        let inserted = try conn.execute(
            "INSERT OR IGNORE INTO relays (url, read, write, added_at) VALUES (?, ?, ?, ?)",
            [.text(url), .bool(read), .bool(write), .integer(addedAt)])
        if inserted == 0 {
            try conn.execute("UPDATE relays SET read = ?, write = ? WHERE url = ?", [.bool(read), .bool(write), .text(url)])
        }
        return inserted > 0
    }

    /// Removes a relay. Returns false if it was not configured.
    @discardableResult
    public func remove(url: String) throws -> Bool {
        try transaction.connection().execute("DELETE FROM relays WHERE url = ?", [.text(url)]) > 0
    }
}
