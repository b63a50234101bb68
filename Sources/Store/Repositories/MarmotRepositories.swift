import SQLite

/// Our published KeyPackages.
public struct KeyPackageRepository {
    let transaction: StoreTransaction

    public func insert(_ kp: StoredKeyPackage) throws {
        try require32(kp.ref, "the KeyPackageRef")
        try transaction.connection().execute(
            """
            INSERT INTO key_packages (ref, event_id, legacy_event_id, slot, bundle, created_at, not_after, consumed_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [.blob(kp.ref), kp.eventID.map { .blob($0) } ?? .null, kp.legacyEventID.map { .blob($0) } ?? .null, .text(kp.slot),
             .blob(kp.bundle), .integer(kp.createdAt), .integer(kp.notAfter), kp.consumedAt.map { .integer($0) } ?? .null])
    }

    /// The KeyPackage published as event `eventID` (its 30443 or its 443 twin).
    public func find(eventID: [UInt8]) throws -> StoredKeyPackage? {
        try transaction.connection().queryFirst(
            "\(Self.select) WHERE event_id = ? OR legacy_event_id = ?", [.blob(eventID), .blob(eventID)], row: Self.row)
    }

    public func find(ref: [UInt8]) throws -> StoredKeyPackage? {
        try transaction.connection().queryFirst("\(Self.select) WHERE ref = ?", [.blob(ref)], row: Self.row)
    }

    /// All, newest first.
    public func list() throws -> [StoredKeyPackage] {
        try transaction.connection().query("\(Self.select) ORDER BY created_at DESC", row: Self.row)
    }

    public func markConsumed(ref: [UInt8], at time: Int64) throws {
        try transaction.connection().execute(
            "UPDATE key_packages SET consumed_at = ? WHERE ref = ? AND consumed_at IS NULL", [.integer(time), .blob(ref)])
    }

    public func delete(ref: [UInt8]) throws {
        try transaction.connection().execute("DELETE FROM key_packages WHERE ref = ?", [.blob(ref)])
    }

    static let select = "SELECT ref, event_id, legacy_event_id, slot, bundle, created_at, not_after, consumed_at FROM key_packages"

    static func row(_ s: SQLiteStatement) -> StoredKeyPackage {
        StoredKeyPackage(ref: s.blob(0) ?? [], eventID: s.blob(1), legacyEventID: s.blob(2), slot: s.text(3) ?? "",
                         bundle: s.blob(4) ?? [], createdAt: s.int64(5), notAfter: s.int64(6),
                         consumedAt: s.isNull(7) ? nil : s.int64(7))
    }
}

/// Groups and their MLS state.
public struct GroupRepository {
    let transaction: StoreTransaction

    /// Inserts or replaces the whole row.
    public func save(_ g: StoredGroup) throws {
        try transaction.connection().execute(
            """
            INSERT OR REPLACE INTO groups (mls_group_id, nostr_group_id, state, mls_state, created_at, last_self_update, sync_since)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            """,
            [.blob(g.mlsGroupID), .blob(g.nostrGroupID), .text(g.state.rawValue), .blob(g.mlsState), .integer(g.createdAt),
             .integer(g.lastSelfUpdate), .integer(g.syncSince)])
    }

    public func get(mlsGroupID: [UInt8]) throws -> StoredGroup? {
        try transaction.connection().queryFirst("\(Self.select) WHERE mls_group_id = ?", [.blob(mlsGroupID)], row: Self.row)
    }

    public func find(nostrGroupID: [UInt8]) throws -> [StoredGroup] {
        try transaction.connection().query("\(Self.select) WHERE nostr_group_id = ?", [.blob(nostrGroupID)], row: Self.row)
    }

    /// All groups, oldest first.
    public func list() throws -> [StoredGroup] {
        try transaction.connection().query("\(Self.select) ORDER BY created_at, mls_group_id", row: Self.row)
    }

    /// The groups whose events we read and write: active, or leaving until our leave commits.
    public func readable() throws -> [StoredGroup] {
        try list().filter(\.state.isReadable)
    }

    public func delete(mlsGroupID: [UInt8]) throws {
        try transaction.connection().execute("DELETE FROM groups WHERE mls_group_id = ?", [.blob(mlsGroupID)])
    }

    static let select = """
        SELECT mls_group_id, nostr_group_id, state, mls_state, created_at, last_self_update, sync_since FROM groups
        """

    static func row(_ s: SQLiteStatement) throws -> StoredGroup {
        guard let state = StoredGroup.State(rawValue: s.text(2) ?? "") else { throw StoreError.storeCorrupt("a group has an unknown state") }
        return StoredGroup(mlsGroupID: s.blob(0) ?? [], nostrGroupID: s.blob(1) ?? [], state: state, mlsState: s.blob(3) ?? [],
                           createdAt: s.int64(4), lastSelfUpdate: s.int64(5), syncSince: s.int64(6))
    }
}

/// Welcomes awaiting consent.
public struct InviteRepository {
    let transaction: StoreTransaction

    public func insert(_ i: StoredInvite) throws {
        try require32(i.wrapperID, "the gift wrap id")
        try transaction.connection().execute(
            """
            INSERT INTO invites (wrapper_id, mls_group_id, inviter, rumor_json, key_package_ref, state, received_at, group_state)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [.blob(i.wrapperID), .blob(i.mlsGroupID), .blob(i.inviter), .text(i.rumorJSON), .blob(i.keyPackageRef),
             .text(i.state.rawValue), .integer(i.receivedAt), i.groupState.map { .blob($0) } ?? .null])
    }

    public func get(wrapperID: [UInt8]) throws -> StoredInvite? {
        try transaction.connection().queryFirst("\(Self.select) WHERE wrapper_id = ?", [.blob(wrapperID)], row: Self.row)
    }

    public func list(state: StoredInvite.State? = nil) throws -> [StoredInvite] {
        if let state {
            return try transaction.connection().query("\(Self.select) WHERE state = ? ORDER BY received_at", [.text(state.rawValue)],
                                                      row: Self.row)
        }
        return try transaction.connection().query("\(Self.select) ORDER BY received_at", row: Self.row)
    }

    public func setState(wrapperID: [UInt8], _ state: StoredInvite.State) throws {
        try transaction.connection().execute("UPDATE invites SET state = ? WHERE wrapper_id = ?", [.text(state.rawValue), .blob(wrapperID)])
    }

    static let select = "SELECT wrapper_id, mls_group_id, inviter, rumor_json, key_package_ref, state, received_at, group_state FROM invites"

    static func row(_ s: SQLiteStatement) throws -> StoredInvite {
        guard let state = StoredInvite.State(rawValue: s.text(5) ?? "") else { throw StoreError.storeCorrupt("an invite has an unknown state") }
        return StoredInvite(wrapperID: s.blob(0) ?? [], mlsGroupID: s.blob(1) ?? [], inviter: s.blob(2) ?? [], rumorJSON: s.text(3) ?? "",
                            keyPackageRef: s.blob(4) ?? [], state: state, receivedAt: s.int64(6), groupState: s.blob(7))
    }
}

/// Decrypted inner events.
public struct MessageRepository {
    let transaction: StoreTransaction

    /// Stores a message; returns false (keeping the first) when the group already has this id.
    @discardableResult
    public func insert(_ m: StoredMessage) throws -> Bool {
        try transaction.connection().execute(
            """
            INSERT OR IGNORE INTO messages (mls_group_id, id, event_id, sender, kind, created_at, content, rumor_json, epoch, received_at,
                                            generation)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [.blob(m.mlsGroupID), .blob(m.id), .blob(m.eventID), .blob(m.sender), .int(m.kind), .integer(m.createdAt),
             .text(m.content), .text(m.rumorJSON), .integer(m.epoch), .integer(m.receivedAt), .integer(m.generation)]) > 0
    }

    /// The group's messages ordered by created_at, then within a second by epoch and the
    /// sender's ratchet generation (one person's messages never swap, however they arrived),
    /// then arrival; the newest `limit` when given.
    public func list(mlsGroupID: [UInt8], kinds: [Int]? = nil, limit: Int? = nil) throws -> [StoredMessage] {
        var sql = "\(Self.select) WHERE mls_group_id = ?"
        var values: [SQLiteValue] = [.blob(mlsGroupID)]
        if let kinds, !kinds.isEmpty {
            sql += " AND kind IN (\(kinds.map { _ in "?" }.joined(separator: ",")))"
            values += kinds.map { .int($0) }
        }
        if let limit {
            sql = "SELECT * FROM (\(sql) ORDER BY \(Self.newestFirst) LIMIT ?) ORDER BY \(Self.order)"
            values.append(.int(limit))
        } else {
            sql += " ORDER BY \(Self.order)"
        }
        return try transaction.connection().query(sql, values, row: Self.row)
    }

    /// Deletes the messages of `kind` older than `cutoff` (created_at), in every group; how many.
    @discardableResult
    public func delete(kind: Int, createdBefore cutoff: Int64) throws -> Int {
        try transaction.connection().execute("DELETE FROM messages WHERE kind = ? AND created_at < ?", [.int(kind), .integer(cutoff)])
    }

    public func count(mlsGroupID: [UInt8]? = nil) throws -> Int {
        if let mlsGroupID {
            return try transaction.connection().queryFirst("SELECT count(*) FROM messages WHERE mls_group_id = ?", [.blob(mlsGroupID)]) {
                $0.int(0)
            } ?? 0
        }
        return try transaction.connection().queryFirst("SELECT count(*) FROM messages") { $0.int(0) } ?? 0
    }

    static let select = """
        SELECT seq, mls_group_id, id, event_id, sender, kind, created_at, content, rumor_json, epoch, received_at, generation FROM messages
        """
    static let order = "created_at, epoch, generation, seq"
    static let newestFirst = "created_at DESC, epoch DESC, generation DESC, seq DESC"

    /// How many messages `sender` stored in the group's `epoch`: our own next message's place
    /// (our sending ratchet's generation counts our application messages of the epoch).
    public func count(mlsGroupID: [UInt8], epoch: Int64, sender: [UInt8]) throws -> Int64 {
        try transaction.connection().queryFirst(
            "SELECT count(*) FROM messages WHERE mls_group_id = ? AND epoch = ? AND sender = ?",
            [.blob(mlsGroupID), .integer(epoch), .blob(sender)]) { $0.int64(0) } ?? 0
    }

    static func row(_ s: SQLiteStatement) -> StoredMessage {
        StoredMessage(seq: s.int64(0), mlsGroupID: s.blob(1) ?? [], id: s.blob(2) ?? [], eventID: s.blob(3) ?? [], sender: s.blob(4) ?? [],
                      kind: s.int(5), createdAt: s.int64(6), content: s.text(7) ?? "", rumorJSON: s.text(8) ?? "",
                      epoch: s.int64(9), receivedAt: s.int64(10), generation: s.int64(11))
    }
}

/// Display names of member keys: per-group nicknames and profile names (empty group id).
public struct MemberNameRepository {
    let transaction: StoreTransaction

    public func set(pubkey: [UInt8], mlsGroupID: [UInt8], name: String, at time: Int64) throws {
        try transaction.connection().execute(
            "INSERT OR REPLACE INTO member_names (pubkey, mls_group_id, name, updated_at) VALUES (?, ?, ?, ?)",
            [.blob(pubkey), .blob(mlsGroupID), .text(name), .integer(time)])
    }

    /// The nickname in the group if any, else the profile name.
    public func name(pubkey: [UInt8], mlsGroupID: [UInt8]) throws -> String? {
        try transaction.connection().queryFirst(
            """
            SELECT name FROM member_names WHERE pubkey = ? AND (mls_group_id = ? OR mls_group_id = x'')
            ORDER BY length(mls_group_id) DESC LIMIT 1
            """, [.blob(pubkey), .blob(mlsGroupID)]) { $0.text(0) } ?? nil
    }

    public func updatedAt(pubkey: [UInt8], mlsGroupID: [UInt8]) throws -> Int64? {
        try transaction.connection().queryFirst(
            "SELECT updated_at FROM member_names WHERE pubkey = ? AND mls_group_id = ?", [.blob(pubkey), .blob(mlsGroupID)]) { $0.int64(0) }
    }
}

/// Signed events owed to relays.
public struct OutboxRepository {
    let transaction: StoreTransaction

    public func insert(_ e: OutboxEntry) throws {
        try require32(e.eventID, "the event id")
        try transaction.connection().execute(
            """
            INSERT OR REPLACE INTO outbox (event_id, mls_group_id, purpose, json, relays, after_event, created_at, state)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [.blob(e.eventID), e.mlsGroupID.map { .blob($0) } ?? .null, .text(e.purpose.rawValue), .text(e.json),
             .text(e.relays.joined(separator: "\n")), e.afterEvent.map { .blob($0) } ?? .null, .integer(e.createdAt),
             .text(e.state.rawValue)])
    }

    /// Pending entries whose prerequisite (if any) was sent, oldest first.
    public func ready() throws -> [OutboxEntry] {
        try transaction.connection().query(
            """
            \(Self.select) WHERE o.state = 'pending' AND (o.after_event IS NULL OR EXISTS
                (SELECT 1 FROM outbox p WHERE p.event_id = o.after_event AND p.state = 'sent'))
            ORDER BY o.created_at, o.event_id
            """, row: Self.row)
    }

    /// Entries of one purpose not yet sent, oldest first.
    public func pending(purpose: OutboxEntry.Purpose) throws -> [OutboxEntry] {
        try transaction.connection().query(
            "\(Self.select) WHERE o.state = 'pending' AND o.purpose = ? ORDER BY o.created_at", [.text(purpose.rawValue)], row: Self.row)
    }

    public func get(eventID: [UInt8]) throws -> OutboxEntry? {
        try transaction.connection().queryFirst("\(Self.select) WHERE o.event_id = ?", [.blob(eventID)], row: Self.row)
    }

    public func setState(eventID: [UInt8], _ state: OutboxEntry.State) throws {
        try transaction.connection().execute("UPDATE outbox SET state = ? WHERE event_id = ?", [.text(state.rawValue), .blob(eventID)])
    }

    /// Marks entries waiting on `eventID` failed (their commit was never sent).
    public func failDependents(of eventID: [UInt8]) throws {
        try transaction.connection().execute(
            "UPDATE outbox SET state = 'failed' WHERE after_event = ? AND state = 'pending'", [.blob(eventID)])
    }

    static let select = "SELECT o.event_id, o.mls_group_id, o.purpose, o.json, o.relays, o.after_event, o.created_at, o.state FROM outbox o"

    static func row(_ s: SQLiteStatement) throws -> OutboxEntry {
        guard let state = OutboxEntry.State(rawValue: s.text(7) ?? "") else { throw StoreError.storeCorrupt("an outbox entry has an unknown state") }
        guard let purpose = OutboxEntry.Purpose(rawValue: s.text(2) ?? "") else {
            throw StoreError.storeCorrupt("an outbox entry has an unknown purpose")
        }
        let relays = (s.text(4) ?? "").split(separator: "\n").map(String.init)
        return OutboxEntry(eventID: s.blob(0) ?? [], mlsGroupID: s.blob(1), purpose: purpose, json: s.text(3) ?? "",
                           relays: relays, afterEvent: s.blob(5), createdAt: s.int64(6), state: state)
    }
}

/// Small named values (sync cursors, periods).
public struct SettingsRepository {
    let transaction: StoreTransaction

    public func get(_ key: String) throws -> String? {
        try transaction.connection().queryFirst("SELECT value FROM settings WHERE key = ?", [.text(key)]) { $0.text(0) } ?? nil
    }

    /// Every entry whose key starts with `prefix`, by key.
    public func all(prefix: String) throws -> [(key: String, value: String)] {
        try transaction.connection().query("SELECT key, value FROM settings WHERE substr(key, 1, ?) = ? ORDER BY key",
                                           [.int(prefix.utf8.count), .text(prefix)]) { ($0.text(0) ?? "", $0.text(1) ?? "") }
    }

    public func delete(_ key: String) throws {
        try transaction.connection().execute("DELETE FROM settings WHERE key = ?", [.text(key)])
    }

    public func set(_ key: String, _ value: String) throws {
        try transaction.connection().execute("INSERT OR REPLACE INTO settings (key, value) VALUES (?, ?)", [.text(key), .text(value)])
    }
}

/// Rollback snapshots of each group, oldest first.
public struct SnapshotRepository {
    let transaction: StoreTransaction

    public func list(mlsGroupID: [UInt8]) throws -> [StoredSnapshot] {
        try transaction.connection().query(
            """
            SELECT epoch, state, commit_created_at, commit_event_id, commit_digest FROM group_snapshots
            WHERE mls_group_id = ? ORDER BY position
            """, [.blob(mlsGroupID)]) {
            StoredSnapshot(epoch: $0.int64(0), state: $0.blob(1) ?? [], commitCreatedAt: $0.int64(2), commitEventID: $0.blob(3) ?? [],
                           commitDigest: $0.blob(4) ?? [])
        }
    }

    /// The commit event ids of every group's snapshots (without loading their states).
    public func commitEventIDs() throws -> [[UInt8]] {
        try transaction.connection().query("SELECT commit_event_id FROM group_snapshots", []) { $0.blob(0) ?? [] }
    }

    /// Replaces the group's snapshots (the deleted ones are overwritten on disk: secure_delete).
    public func replace(mlsGroupID: [UInt8], with snapshots: [StoredSnapshot]) throws {
        let conn = try transaction.connection()
        try conn.execute("DELETE FROM group_snapshots WHERE mls_group_id = ?", [.blob(mlsGroupID)])
        for (position, snapshot) in snapshots.enumerated() {
            try conn.execute(
                """
                INSERT INTO group_snapshots (mls_group_id, position, epoch, state, commit_created_at, commit_event_id, commit_digest)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                """,
                [.blob(mlsGroupID), .int(position), .integer(snapshot.epoch), .blob(snapshot.state), .integer(snapshot.commitCreatedAt),
                 .blob(snapshot.commitEventID), .blob(snapshot.commitDigest)])
        }
    }
}

/// Our commits' intents (`StoredCommitIntent`).
public struct CommitIntentRepository {
    let transaction: StoreTransaction

    /// Keeps what the commit `commitEventID` means to do, while it can lose its epoch.
    public func record(_ intent: StoredCommitIntent) throws {
        try require32(intent.commitEventID, "the commit event id")
        try transaction.connection().execute(
            "INSERT OR REPLACE INTO commit_intents (commit_event_id, mls_group_id, intent, lost, created_at) VALUES (?, ?, ?, ?, ?)",
            [.blob(intent.commitEventID), .blob(intent.mlsGroupID), .text(intent.intent), .integer(intent.lost ? 1 : 0),
             .integer(intent.createdAt)])
    }

    /// The commit lost its epoch: its intent waits to be applied again. False when we kept none.
    @discardableResult
    public func markLost(commitEventID: [UInt8]) throws -> Bool {
        try transaction.connection().execute("UPDATE commit_intents SET lost = 1 WHERE commit_event_id = ?", [.blob(commitEventID)]) > 0
    }

    /// Intents whose commit lost, oldest first.
    public func lost() throws -> [StoredCommitIntent] {
        try transaction.connection().query("\(Self.select) WHERE lost = 1 ORDER BY created_at, commit_event_id", row: Self.row)
    }

    public func all() throws -> [StoredCommitIntent] {
        try transaction.connection().query("\(Self.select) ORDER BY created_at, commit_event_id", row: Self.row)
    }

    public func delete(commitEventID: [UInt8]) throws {
        try transaction.connection().execute("DELETE FROM commit_intents WHERE commit_event_id = ?", [.blob(commitEventID)])
    }

    /// Forgets the intents of commits that can no longer lose: not lost, and no group keeps a
    /// rollback snapshot of the state before them.
    public func pruneSettled() throws {
        try transaction.connection().execute(
            "DELETE FROM commit_intents WHERE lost = 0 AND commit_event_id NOT IN (SELECT commit_event_id FROM group_snapshots)")
    }

    static let select = "SELECT commit_event_id, mls_group_id, intent, lost, created_at FROM commit_intents"

    static func row(_ s: SQLiteStatement) -> StoredCommitIntent {
        StoredCommitIntent(commitEventID: s.blob(0) ?? [], mlsGroupID: s.blob(1) ?? [], intent: s.text(2) ?? "", lost: s.int64(3) != 0,
                           createdAt: s.int64(4))
    }
}
