/// Versioned schema. `PRAGMA user_version` records the version (it lives in the database
/// header, inside the transaction); each migration runs in its own transaction together with
/// the version bump, so a crash leaves the schema at one version or the next.
///
/// To change the schema, append a migration; never edit one that has shipped.
struct Migration {
    let version: Int
    let apply: (SQLiteConnection) throws -> Void

    init(version: Int, statements: [String]) {
        self.version = version
        self.apply = { connection in
            for sql in statements { try connection.exec(sql) }
        }
    }
}

enum Schema {
    static let migrations: [Migration] = [v1]

    static var latestVersion: Int { migrations.last?.version ?? 0 }

    /// v1: identity, relays, raw verified events, processed-event ids.
    /// SQLite 3.15: no UPSERT, RETURNING, JSON1 or window functions.
    static let v1 = Migration(version: 1, statements: [
        // Exactly one identity: the Nostr secret key.
        """
        CREATE TABLE identity (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            secret_key BLOB NOT NULL CHECK (length(secret_key) = 32),
            created_at INTEGER NOT NULL
        )
        """,
        """
        CREATE TABLE relays (
            id INTEGER PRIMARY KEY,
            url TEXT NOT NULL UNIQUE,
            read INTEGER NOT NULL CHECK (read IN (0, 1)),
            write INTEGER NOT NULL CHECK (write IN (0, 1)),
            added_at INTEGER NOT NULL
        )
        """,
        // Raw events, stored only after their id and signature were verified.
        """
        CREATE TABLE events (
            id BLOB PRIMARY KEY NOT NULL CHECK (length(id) = 32),
            kind INTEGER NOT NULL CHECK (kind >= 0),
            pubkey BLOB NOT NULL CHECK (length(pubkey) = 32),
            created_at INTEGER NOT NULL,
            json TEXT NOT NULL,
            received_at INTEGER NOT NULL
        ) WITHOUT ROWID
        """,
        "CREATE INDEX events_by_kind ON events (kind, created_at)",
        "CREATE INDEX events_by_pubkey ON events (pubkey, kind, created_at)",
        // Dedup: every event the pipeline has handled, whatever became of it.
        """
        CREATE TABLE processed_events (
            event_id BLOB PRIMARY KEY NOT NULL CHECK (length(event_id) = 32),
            outcome TEXT NOT NULL,
            processed_at INTEGER NOT NULL
        ) WITHOUT ROWID
        """,
    ])

    static func currentVersion(_ connection: SQLiteConnection) throws -> Int {
        try connection.queryFirst("PRAGMA user_version") { $0.int(0) } ?? 0
    }

    /// Applies every migration newer than the store's version, each in one transaction.
    static func migrate(_ connection: SQLiteConnection) throws {
        for migration in migrations {
            try connection.transaction {
                // Read inside the write transaction: the version cannot move under us.
                let current = try currentVersion(connection)
                guard current < migration.version else { return }
                guard current == migration.version - 1 else {
                    throw StoreError.storeCorrupt("the schema version is inconsistent")
                }
                try migration.apply(connection)
                try connection.exec("PRAGMA user_version = \(migration.version)")
            }
        }
    }
}
