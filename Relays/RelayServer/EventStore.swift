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
    /// Its author deleted it (NIP-09) before it arrived, or, for a gift wrap, its recipient did.
    case deleted
    /// A gift wrap whose recipient's mailbox already holds `limits.mailbox_wraps` wraps or
    /// `limits.mailbox_bytes` bytes; not stored.
    case mailboxFull
    /// The relay already holds `limits.relay_wraps` live gift wraps for all recipients
    /// together (one-time wrap keys and fresh recipient keys defeat the per-recipient quota).
    case relayMailboxFull
    /// A gift wrap its recipient deleted (read) before: not stored again, and answered as a
    /// duplicate so a sender cannot learn when the recipient read it.
    case wrapAlreadyRead
    /// A kind-5 event from a recipient authenticated as itself named gift wraps addressed to
    /// it, and removed this many of them (0 when it is a retry and they are already gone).
    /// The deletion is applied but not stored or served: it would tell every reader which wrap
    /// ids the recipient received and when it read them.
    case deletedWraps(Int)
    /// A kind-5 event names gift wraps addressed to its author, but the connection has not
    /// authenticated as that author: nothing was deleted or stored (the client may AUTH and
    /// send it again).
    case wrapDeletionNeedsAuthentication
}

/// How much one recipient's mailbox may hold (`limits.mailbox_wraps`, `limits.mailbox_bytes`).
struct MailboxQuota: Sendable, Equatable {
    var wraps: Int
    var bytes: Int
    /// Live wraps for all recipients together.
    var relayWraps: Int

    init(wraps: Int, bytes: Int, relayWraps: Int = RelayServerConfiguration.Limits().relayWraps) {
        self.wraps = wraps
        self.bytes = bytes
        self.relayWraps = relayWraps
    }

    init(_ limits: RelayServerConfiguration.Limits) {
        self.init(wraps: limits.mailboxWraps, bytes: limits.mailboxBytes, relayWraps: limits.relayWraps)
    }
}

/// The relay's events in SQLite (WAL) in its own data directory: one row per event with its
/// exact JSON, an index of single-letter tags for `#x` filters, and the NIP-09 deletions that
/// keep deleted events from coming back.
///
/// Gift wraps (kind 1059) are also a mailbox (Docs/protocols/pigeon-dm.md 6.3): each has exactly one
/// recipient (`EventAdmission`), counts against that recipient's quota, is deleted by a kind 5
/// of the recipient sent on a connection authenticated as it, and is purged at its
/// `expiration` or `GiftWrapMailbox.lifetimeSeconds` after `received_at`, whichever is first.
///
/// All database work runs on one serial queue, off Swift's cooperative pool, so a slow disk
/// never stalls the server's tasks. `close()` waits for queued work and closes the file.
///
/// `@unchecked Sendable`: the connection is used only on that queue.
final class EventStore: @unchecked Sendable {
    /// 1: events, tags, deletions. 2: `events.received_at` (arrival time, for the mailbox's
    /// 30 days after arrival), `deleted_wraps`, `deleted_events` keyed by (id, pubkey).
    /// 3: `deleted_wraps.deleted_at`, so the memory of read wraps is purged with the wraps.
    static let schemaVersion: Int64 = 3
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

    /// Brings the database to `schemaVersion` one step at a time, each step in its own
    /// transaction, so a database of any earlier version (or a new file) ends up the same.
    private static func prepare(_ db: SQLiteConnection) throws {
        _ = try db.query("PRAGMA journal_mode = WAL") { $0.text(0) }
        try db.exec("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;")
        let version = try db.query("PRAGMA user_version") { $0.int64(0) }.first ?? 0
        guard (0...schemaVersion).contains(version) else { throw RelayServerError.unsupportedSchema(version) }
        if version < 1 { try db.transaction { try createVersion1(db) } }
        if version < 2 { try db.transaction { try migrateToVersion2(db) } }
        if version < 3 { try db.transaction { try migrateToVersion3(db) } }
    }

    /// The first schema, as relays before the mailbox created it.
    static func createVersion1(_ db: SQLiteConnection) throws {
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

    /// Version 2 records when each event arrived. Events stored before it get their
    /// `created_at`, the best bound we have: a wrap's `created_at` is at most two days before
    /// it was sent (NIP-59 blurring), so an old wrap is purged at most that much early rather
    /// than kept a month past the migration.
    ///
    /// `deleted_wraps` remembers the wraps their recipient deleted (and for whom), so that a
    /// sender's retry of the same bytes is not delivered again and a retried deletion is
    /// recognised as one.
    ///
    /// It also keys `deleted_events` by (id, pubkey) instead of id alone: with id alone the
    /// first kind 5 to name an id (anyone's, matching nothing) took the only row, and the
    /// real author's (or, for a wrap, the recipient's) deletion could not record that the event
    /// must not come back.
    private static func migrateToVersion2(_ db: SQLiteConnection) throws {
        try db.exec("""
            ALTER TABLE events ADD COLUMN received_at INTEGER NOT NULL DEFAULT 0;
            UPDATE events SET received_at = created_at;
            CREATE INDEX events_wraps_by_arrival ON events(received_at) WHERE kind = \(Kind.giftWrap);
            CREATE TABLE deleted_events_v2(
                id BLOB NOT NULL,
                pubkey BLOB NOT NULL,
                PRIMARY KEY(id, pubkey)
            ) WITHOUT ROWID;
            INSERT INTO deleted_events_v2(id, pubkey) SELECT id, pubkey FROM deleted_events;
            DROP TABLE deleted_events;
            ALTER TABLE deleted_events_v2 RENAME TO deleted_events;
            CREATE TABLE deleted_wraps(
                id BLOB NOT NULL PRIMARY KEY,
                recipient TEXT NOT NULL
            ) WITHOUT ROWID;
            PRAGMA user_version = 2;
            """)
    }

    /// Rows of `deleted_wraps` from before version 3 count as deleted at the migration.
    private static func migrateToVersion3(_ db: SQLiteConnection) throws {
        try db.exec("""
            ALTER TABLE deleted_wraps ADD COLUMN deleted_at INTEGER NOT NULL DEFAULT 0;
            UPDATE deleted_wraps SET deleted_at = CAST(strftime('%s', 'now') AS INTEGER);
            CREATE INDEX deleted_wraps_by_time ON deleted_wraps(deleted_at);
            PRAGMA user_version = 3;
            """)
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

    /// Saves a verified event with NIP-01 replacement, NIP-09 deletion and mailbox semantics,
    /// in one transaction (so two wraps for one recipient cannot both take its last place).
    /// `json` is the event's serialization, served verbatim later.
    ///
    /// - Parameters:
    ///   - receivedAt: the relay's clock now, recorded as the arrival time.
    ///   - authenticated: the keys the sending connection proved (NIP-42): a kind 5 deletes
    ///     wraps only for a recipient among them.
    ///   - mailbox: the per-recipient quota for gift wraps.
    static func save(
        _ event: Event, json: [UInt8], receivedAt: Int64 = Int64(Date().timeIntervalSince1970),
        authenticated: Set<PublicKey> = [], mailbox: MailboxQuota = MailboxQuota(RelayServerConfiguration.Limits()),
        in db: SQLiteConnection
    ) throws -> SaveOutcome {
        try db.transaction {
            let id = SQLiteValue.blob(event.id.bytes)
            let pubkey = SQLiteValue.blob(event.pubkey.bytes)
            if try !db.query("SELECT 1 FROM events WHERE id = ?", [id], row: { _ in true }).isEmpty {
                return .duplicate
            }
            if try !db.query("SELECT 1 FROM deleted_events WHERE id = ? AND pubkey = ?", [id, pubkey], row: { _ in true }).isEmpty {
                return .deleted
            }
            if event.kind == Kind.giftWrap {
                if try db.queryFirst("SELECT 1 FROM deleted_wraps WHERE id = ?", [id], row: { _ in true }) == true {
                    return .wrapAlreadyRead
                }
                // Admission refuses a wrap without exactly one valid recipient; should one get
                // here anyway it has no mailbox to go in.
                guard let recipient = GiftWrapMailbox.recipient(of: event) else { return .mailboxFull }
                let held = try mailboxUsage(of: recipient, now: receivedAt, in: db)
                if held.wraps + 1 > mailbox.wraps || held.bytes + json.count > mailbox.bytes { return .mailboxFull }
                if try liveWrapCount(now: receivedAt, in: db) + 1 > mailbox.relayWraps { return .relayMailboxFull }
            }
            if event.kind == Kind.deletion {
                if authenticated.contains(event.pubkey) {
                    let wraps = try deleteWraps(namedBy: event, in: db)
                    if wraps.named {
                        try applyDeletion(event, in: db)
                        return .deletedWraps(wraps.removed)
                    }
                } else if try namesWraps(of: event.pubkey, deletion: event, in: db) {
                    return .wrapDeletionNeedsAuthentication
                }
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
                "INSERT INTO events(id, pubkey, created_at, kind, address, expiration, json, received_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [id, pubkey, .integer(event.createdAt), .integer(Int64(event.kind)),
                 address.map(SQLiteValue.text) ?? .null, event.expiration.map(SQLiteValue.integer) ?? .null, .blob(json),
                 .integer(receivedAt)])
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

    // MARK: - Mailbox

    /// SQL true for a stored wrap (alias `e`) that is still live at `?` (bound twice: now):
    /// not expired (NIP-40) and not older than the mailbox lifetime since it arrived.
    static let liveWrapCondition =
        "(e.expiration IS NULL OR e.expiration >= ?) AND e.received_at > ? - \(GiftWrapMailbox.lifetimeSeconds)"

    /// The live wraps stored for `recipient` and the bytes of their JSON. `length()` of a
    /// blob reads only its header, so this stays cheap for a full 16 MiB mailbox.
    static func mailboxUsage(of recipient: PublicKey, now: Int64, in db: SQLiteConnection) throws -> (wraps: Int, bytes: Int) {
        let row = try db.queryFirst("""
            SELECT COUNT(*), COALESCE(SUM(length(e.json)), 0) FROM tags t JOIN events e ON e.seq = t.seq
            WHERE t.name = 'p' AND t.value = ? AND e.kind = \(Kind.giftWrap) AND \(liveWrapCondition)
            """, [.text(recipient.hex), .integer(now), .integer(now)]) { (wraps: $0.int(0), bytes: $0.int(1)) }
        return row ?? (0, 0)
    }

    /// The live wraps stored for every recipient together (the arrival index bounds the scan).
    static func liveWrapCount(now: Int64, in db: SQLiteConnection) throws -> Int {
        try db.queryFirst("""
            SELECT COUNT(*) FROM events e WHERE e.kind = \(Kind.giftWrap) AND \(liveWrapCondition)
            """, [.integer(now), .integer(now)]) { $0.int(0) } ?? 0
    }

    /// SQL true for a stored wrap (alias `e`) whose `p` tags name only the key bound at `?`
    /// (bound twice). Wraps stored before the one-recipient rule may name several keys; those
    /// no single recipient may delete, since that would delete them for the others too.
    private static let wrapOfRecipientCondition = """
        e.kind = \(Kind.giftWrap)
        AND EXISTS (SELECT 1 FROM tags t WHERE t.seq = e.seq AND t.name = 'p' AND t.value = ?)
        AND NOT EXISTS (SELECT 1 FROM tags t WHERE t.seq = e.seq AND t.name = 'p' AND t.value != ?)
        """

    /// The well-formed event ids a kind-5 event's `e` tags name.
    private static func namedIDs(_ deletion: Event) -> [EventID] {
        deletion.tagValues("e").compactMap { value in
            guard value.utf8.count == 64 else { return nil }
            return try? EventID(hex: value)
        }
    }

    /// Deletes the wraps addressed to the deletion's author that its `e` tags name, and
    /// remembers each in `deleted_wraps`. `named` is true when any `e` tag names such a wrap,
    /// stored or deleted by this recipient before (a retried deletion). The caller has checked
    /// that the connection is authenticated as that author: a wrap's own author is a one-time
    /// key, so NIP-09's author rule cannot express "the recipient may delete it".
    private static func deleteWraps(namedBy deletion: Event, in db: SQLiteConnection) throws -> (removed: Int, named: Bool) {
        let recipient = SQLiteValue.text(deletion.pubkey.hex)
        var removed = 0
        var named = false
        for id in namedIDs(deletion) {
            let rows = try db.query(
                "SELECT e.seq FROM events e WHERE e.id = ? AND \(wrapOfRecipientCondition)",
                [.blob(id.bytes), recipient, recipient]) { $0.int64(0) }
            for seq in rows {
                removed += try db.execute("DELETE FROM events WHERE seq = ?", [.integer(seq)])
                try db.execute("INSERT OR IGNORE INTO deleted_wraps(id, recipient, deleted_at) VALUES (?, ?, ?)",
                               [.blob(id.bytes), recipient, .integer(deletion.createdAt)])
                named = true
            }
            if !named, try wasDeleted(id, by: recipient, in: db) { named = true }
        }
        return (removed, named)
    }

    /// Whether a kind-5 event's `e` tags name a wrap addressed to its author, stored or
    /// deleted by it before.
    private static func namesWraps(of author: PublicKey, deletion: Event, in db: SQLiteConnection) throws -> Bool {
        let recipient = SQLiteValue.text(author.hex)
        for id in namedIDs(deletion) {
            let stored = try db.queryFirst(
                "SELECT 1 FROM events e WHERE e.id = ? AND \(wrapOfRecipientCondition)",
                [.blob(id.bytes), recipient, recipient]) { _ in true }
            if stored == true { return true }
            if try wasDeleted(id, by: recipient, in: db) { return true }
        }
        return false
    }

    private static func wasDeleted(_ id: EventID, by recipient: SQLiteValue, in db: SQLiteConnection) throws -> Bool {
        try db.queryFirst("SELECT 1 FROM deleted_wraps WHERE id = ? AND recipient = ?", [.blob(id.bytes), recipient]) { _ in true } == true
    }

    // MARK: - Purge

    /// Removes expired events (NIP-40), gift wraps `GiftWrapMailbox.lifetimeSeconds` after
    /// they arrived, and events past their kind's retention age.
    static func purge(now: Int64, retention: [RelayServerConfiguration.RetentionRule], in db: SQLiteConnection) throws -> Int {
        try db.transaction {
            var removed = try db.execute("DELETE FROM events WHERE expiration IS NOT NULL AND expiration < ?", [.integer(now)])
            removed += try db.execute("DELETE FROM events WHERE kind = \(Kind.giftWrap) AND received_at <= ?",
                                      [.integer(now - GiftWrapMailbox.lifetimeSeconds)])
            // What a recipient read is forgotten once the wrap could no longer be live anyway
            // (a copy arriving later is stored and read again: harmless, and bounded).
            try db.execute("DELETE FROM deleted_wraps WHERE deleted_at <= ?", [.integer(now - GiftWrapMailbox.lifetimeSeconds)])
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
