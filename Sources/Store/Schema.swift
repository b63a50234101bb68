import SQLite

/// Versioned schema. `PRAGMA user_version` records the version (it lives in the database
/// header, inside the transaction); each migration runs in its own transaction together with
/// the version bump, so a crash leaves the schema at one version or the next.
///
/// To change the schema, append a migration; never edit one that has shipped.
struct Migration: Sendable {
    let version: Int
    let apply: @Sendable (SQLiteConnection) throws -> Void

    init(version: Int, statements: [String]) {
        self.version = version
        self.apply = { connection in
            for sql in statements { try connection.exec(sql) }
        }
    }
}

enum Schema {
    static let migrations: [Migration] = [v1, v2, v3, v4, v5, v6, v7, v8, v9, v10, v11, v12, v13]

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

    /// v2: Marmot — our KeyPackages, groups (MLS state and the rollback point), invites
    /// awaiting consent, decrypted messages, member names, the outbox and small settings.
    static let v2 = Migration(version: 2, statements: [
        // KeyPackages we published, with their private keys (last resort: kept after use).
        """
        CREATE TABLE key_packages (
            ref BLOB PRIMARY KEY NOT NULL CHECK (length(ref) = 32),
            event_id BLOB CHECK (event_id IS NULL OR length(event_id) = 32),
            legacy_event_id BLOB CHECK (legacy_event_id IS NULL OR length(legacy_event_id) = 32),
            slot TEXT NOT NULL,
            bundle BLOB NOT NULL,
            created_at INTEGER NOT NULL,
            not_after INTEGER NOT NULL,
            consumed_at INTEGER
        ) WITHOUT ROWID
        """,
        "CREATE INDEX key_packages_by_event ON key_packages (event_id)",
        "CREATE INDEX key_packages_by_legacy_event ON key_packages (legacy_event_id)",
        """
        CREATE TABLE groups (
            mls_group_id BLOB PRIMARY KEY NOT NULL,
            nostr_group_id BLOB NOT NULL CHECK (length(nostr_group_id) = 32),
            state TEXT NOT NULL CHECK (state IN ('pending', 'active', 'leaving', 'left', 'removed', 'declined')),
            mls_state BLOB NOT NULL,
            rollback_state BLOB,
            rollback_created_at INTEGER,
            rollback_event_id BLOB,
            created_at INTEGER NOT NULL,
            last_self_update INTEGER NOT NULL,
            sync_since INTEGER NOT NULL
        ) WITHOUT ROWID
        """,
        "CREATE INDEX groups_by_nostr_id ON groups (nostr_group_id)",
        """
        CREATE TABLE invites (
            wrapper_id BLOB PRIMARY KEY NOT NULL CHECK (length(wrapper_id) = 32),
            mls_group_id BLOB NOT NULL,
            inviter BLOB NOT NULL CHECK (length(inviter) = 32),
            rumor_json TEXT NOT NULL,
            key_package_ref BLOB NOT NULL,
            state TEXT NOT NULL CHECK (state IN ('pending', 'accepted', 'declined')),
            received_at INTEGER NOT NULL
        ) WITHOUT ROWID
        """,
        """
        CREATE TABLE messages (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            mls_group_id BLOB NOT NULL,
            id BLOB NOT NULL CHECK (length(id) = 32),
            event_id BLOB NOT NULL CHECK (length(event_id) = 32),
            sender BLOB NOT NULL CHECK (length(sender) = 32),
            kind INTEGER NOT NULL,
            created_at INTEGER NOT NULL,
            content TEXT NOT NULL,
            rumor_json TEXT NOT NULL,
            epoch INTEGER NOT NULL,
            received_at INTEGER NOT NULL,
            UNIQUE (mls_group_id, id)
        )
        """,
        "CREATE INDEX messages_by_group ON messages (mls_group_id, created_at, seq)",
        // Names for member keys: a Whistle nickname in one group, or a kind-0 profile name
        // (mls_group_id empty) — the nickname wins.
        """
        CREATE TABLE member_names (
            pubkey BLOB NOT NULL CHECK (length(pubkey) = 32),
            mls_group_id BLOB NOT NULL,
            name TEXT NOT NULL,
            updated_at INTEGER NOT NULL,
            PRIMARY KEY (pubkey, mls_group_id)
        ) WITHOUT ROWID
        """,
        // Signed events owed to relays. A welcome waits for its commit (`after_event`) to be sent.
        """
        CREATE TABLE outbox (
            event_id BLOB PRIMARY KEY NOT NULL CHECK (length(event_id) = 32),
            mls_group_id BLOB,
            purpose TEXT NOT NULL,
            json TEXT NOT NULL,
            relays TEXT NOT NULL,
            after_event BLOB,
            created_at INTEGER NOT NULL,
            state TEXT NOT NULL CHECK (state IN ('pending', 'sent', 'failed'))
        ) WITHOUT ROWID
        """,
        "CREATE TABLE settings (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL) WITHOUT ROWID",
    ])

    /// v3: up to five rollback snapshots per group (the states before the commits that started
    /// its last epochs), superseding v2's single `rollback_*` columns, which stay NULL.
    static let v3 = Migration(version: 3, statements: [
        """
        CREATE TABLE group_snapshots (
            mls_group_id BLOB NOT NULL,
            position INTEGER NOT NULL,
            epoch INTEGER NOT NULL,
            state BLOB NOT NULL,
            commit_created_at INTEGER NOT NULL,
            commit_event_id BLOB NOT NULL CHECK (length(commit_event_id) = 32),
            commit_digest BLOB NOT NULL,
            PRIMARY KEY (mls_group_id, position)
        ) WITHOUT ROWID
        """,
    ])

    /// v4: an invite that re-adds us to a group we hold (a newer epoch than ours: we were
    /// removed and re-added, or our branch lost) carries the joined state until accepted.
    static let v4 = Migration(version: 4, statements: [
        "ALTER TABLE invites ADD COLUMN group_state BLOB",
    ])

    /// v5: the groups table without v2's `rollback_*` columns (superseded by v3's snapshots,
    /// always NULL since; SQLite 3.15 cannot drop a column, so the table is rebuilt), and our
    /// commits' intents in their own table instead of `intent:`/`retry:` settings keys (those
    /// are moved, with the group of each from the commit's outbox entry).
    static let v5 = Migration(version: 5, statements: [
        """
        CREATE TABLE groups_v5 (
            mls_group_id BLOB PRIMARY KEY NOT NULL,
            nostr_group_id BLOB NOT NULL CHECK (length(nostr_group_id) = 32),
            state TEXT NOT NULL CHECK (state IN ('pending', 'active', 'leaving', 'left', 'removed', 'declined')),
            mls_state BLOB NOT NULL,
            created_at INTEGER NOT NULL,
            last_self_update INTEGER NOT NULL,
            sync_since INTEGER NOT NULL
        ) WITHOUT ROWID
        """,
        """
        INSERT INTO groups_v5 (mls_group_id, nostr_group_id, state, mls_state, created_at, last_self_update, sync_since)
        SELECT mls_group_id, nostr_group_id, state, mls_state, created_at, last_self_update, sync_since FROM groups
        """,
        "DROP TABLE groups",
        "ALTER TABLE groups_v5 RENAME TO groups",
        "CREATE INDEX groups_by_nostr_id ON groups (nostr_group_id)",
        // What one of our commits meant to do, while the commit can still lose its epoch;
        // `lost` once it did and the intent waits to be applied again.
        """
        CREATE TABLE commit_intents (
            commit_event_id BLOB PRIMARY KEY NOT NULL CHECK (length(commit_event_id) = 32),
            mls_group_id BLOB NOT NULL,
            intent TEXT NOT NULL,
            lost INTEGER NOT NULL CHECK (lost IN (0, 1)),
            created_at INTEGER NOT NULL
        ) WITHOUT ROWID
        """,
        """
        INSERT OR REPLACE INTO commit_intents (commit_event_id, mls_group_id, intent, lost, created_at)
        SELECT o.event_id, o.mls_group_id, s.value, 0, o.created_at FROM settings s
        JOIN outbox o ON o.mls_group_id IS NOT NULL AND s.key = 'intent:' || lower(hex(o.event_id))
        """,
        """
        INSERT OR REPLACE INTO commit_intents (commit_event_id, mls_group_id, intent, lost, created_at)
        SELECT o.event_id, o.mls_group_id, s.value, 1, o.created_at FROM settings s
        JOIN outbox o ON o.mls_group_id IS NOT NULL
            AND s.key = 'retry:' || lower(hex(o.mls_group_id)) || ':' || lower(hex(o.event_id))
        """,
        "DELETE FROM settings WHERE substr(key, 1, 7) = 'intent:' OR substr(key, 1, 6) = 'retry:'",
    ])

    /// v6: Pigeon direct messages. The DM engine's state as records it names (identity,
    /// contacts, sessions with their ratchets, pending handshakes, held frames, the seen cache);
    /// contact names; messages; the frames waiting for a transport.
    static let v6 = Migration(version: 6, statements: [
        """
        CREATE TABLE pigeon_records (
            key TEXT PRIMARY KEY NOT NULL,
            value BLOB NOT NULL
        ) WITHOUT ROWID
        """,
        """
        CREATE TABLE dm_contacts (
            identity BLOB PRIMARY KEY NOT NULL CHECK (length(identity) = 32),
            name TEXT NOT NULL UNIQUE,
            added_at INTEGER NOT NULL
        ) WITHOUT ROWID
        """,
        """
        CREATE TABLE dm_messages (
            contact BLOB NOT NULL CHECK (length(contact) = 32),
            direction TEXT NOT NULL CHECK (direction IN ('in', 'out')),
            msg_id BLOB NOT NULL CHECK (length(msg_id) = 16),
            session_id BLOB,
            kind INTEGER NOT NULL,
            sent_at INTEGER NOT NULL,
            received_at INTEGER,
            body BLOB NOT NULL,
            status TEXT NOT NULL CHECK (status IN ('queued', 'sent', 'delivered', 'received')),
            PRIMARY KEY (contact, direction, msg_id)
        ) WITHOUT ROWID
        """,
        "CREATE INDEX dm_messages_by_time ON dm_messages (sent_at)",
        // A frame leaves only from here: written with the ratchet step that made it. `recipient`
        // is the Nostr key its gift wrap goes to (a first handshake may come from a stranger);
        // `contact` the identity key, once known.
        """
        CREATE TABLE dm_outbox (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            recipient BLOB NOT NULL CHECK (length(recipient) = 32),
            contact BLOB CHECK (contact IS NULL OR length(contact) = 32),
            frame BLOB NOT NULL,
            msg_id BLOB,
            created_at INTEGER NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            state TEXT NOT NULL CHECK (state IN ('pending', 'sent', 'failed'))
        )
        """,
        "CREATE INDEX dm_outbox_pending ON dm_outbox (state, id)",
    ])

    /// v7: join requests (Whistle's kind-1080 rumor) received as an inviter, kept by rumor id
    /// so the same request wrapped twice is one row; `pending` until approved, rejected or
    /// superseded by a newer one (settled rows stay, so a copy arriving later is not listed again).
    static let v7 = Migration(version: 7, statements: [
        """
        CREATE TABLE join_requests (
            id BLOB PRIMARY KEY NOT NULL CHECK (length(id) = 32),
            wrapper_id BLOB NOT NULL CHECK (length(wrapper_id) = 32),
            mls_group_id BLOB NOT NULL,
            requester BLOB NOT NULL CHECK (length(requester) = 32),
            name TEXT,
            key_package_json TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            received_at INTEGER NOT NULL,
            state TEXT NOT NULL CHECK (state IN ('pending', 'approved', 'rejected', 'superseded'))
        ) WITHOUT ROWID
        """,
        "CREATE INDEX join_requests_by_group ON join_requests (mls_group_id, state, created_at)",
    ])

    /// v8: the DM outbox backs off (`next_attempt_at`, seconds) after failed attempts, so frames
    /// to unreachable relays stop being retried on every flush (issue 19).
    static let v8 = Migration(version: 8, statements: [
        "ALTER TABLE dm_outbox ADD COLUMN next_attempt_at INTEGER NOT NULL DEFAULT 0",
    ])

    /// v9: kind-0 profiles (the newest signed one per key) of ourselves and the people we share
    /// a group, an invite or a DM with, so people are shown by name (issue 22).
    static let v9 = Migration(version: 9, statements: [
        """
        CREATE TABLE profiles (
            pubkey BLOB PRIMARY KEY NOT NULL CHECK (length(pubkey) = 32),
            content TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            event_id BLOB NOT NULL CHECK (length(event_id) = 32)
        ) WITHOUT ROWID
        """,
    ])

    /// v10: a message's sender ratchet generation, so one person's messages of the same
    /// second keep their sending order (issue 22).
    static let v10 = Migration(version: 10, statements: [
        "ALTER TABLE messages ADD COLUMN generation INTEGER NOT NULL DEFAULT 0",
        // Our next message's generation counts our messages of the epoch: one index lookup.
        "CREATE INDEX messages_by_sender_epoch ON messages (mls_group_id, epoch, sender)",
    ])

    /// v11: location sharing (issue 23): per group, where positions come from and how often
    /// `run` shares them, whether it is paused, and what happened last (for `share status`).
    static let v11 = Migration(version: 11, statements: [
        """
        CREATE TABLE location_shares (
            mls_group_id BLOB PRIMARY KEY NOT NULL,
            source TEXT NOT NULL,
            interval INTEGER NOT NULL CHECK (interval BETWEEN 10 AND 3600),
            fuzz INTEGER NOT NULL CHECK (fuzz BETWEEN 0 AND 1000),
            battery INTEGER NOT NULL CHECK (battery IN (0, 1)),
            paused INTEGER NOT NULL DEFAULT 0 CHECK (paused IN (0, 1)),
            created_at INTEGER NOT NULL,
            last_fix_at INTEGER,
            last_publish_at INTEGER,
            last_error TEXT
        ) WITHOUT ROWID
        """,
    ])

    /// v12: a share's last problem also has a code (`location_denied`, `source_unavailable`,
    /// `no_fix`, `publish_failed`) that scripts can act on, and `run` records where its schedule
    /// stands (stationary, the interval in force, the next publish) for `share status`.
    static let v12 = Migration(version: 12, statements: [
        "ALTER TABLE location_shares ADD COLUMN last_error_code TEXT",
        "ALTER TABLE location_shares ADD COLUMN stationary INTEGER CHECK (stationary IN (0, 1))",
        "ALTER TABLE location_shares ADD COLUMN interval_in_force INTEGER CHECK (interval_in_force BETWEEN 10 AND 14400)",
        "ALTER TABLE location_shares ADD COLUMN next_publish_at INTEGER",
    ])

    /// v13: feeds (feed.md 7.3). Followed feeds and the own feed in `feed_messages` (accepted or
    /// held, the envelope as it travels, its content once opened), the journal apart, evidence of
    /// forks and broken links, the ML-KEM bundles (own seeds included), the encapsulations made
    /// and received, the pair keys they complete, and the group feed secrets per epoch. Every
    /// private key lives here only; `secure_delete` is on for the whole store.
    static let v13 = Migration(version: 13, statements: [
        """
        CREATE TABLE feeds (
            feed_id BLOB PRIMARY KEY NOT NULL CHECK (length(feed_id) = 32),
            identity_key BLOB NOT NULL CHECK (length(identity_key) = 32),
            own INTEGER NOT NULL CHECK (own IN (0, 1)),
            following INTEGER NOT NULL CHECK (following IN (0, 1)),
            display_name TEXT,
            flagged INTEGER NOT NULL DEFAULT 0 CHECK (flagged IN (0, 1)),
            last_sync_at INTEGER
        ) WITHOUT ROWID
        """,
        """
        CREATE TABLE feed_messages (
            feed_id BLOB NOT NULL CHECK (length(feed_id) = 32),
            sequence INTEGER NOT NULL CHECK (sequence BETWEEN 0 AND 4294967294),
            message_id BLOB NOT NULL UNIQUE CHECK (length(message_id) = 32),
            timestamp INTEGER NOT NULL,
            type TEXT NOT NULL,
            audience TEXT NOT NULL,
            envelope BLOB NOT NULL,
            state INTEGER NOT NULL CHECK (state IN (0, 1)),
            content_status TEXT,
            content_json BLOB,
            received_at INTEGER NOT NULL,
            PRIMARY KEY (feed_id, sequence)
        ) WITHOUT ROWID
        """,
        """
        CREATE TABLE feed_journal (
            sequence INTEGER PRIMARY KEY NOT NULL,
            message_id BLOB NOT NULL UNIQUE,
            timestamp INTEGER NOT NULL,
            type TEXT NOT NULL,
            envelope BLOB NOT NULL,
            content_json BLOB
        )
        """,
        """
        CREATE TABLE feed_evidence (
            feed_id BLOB NOT NULL,
            sequence INTEGER NOT NULL,
            envelope BLOB NOT NULL,
            reason TEXT NOT NULL CHECK (reason IN ('fork', 'broken_chain')),
            recorded_at INTEGER NOT NULL
        )
        """,
        "CREATE INDEX feed_evidence_by_feed ON feed_evidence (feed_id, sequence)",
        """
        CREATE TABLE feed_tombstones (
            feed_id BLOB NOT NULL,
            target_id BLOB NOT NULL,
            PRIMARY KEY (feed_id, target_id)
        ) WITHOUT ROWID
        """,
        """
        CREATE TABLE feed_bundles (
            bundle_hash BLOB PRIMARY KEY NOT NULL CHECK (length(bundle_hash) = 32),
            identity_key BLOB NOT NULL CHECK (length(identity_key) = 32),
            bundle BLOB NOT NULL,
            created_at INTEGER NOT NULL,
            kem_seed BLOB,
            presence_key BLOB NOT NULL,
            superseded_at INTEGER
        ) WITHOUT ROWID
        """,
        """
        CREATE TABLE feed_kem (
            mine BLOB NOT NULL,
            theirs BLOB NOT NULL,
            direction TEXT NOT NULL CHECK (direction IN ('in', 'out')),
            ct BLOB NOT NULL,
            ss BLOB NOT NULL,
            PRIMARY KEY (mine, theirs, direction)
        ) WITHOUT ROWID
        """,
        """
        CREATE TABLE feed_pair_keys (
            peer_feed_id BLOB NOT NULL,
            mine BLOB NOT NULL,
            theirs BLOB NOT NULL,
            key BLOB NOT NULL,
            established_at INTEGER NOT NULL,
            superseded_at INTEGER,
            PRIMARY KEY (mine, theirs)
        ) WITHOUT ROWID
        """,
        """
        CREATE TABLE feed_group_secrets (
            audience TEXT NOT NULL,
            epoch INTEGER NOT NULL,
            secret BLOB NOT NULL,
            expires_at INTEGER,
            PRIMARY KEY (audience, epoch)
        ) WITHOUT ROWID
        """,
        // What was last sent to each contact in a feed-keys body, for the 24 h resend (5.3 step 1).
        """
        CREATE TABLE feed_keys_sent (
            peer_identity BLOB PRIMARY KEY NOT NULL,
            body BLOB NOT NULL,
            sent_at INTEGER NOT NULL
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
