import SQLite

/// One row of `feed_messages`: an envelope of the own feed or a followed one, accepted or held.
public struct StoredFeedMessage: Sendable, Equatable {
    public let feedID: [UInt8]
    public let sequence: Int64
    public let messageID: [UInt8]
    public let timestamp: Int64
    public let type: String
    public let audience: String
    public let envelope: [UInt8]
    public var accepted: Bool
    /// `ok`, `no_key`, `opaque`, `decrypt_failed`, `bad_content`, `type_mismatch`, `tombstoned`;
    /// nil while held.
    public var contentStatus: String?
    public var contentJSON: [UInt8]?
    public let receivedAt: Int64

    public init(feedID: [UInt8], sequence: Int64, messageID: [UInt8], timestamp: Int64, type: String, audience: String, envelope: [UInt8],
                accepted: Bool, contentStatus: String?, contentJSON: [UInt8]?, receivedAt: Int64) {
        self.feedID = feedID
        self.sequence = sequence
        self.messageID = messageID
        self.timestamp = timestamp
        self.type = type
        self.audience = audience
        self.envelope = envelope
        self.accepted = accepted
        self.contentStatus = contentStatus
        self.contentJSON = contentJSON
        self.receivedAt = receivedAt
    }
}

/// A row of `feeds`: the own feed, or one this node knows (a contact's).
public struct StoredFeed: Sendable, Equatable {
    public let feedID: [UInt8]
    public let identityKey: [UInt8]
    public let own: Bool
    public var following: Bool
    public var displayName: String?
    public var flagged: Bool
    public var lastSyncAt: Int64?
}

/// Feeds (feed.md 7.3): the feeds, their envelopes, the journal, evidence and tombstones.
public struct FeedRepository {
    let transaction: StoreTransaction

    static let messageColumns = "feed_id, sequence, message_id, timestamp, type, audience, envelope, state, content_status, content_json, received_at"

    static func message(_ row: SQLiteStatement) -> StoredFeedMessage {
        StoredFeedMessage(feedID: row.blob(0) ?? [], sequence: row.int64(1), messageID: row.blob(2) ?? [], timestamp: row.int64(3),
                          type: row.text(4) ?? "", audience: row.text(5) ?? "", envelope: row.blob(6) ?? [], accepted: row.int64(7) == 0,
                          contentStatus: row.text(8), contentJSON: row.blob(9), receivedAt: row.int64(10))
    }

    // MARK: Feeds

    public func feeds() throws -> [StoredFeed] {
        try transaction.connection().query("SELECT feed_id, identity_key, own, following, display_name, flagged, last_sync_at FROM feeds ORDER BY feed_id") {
            StoredFeed(feedID: $0.blob(0) ?? [], identityKey: $0.blob(1) ?? [], own: $0.int64(2) == 1, following: $0.int64(3) == 1,
                       displayName: $0.text(4), flagged: $0.int64(5) == 1, lastSyncAt: $0.isNull(6) ? nil : $0.int64(6))
        }
    }

    public func feed(_ feedID: [UInt8]) throws -> StoredFeed? { try feeds().first { $0.feedID == feedID } }

    /// Adds a feed, or sets whether it is followed.
    public func setFeed(feedID: [UInt8], identityKey: [UInt8], own: Bool, following: Bool) throws {
        try require32(feedID, "a feed id")
        try require32(identityKey, "an identity key")
        // SQLCipher 3.4's SQLite has no upsert: update, else insert.
        let updated = try transaction.connection().execute(
            "UPDATE feeds SET following = ? WHERE feed_id = ?", [.integer(following ? 1 : 0), .blob(feedID)])
        guard updated == 0 else { return }
        try transaction.connection().execute(
            "INSERT INTO feeds (feed_id, identity_key, own, following) VALUES (?, ?, ?, ?)",
            [.blob(feedID), .blob(identityKey), .integer(own ? 1 : 0), .integer(following ? 1 : 0)])
    }

    public func setFlagged(_ feedID: [UInt8]) throws {
        try transaction.connection().execute("UPDATE feeds SET flagged = 1 WHERE feed_id = ?", [.blob(feedID)])
    }

    public func setDisplayName(_ feedID: [UInt8], _ name: String?) throws {
        try transaction.connection().execute("UPDATE feeds SET display_name = ? WHERE feed_id = ?", [name.map { .text($0) } ?? .null, .blob(feedID)])
    }

    public func setLastSync(_ feedID: [UInt8], at time: Int64) throws {
        try transaction.connection().execute("UPDATE feeds SET last_sync_at = ? WHERE feed_id = ?", [.integer(time), .blob(feedID)])
    }

    // MARK: Envelopes

    public func put(_ message: StoredFeedMessage) throws {
        try transaction.connection().execute(
            "INSERT OR REPLACE INTO feed_messages (\(Self.messageColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [.blob(message.feedID), .integer(message.sequence), .blob(message.messageID), .integer(message.timestamp), .text(message.type),
             .text(message.audience), .blob(message.envelope), .integer(message.accepted ? 0 : 1),
             message.contentStatus.map { .text($0) } ?? .null, message.contentJSON.map { .blob($0) } ?? .null, .integer(message.receivedAt)])
    }

    public func delete(feedID: [UInt8], sequence: Int64) throws {
        try transaction.connection().execute("DELETE FROM feed_messages WHERE feed_id = ? AND sequence = ?", [.blob(feedID), .integer(sequence)])
    }

    public func message(feedID: [UInt8], sequence: Int64) throws -> StoredFeedMessage? {
        try transaction.connection().queryFirst("SELECT \(Self.messageColumns) FROM feed_messages WHERE feed_id = ? AND sequence = ?",
                                                [.blob(feedID), .integer(sequence)], row: Self.message)
    }

    public func message(id: [UInt8]) throws -> StoredFeedMessage? {
        try transaction.connection().queryFirst("SELECT \(Self.messageColumns) FROM feed_messages WHERE message_id = ?", [.blob(id)], row: Self.message)
    }

    /// Envelopes of a feed within [from, to], ascending; accepted only unless `held`.
    public func messages(feedID: [UInt8], from: Int64 = 0, to: Int64 = Int64(UInt32.max), held: Bool = false) throws -> [StoredFeedMessage] {
        try transaction.connection().query(
            "SELECT \(Self.messageColumns) FROM feed_messages WHERE feed_id = ? AND sequence BETWEEN ? AND ?\(held ? "" : " AND state = 0") ORDER BY sequence",
            [.blob(feedID), .integer(from), .integer(to)], row: Self.message)
    }

    /// Accepted, readable entries of one type across every feed, oldest first.
    public func readable(type: String) throws -> [StoredFeedMessage] {
        try transaction.connection().query(
            "SELECT \(Self.messageColumns) FROM feed_messages WHERE type = ? AND state = 0 AND content_status = 'ok' ORDER BY received_at",
            [.text(type)], row: Self.message)
    }

    /// Accepted envelopes of the given feeds, newest first (`feed read`).
    public func recent(feedIDs: [[UInt8]], since: Int64?, limit: Int) throws -> [StoredFeedMessage] {
        guard !feedIDs.isEmpty else { return [] }
        let marks = Array(repeating: "?", count: feedIDs.count).joined(separator: ", ")
        return try transaction.connection().query(
            """
            SELECT \(Self.messageColumns) FROM feed_messages WHERE state = 0 AND feed_id IN (\(marks)) AND timestamp >= ?
            ORDER BY timestamp DESC, sequence DESC LIMIT ?
            """, feedIDs.map { .blob($0) } + [.integer(since ?? 0), .integer(Int64(limit))], row: Self.message)
    }

    /// The accepted range and held sequences of a feed.
    public func summary(feedID: [UInt8]) throws -> (accepted: ClosedRange<Int64>?, held: [Int64]) {
        let bounds = try transaction.connection().queryFirst(
            "SELECT MIN(sequence), MAX(sequence) FROM feed_messages WHERE feed_id = ? AND state = 0", [.blob(feedID)]) {
            $0.isNull(0) ? nil : $0.int64(0)...$0.int64(1)
        } ?? nil
        let held = try transaction.connection().query(
            "SELECT sequence FROM feed_messages WHERE feed_id = ? AND state = 1 ORDER BY sequence", [.blob(feedID)]) { $0.int64(0) }
        return (bounds, held)
    }

    /// Accepted entries whose content could not be opened yet (`no_key`), for a new key.
    public func unopened(feedID: [UInt8]) throws -> [StoredFeedMessage] {
        try transaction.connection().query(
            "SELECT \(Self.messageColumns) FROM feed_messages WHERE feed_id = ? AND state = 0 AND content_status = 'no_key' ORDER BY sequence",
            [.blob(feedID)], row: Self.message)
    }

    // MARK: Journal, evidence, tombstones

    public func putJournal(sequence: Int64, messageID: [UInt8], timestamp: Int64, type: String, envelope: [UInt8], contentJSON: [UInt8]?) throws {
        try transaction.connection().execute(
            "INSERT INTO feed_journal (sequence, message_id, timestamp, type, envelope, content_json) VALUES (?, ?, ?, ?, ?, ?)",
            [.integer(sequence), .blob(messageID), .integer(timestamp), .text(type), .blob(envelope), contentJSON.map { .blob($0) } ?? .null])
    }

    public func journal(limit: Int) throws -> [(sequence: Int64, messageID: [UInt8], timestamp: Int64, type: String, envelope: [UInt8], contentJSON: [UInt8]?)] {
        try transaction.connection().query(
            "SELECT sequence, message_id, timestamp, type, envelope, content_json FROM feed_journal ORDER BY sequence DESC LIMIT ?", [.integer(Int64(limit))]) {
            (sequence: $0.int64(0), messageID: $0.blob(1) ?? [], timestamp: $0.int64(2), type: $0.text(3) ?? "", envelope: $0.blob(4) ?? [],
             contentJSON: $0.blob(5))
        }
    }

    public func addEvidence(feedID: [UInt8], sequence: Int64, envelope: [UInt8], reason: String, at time: Int64) throws {
        try transaction.connection().execute(
            "INSERT INTO feed_evidence (feed_id, sequence, envelope, reason, recorded_at) VALUES (?, ?, ?, ?, ?)",
            [.blob(feedID), .integer(sequence), .blob(envelope), .text(reason), .integer(time)])
    }

    public func evidence(feedID: [UInt8]) throws -> [(sequence: Int64, reason: String)] {
        try transaction.connection().query(
            "SELECT sequence, reason FROM feed_evidence WHERE feed_id = ? ORDER BY recorded_at, sequence", [.blob(feedID)]) {
            (sequence: $0.int64(0), reason: $0.text(1) ?? "")
        }
    }

    public func addTombstone(feedID: [UInt8], target: [UInt8]) throws {
        try transaction.connection().execute("INSERT OR IGNORE INTO feed_tombstones (feed_id, target_id) VALUES (?, ?)", [.blob(feedID), .blob(target)])
    }
}
