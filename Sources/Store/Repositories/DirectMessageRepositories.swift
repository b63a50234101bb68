import SQLite

/// The Pigeon DM engine's state, as the records it names (`local`, `contact:<hex>`,
/// `session:<hex>`…). Values hold private keys and chain keys: they live only in this store.
public struct PigeonRecordRepository {
    let transaction: StoreTransaction

    public func all() throws -> [(key: String, value: [UInt8])] {
        try transaction.connection().query("SELECT key, value FROM pigeon_records ORDER BY key") {
            (key: $0.text(0) ?? "", value: $0.blob(1) ?? [])
        }
    }

    public func get(_ key: String) throws -> [UInt8]? {
        try transaction.connection().queryFirst("SELECT value FROM pigeon_records WHERE key = ?", [.text(key)]) { $0.blob(0) ?? [] }
    }

    /// Writes `value`, or deletes the record when it is nil.
    public func set(_ key: String, _ value: [UInt8]?) throws {
        if let value {
            try transaction.connection().execute("INSERT OR REPLACE INTO pigeon_records (key, value) VALUES (?, ?)", [.text(key), .blob(value)])
        } else {
            try transaction.connection().execute("DELETE FROM pigeon_records WHERE key = ?", [.text(key)])
        }
    }
}

/// What the user calls each DM contact (the engine knows them by identity key).
public struct DMContactRepository {
    let transaction: StoreTransaction

    public func list() throws -> [(identity: [UInt8], name: String, addedAt: Int64)] {
        try transaction.connection().query("SELECT identity, name, added_at FROM dm_contacts ORDER BY name") {
            (identity: $0.blob(0) ?? [], name: $0.text(1) ?? "", addedAt: $0.int64(2))
        }
    }

    public func name(identity: [UInt8]) throws -> String? {
        try transaction.connection().queryFirst("SELECT name FROM dm_contacts WHERE identity = ?", [.blob(identity)]) { $0.text(0) ?? "" }
    }

    public func identity(name: String) throws -> [UInt8]? {
        try transaction.connection().queryFirst("SELECT identity FROM dm_contacts WHERE name = ?", [.text(name)]) { $0.blob(0) ?? [] }
    }

    public func set(identity: [UInt8], name: String, at time: Int64) throws {
        try require32(identity, "a contact's identity key")
        try transaction.connection().execute(
            "INSERT OR REPLACE INTO dm_contacts (identity, name, added_at) VALUES (?, ?, ?)", [.blob(identity), .text(name), .integer(time)])
    }

    public func delete(identity: [UInt8]) throws {
        try transaction.connection().execute("DELETE FROM dm_contacts WHERE identity = ?", [.blob(identity)])
    }
}

/// One direct message, either way.
public struct StoredDM: Sendable, Equatable {
    public enum Direction: String, Sendable { case incoming = "in", outgoing = "out" }
    public enum Status: String, Sendable { case queued, sent, delivered, received }

    public let contact: [UInt8]
    public let direction: Direction
    public let msgID: [UInt8]
    public var sessionID: [UInt8]?
    public let kind: Int
    public let sentAt: Int64
    public var receivedAt: Int64?
    public let body: [UInt8]
    public var status: Status

    public init(contact: [UInt8], direction: Direction, msgID: [UInt8], sessionID: [UInt8]?, kind: Int, sentAt: Int64,
                receivedAt: Int64?, body: [UInt8], status: Status) {
        self.contact = contact
        self.direction = direction
        self.msgID = msgID
        self.sessionID = sessionID
        self.kind = kind
        self.sentAt = sentAt
        self.receivedAt = receivedAt
        self.body = body
        self.status = status
    }
}

extension StoredDM: CustomStringConvertible {
    public var description: String { "StoredDM(\(direction.rawValue), \(status.rawValue), body redacted)" }
}

public struct DMMessageRepository {
    let transaction: StoreTransaction

    /// Inserts the message; false when it is already stored (a copy from another transport).
    @discardableResult
    public func insert(_ m: StoredDM) throws -> Bool {
        try require32(m.contact, "a contact's identity key")
        guard m.msgID.count == 16 else { throw StoreError.invalidInput("a DM id must be 16 bytes") }
        let connection = try transaction.connection()
        try connection.execute(
            """
            INSERT OR IGNORE INTO dm_messages (contact, direction, msg_id, session_id, kind, sent_at, received_at, body, status)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [.blob(m.contact), .text(m.direction.rawValue), .blob(m.msgID), m.sessionID.map { .blob($0) } ?? .null, .int(m.kind),
             .integer(m.sentAt), m.receivedAt.map { .integer($0) } ?? .null, .blob(m.body), .text(m.status.rawValue)])
        return connection.changes > 0
    }

    public func get(contact: [UInt8], direction: StoredDM.Direction, msgID: [UInt8]) throws -> StoredDM? {
        try transaction.connection().queryFirst(
            "\(Self.select) WHERE contact = ? AND direction = ? AND msg_id = ?",
            [.blob(contact), .text(direction.rawValue), .blob(msgID)], row: Self.row)
    }

    /// Oldest first by sent_at; `contact` nil lists every conversation; `limit` keeps the newest.
    public func list(contact: [UInt8]?, kinds: [Int], limit: Int?) throws -> [StoredDM] {
        var sql = Self.select + " WHERE kind IN (\(kinds.map { String($0) }.joined(separator: ",")))"
        var values: [SQLiteValue] = []
        if let contact {
            sql += " AND contact = ?"
            values.append(.blob(contact))
        }
        sql += " ORDER BY sent_at DESC, received_at DESC"
        if let limit { sql += " LIMIT \(max(0, limit))" }
        return try transaction.connection().query(sql, values, row: Self.row).reversed()
    }

    /// Every message of every conversation, oldest first (a backup's copy).
    public func all() throws -> [StoredDM] {
        try transaction.connection().query(Self.select + " ORDER BY sent_at, received_at", [], row: Self.row)
    }

    /// Outgoing messages still waiting for a session (their frames are not made yet).
    public func queued(contact: [UInt8]) throws -> [StoredDM] {
        try transaction.connection().query(
            "\(Self.select) WHERE contact = ? AND direction = 'out' AND status = 'queued' AND session_id IS NULL ORDER BY sent_at",
            [.blob(contact)], row: Self.row)
    }

    public func update(_ m: StoredDM) throws {
        try transaction.connection().execute(
            "UPDATE dm_messages SET session_id = ?, received_at = ?, status = ? WHERE contact = ? AND direction = ? AND msg_id = ?",
            [m.sessionID.map { .blob($0) } ?? .null, m.receivedAt.map { .integer($0) } ?? .null, .text(m.status.rawValue),
             .blob(m.contact), .text(m.direction.rawValue), .blob(m.msgID)])
    }

    public func deleteAll(contact: [UInt8]) throws {
        try transaction.connection().execute("DELETE FROM dm_messages WHERE contact = ?", [.blob(contact)])
    }

    static let select = "SELECT contact, direction, msg_id, session_id, kind, sent_at, received_at, body, status FROM dm_messages"

    static func row(_ s: SQLiteStatement) -> StoredDM {
        StoredDM(contact: s.blob(0) ?? [], direction: StoredDM.Direction(rawValue: s.text(1) ?? "") ?? .incoming, msgID: s.blob(2) ?? [],
                 sessionID: s.blob(3), kind: s.int(4), sentAt: s.int64(5), receivedAt: s.isNull(6) ? nil : s.int64(6),
                 body: s.blob(7) ?? [], status: StoredDM.Status(rawValue: s.text(8) ?? "") ?? .queued)
    }
}

/// A frame waiting for (or given to) a transport. Retries send these very bytes: nothing is
/// encrypted twice.
public struct StoredDMFrame: Sendable, Equatable {
    public enum State: String, Sendable { case pending, sent, failed }
    public let id: Int64
    /// The Nostr key the frame's gift wrap is addressed to.
    public let recipient: [UInt8]
    /// The contact's identity key, when the frame belongs to a known contact.
    public let contact: [UInt8]?
    public let frame: [UInt8]
    public let msgID: [UInt8]?
    public let createdAt: Int64
    public let attempts: Int
    public let state: State
}

public struct DMOutboxRepository {
    let transaction: StoreTransaction

    @discardableResult
    public func insert(recipient: [UInt8], contact: [UInt8]?, frame: [UInt8], msgID: [UInt8]?, at time: Int64) throws -> Int64 {
        try require32(recipient, "a recipient's Nostr key")
        if let contact { try require32(contact, "a contact's identity key") }
        let connection = try transaction.connection()
        try connection.execute(
            "INSERT INTO dm_outbox (recipient, contact, frame, msg_id, created_at, attempts, state) VALUES (?, ?, ?, ?, ?, 0, 'pending')",
            [.blob(recipient), contact.map { .blob($0) } ?? .null, .blob(frame), msgID.map { .blob($0) } ?? .null, .integer(time)])
        return connection.lastInsertRowID
    }

    public func pending() throws -> [StoredDMFrame] {
        try transaction.connection().query("\(Self.select) WHERE state = 'pending' ORDER BY id", row: Self.row)
    }

    /// Pending frames whose backoff has passed at `time`, frames to known contacts first (a
    /// stranger's rows never delay a contact's), then oldest first; at most `limit`.
    public func due(at time: Int64, limit: Int) throws -> [StoredDMFrame] {
        try transaction.connection().query(
            "\(Self.select) WHERE state = 'pending' AND next_attempt_at <= ? ORDER BY contact IS NULL, id LIMIT ?",
            [.integer(time), .int(limit)], row: Self.row)
    }

    public func setState(id: Int64, _ state: StoredDMFrame.State, attempted: Bool) throws {
        try transaction.connection().execute(
            "UPDATE dm_outbox SET state = ?, attempts = attempts + ? WHERE id = ?", [.text(state.rawValue), .int(attempted ? 1 : 0), .integer(id)])
    }

    /// A failed attempt: one more attempt counted, the next not before `nextAttemptAt`.
    public func deferAttempt(id: Int64, until nextAttemptAt: Int64) throws {
        try transaction.connection().execute(
            "UPDATE dm_outbox SET attempts = attempts + 1, next_attempt_at = ? WHERE id = ? AND state = 'pending'",
            [.integer(nextAttemptAt), .integer(id)])
    }

    /// How many rows (any state) hold exactly `frame`: a repeated handshake1 is answered once.
    public func count(frame: [UInt8]) throws -> Int {
        try transaction.connection().queryFirst("SELECT COUNT(*) FROM dm_outbox WHERE frame = ?", [.blob(frame)]) { $0.int(0) } ?? 0
    }

    /// Keeps at most `limit` pending rows for strangers (no contact), deleting the oldest.
    public func capStrangerRows(_ limit: Int) throws {
        try transaction.connection().execute(
            """
            DELETE FROM dm_outbox WHERE state = 'pending' AND contact IS NULL AND id NOT IN
              (SELECT id FROM dm_outbox WHERE state = 'pending' AND contact IS NULL ORDER BY id DESC LIMIT ?)
            """, [.int(limit)])
    }

    /// Marks `failed` the pending rows created before `handshakesBefore` (handshake frames) or
    /// `messagesBefore` (message frames, type byte 0x04), or tried `maxAttempts` times.
    @discardableResult
    public func expire(handshakesBefore: Int64, messagesBefore: Int64, maxAttempts: Int) throws -> Int {
        let connection = try transaction.connection()
        try connection.execute(
            """
            UPDATE dm_outbox SET state = 'failed' WHERE state = 'pending' AND (attempts >= ?
              OR (substr(frame, 2, 1) = x'04' AND created_at < ?) OR (substr(frame, 2, 1) != x'04' AND created_at < ?))
            """, [.int(maxAttempts), .integer(messagesBefore), .integer(handshakesBefore)])
        return connection.changes
    }

    public func count(state: StoredDMFrame.State) throws -> Int {
        try transaction.connection().queryFirst("SELECT COUNT(*) FROM dm_outbox WHERE state = ?", [.text(state.rawValue)]) { $0.int(0) } ?? 0
    }

    /// When the newest frame to this contact was queued (seconds), if any.
    public func newestCreatedAt(contact: [UInt8]) throws -> Int64? {
        try transaction.connection().queryFirst("SELECT MAX(created_at) FROM dm_outbox WHERE contact = ?", [.blob(contact)]) {
            $0.isNull(0) ? nil : $0.int64(0)
        } ?? nil
    }

    /// Frames handed to a transport long ago are of no further use.
    public func prune(sentBefore time: Int64) throws {
        try transaction.connection().execute("DELETE FROM dm_outbox WHERE state != 'pending' AND created_at < ?", [.integer(time)])
    }

    public func deleteAll(contact: [UInt8]) throws {
        try transaction.connection().execute("DELETE FROM dm_outbox WHERE contact = ?", [.blob(contact)])
    }

    static let select = "SELECT id, recipient, contact, frame, msg_id, created_at, attempts, state FROM dm_outbox"

    static func row(_ s: SQLiteStatement) -> StoredDMFrame {
        StoredDMFrame(id: s.int64(0), recipient: s.blob(1) ?? [], contact: s.blob(2), frame: s.blob(3) ?? [], msgID: s.blob(4),
                      createdAt: s.int64(5), attempts: s.int(6), state: StoredDMFrame.State(rawValue: s.text(7) ?? "") ?? .failed)
    }
}
