import Dispatch
import Foundation
import Nostr
import SQLite

/// What saving an event did.
enum SaveOutcome: Equatable {
    /// Stored (replacing an older version of a replaceable/addressable event, if any).
    case stored
    /// The same id is already stored.
    case duplicate
    /// A newer version of this replaceable/addressable event is stored; this one is not.
    case superseded
    /// Its author deleted it (NIP-09) before it arrived.
    case deleted
}

/// The relay's events in SQLite (WAL) in its own data directory: one row per event with its
/// exact JSON, an index of single-letter tags for `#x` filters, and the NIP-09 deletions that
/// keep deleted events from coming back.
///
/// All database work runs on one serial queue, off Swift's cooperative pool, so a slow disk
/// never stalls the server's tasks. `close()` waits for queued work and closes the file.
///
/// `@unchecked Sendable`: the connection is used only on that queue.
final class EventStore: @unchecked Sendable {
    static let schemaVersion: Int64 = 1
    static let fileName = "relay.sqlite"

    private let queue = DispatchQueue(label: "burrow.relay.store")
    /// Touched only on `queue`.
    private var database: SQLiteConnection?

    /// Opens (creating if needed) `directory/relay.sqlite`.
    init(directory: String) throws {
        let fm = FileManager.default
        var isDirectory: ObjCBool = false
        if fm.fileExists(atPath: directory, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else {
                throw RelayServerError.dataDirectory(path: directory, reason: "is not a directory")
            }
        } else {
            do {
                try fm.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw RelayServerError.dataDirectory(path: directory, reason: "cannot be created (\(error.localizedDescription))")
            }
        }
        let path = (directory as NSString).appendingPathComponent(Self.fileName)
        let db = try SQLiteConnection(
            path: path, options: .init(create: true, serialized: false, busyTimeoutMilliseconds: 5000),
            mapError: RelayServerError.init(sqlite:)
        )
        try Self.prepare(db)
        database = db
    }

    /// Runs `body` on the store's queue.
    func run<T: Sendable>(_ body: @escaping @Sendable (SQLiteConnection) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async {
                guard let db = self.database, db.handle != nil else {
                    continuation.resume(throwing: RelayServerError.storeClosed)
                    return
                }
                continuation.resume(with: Result { try body(db) })
            }
        }
    }

    /// Waits for queued work, checkpoints the WAL and closes the database.
    func close() {
        queue.sync {
            if let db = database {
                try? db.exec("PRAGMA wal_checkpoint(TRUNCATE)")
                db.close()
            }
            database = nil
        }
    }

    // MARK: - Schema

    private static func prepare(_ db: SQLiteConnection) throws {
        _ = try db.query("PRAGMA journal_mode = WAL") { $0.text(0) }
        try db.exec("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;")
        let version = try db.query("PRAGMA user_version") { $0.int64(0) }.first ?? 0
        switch version {
        case 0:
            try db.transaction {
                try db.exec("""
                    CREATE TABLE events(
                        seq INTEGER PRIMARY KEY,
                        id BLOB NOT NULL UNIQUE,
                        pubkey BLOB NOT NULL,
                        created_at INTEGER NOT NULL,
                        kind INTEGER NOT NULL,
                        address TEXT,
                        expiration INTEGER,
                        json BLOB NOT NULL
                    );
                    CREATE INDEX events_by_time ON events(created_at);
                    CREATE INDEX events_by_author ON events(pubkey, created_at);
                    CREATE INDEX events_by_kind ON events(kind, created_at);
                    CREATE INDEX events_by_address ON events(pubkey, kind, address);
                    CREATE INDEX events_by_expiration ON events(expiration) WHERE expiration IS NOT NULL;
                    CREATE TABLE tags(
                        seq INTEGER NOT NULL REFERENCES events(seq) ON DELETE CASCADE,
                        name TEXT NOT NULL,
                        value TEXT NOT NULL
                    );
                    CREATE INDEX tags_by_value ON tags(name, value, seq);
                    CREATE INDEX tags_by_event ON tags(seq);
                    CREATE TABLE deleted_events(
                        id BLOB NOT NULL PRIMARY KEY,
                        pubkey BLOB NOT NULL
                    ) WITHOUT ROWID;
                    CREATE TABLE deleted_addresses(
                        pubkey BLOB NOT NULL,
                        kind INTEGER NOT NULL,
                        address TEXT NOT NULL,
                        until INTEGER NOT NULL,
                        PRIMARY KEY(pubkey, kind, address)
                    ) WITHOUT ROWID;
                    PRAGMA user_version = 1;
                    """)
            }
        case schemaVersion:
            break
        default:
            throw RelayServerError.unsupportedSchema(version)
        }
    }

    // MARK: - Writing

    /// The `address` column: `d` for addressable events, "" for replaceable ones, nil otherwise.
    static func address(of event: Event) -> String? {
        switch event.kindClass {
        case .replaceable: return ""
        case .addressable: return event.identifier
        case .regular, .ephemeral: return nil
        }
    }

    /// Saves a verified event with NIP-01 replacement and NIP-09 deletion semantics, in one
    /// transaction. `json` is the event's serialization, served verbatim later.
    static func save(_ event: Event, json: [UInt8], in db: SQLiteConnection) throws -> SaveOutcome {
        try db.transaction {
            let id = SQLiteValue.blob(event.id.bytes)
            let pubkey = SQLiteValue.blob(event.pubkey.bytes)
            if try !db.query("SELECT 1 FROM events WHERE id = ?", [id], row: { _ in true }).isEmpty {
                return .duplicate
            }
            if try !db.query("SELECT 1 FROM deleted_events WHERE id = ? AND pubkey = ?", [id, pubkey], row: { _ in true }).isEmpty {
                return .deleted
            }
            let address = Self.address(of: event)
            if let address {
                let key: [SQLiteValue] = [pubkey, .integer(Int64(event.kind)), .text(address)]
                let deletedUntil = try db.query(
                    "SELECT until FROM deleted_addresses WHERE pubkey = ? AND kind = ? AND address = ?", key) { $0.int64(0) }
                if let until = deletedUntil.first, event.createdAt <= until { return .deleted }
                let current = try db.query(
                    "SELECT seq, id, created_at FROM events WHERE pubkey = ? AND kind = ? AND address = ?", key
                ) { (seq: $0.int64(0), id: $0.blob(1) ?? [], createdAt: $0.int64(2)) }
                for row in current {
                    // NIP-01: the newest wins; on equal created_at, the lowest id.
                    if row.createdAt > event.createdAt
                        || (row.createdAt == event.createdAt && row.id.lexicographicallyPrecedes(event.id.bytes)) {
                        return .superseded
                    }
                }
                for row in current { try db.execute("DELETE FROM events WHERE seq = ?", [.integer(row.seq)]) }
            }
            try db.execute(
                "INSERT INTO events(id, pubkey, created_at, kind, address, expiration, json) VALUES (?, ?, ?, ?, ?, ?, ?)",
                [id, pubkey, .integer(event.createdAt), .integer(Int64(event.kind)),
                 address.map(SQLiteValue.text) ?? .null, event.expiration.map(SQLiteValue.integer) ?? .null, .blob(json)])
            let seq = db.lastInsertRowID
            try indexTags(of: event, seq: seq, in: db)
            if event.kind == Kind.deletion { try applyDeletion(event, in: db) }
            return .stored
        }
    }

    /// Indexes each distinct (single-letter name, first value) pair for `#x` filters.
    private static func indexTags(of event: Event, seq: Int64, in db: SQLiteConnection) throws {
        var seen = Set<[String]>()
        let insert = try db.prepare("INSERT INTO tags(seq, name, value) VALUES (?, ?, ?)")
        for tag in event.tags where tag.count >= 2 && Filter.isQueryableTagName(tag[0]) {
            let pair = [tag[0], tag[1]]
            guard seen.insert(pair).inserted else { continue }
            try insert.bind([.integer(seq), .text(tag[0]), .text(tag[1])])
            while try insert.step() {}
            insert.reset()
        }
    }

    /// NIP-09: a kind-5 event removes the `e` events and `a` addresses of its own author (up
    /// to its created_at for addresses) and keeps them from being stored again. Deleting a
    /// deletion has no effect.
    private static func applyDeletion(_ deletion: Event, in db: SQLiteConnection) throws {
        let pubkey = SQLiteValue.blob(deletion.pubkey.bytes)
        for value in deletion.tagValues("e") {
            guard let id = try? EventID(hex: value), value.utf8.count == 64 else { continue }
            try db.execute("DELETE FROM events WHERE id = ? AND pubkey = ? AND kind != ?",
                           [.blob(id.bytes), pubkey, .integer(Int64(Kind.deletion))])
            try db.execute("INSERT OR IGNORE INTO deleted_events(id, pubkey) VALUES (?, ?)", [.blob(id.bytes), pubkey])
        }
        for value in deletion.tagValues("a") {
            let parts = value.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 3, let kind = Int(parts[0]), parts[1] == deletion.pubkey.hex else { continue }
            let kindClass = KindClass(kind: kind)
            guard kindClass == .replaceable || kindClass == .addressable else { continue }
            let address = kindClass == .replaceable ? "" : String(parts[2])
            let key: [SQLiteValue] = [pubkey, .integer(Int64(kind)), .text(address)]
            try db.execute("DELETE FROM events WHERE pubkey = ? AND kind = ? AND address = ? AND created_at <= ?",
                           key + [.integer(deletion.createdAt)])
            try db.execute("INSERT OR IGNORE INTO deleted_addresses(pubkey, kind, address, until) VALUES (?, ?, ?, ?)",
                           key + [.integer(deletion.createdAt)])
            try db.execute("UPDATE deleted_addresses SET until = ? WHERE pubkey = ? AND kind = ? AND address = ? AND until < ?",
                           [.integer(deletion.createdAt)] + key + [.integer(deletion.createdAt)])
        }
    }

    /// Removes expired events (NIP-40) and events past their kind's retention age.
    static func purge(now: Int64, retention: [RelayServerConfiguration.RetentionRule], in db: SQLiteConnection) throws -> Int {
        try db.transaction {
            var removed = try db.execute("DELETE FROM events WHERE expiration IS NOT NULL AND expiration < ?", [.integer(now)])
            for rule in retention {
                let kinds = rule.kinds.map(String.init).joined(separator: ",")
                removed += try db.execute("DELETE FROM events WHERE kind IN (\(kinds)) AND created_at < ?",
                                          [.integer(now - Int64(rule.maxAgeSeconds))])
            }
            return removed
        }
    }

    static func count(in db: SQLiteConnection) throws -> Int {
        Int(try db.query("SELECT COUNT(*) FROM events") { $0.int64(0) }.first ?? 0)
    }
}
