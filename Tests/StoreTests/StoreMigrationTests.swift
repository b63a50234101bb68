import SQLite
import XCTest
@testable import Store

/// Schema migrations over data written by an older version.
final class StoreMigrationTests: StoreTestCase {
    /// v5 rebuilds `groups` without the dead `rollback_*` columns and moves our commits'
    /// intents from `intent:`/`retry:` settings keys into `commit_intents`.
    func testV5KeepsGroupsAndMovesCommitIntents() throws {
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        let c = try SQLiteConnection(path: home.appendingPathComponent("v4.db").path, options: .init(create: true), mapError: StoreError.init(sqlite:))
        defer { c.close() }
        for migration in Schema.migrations where migration.version <= 4 {
            try migration.apply(c)
        }
        try c.exec("PRAGMA user_version = 4")
        let group: [UInt8] = Array(repeating: 7, count: 16)
        let pending: [UInt8] = Array(repeating: 1, count: 32), lost: [UInt8] = Array(repeating: 2, count: 32)
        try c.execute("""
            INSERT INTO groups (mls_group_id, nostr_group_id, state, mls_state, rollback_state, created_at, last_self_update, sync_since)
            VALUES (?, ?, 'active', ?, NULL, 10, 11, 12)
            """, [.blob(group), .blob(Array(repeating: 9, count: 32)), .blob([1, 2, 3])])
        for (event, at) in [(pending, Int64(20)), (lost, Int64(21))] {
            try c.execute("""
                INSERT INTO outbox (event_id, mls_group_id, purpose, json, relays, created_at, state) VALUES (?, ?, 'commit', '{}', '', ?, 'sent')
                """, [.blob(event), .blob(group), .integer(at)])
        }
        let hex = { (bytes: [UInt8]) in bytes.map { String(format: "%02x", $0) }.joined() }
        try c.execute("INSERT INTO settings VALUES (?, ?)", [.text("intent:" + hex(pending)), .text(#"{"op":"rename","name":"A"}"#)])
        try c.execute("INSERT INTO settings VALUES (?, ?)", [.text("retry:" + hex(group) + ":" + hex(lost)), .text(#"{"op":"add","keys":[]}"#)])
        try c.execute("INSERT INTO settings VALUES ('gift_wrap_cursor', '5')")

        try Schema.migrate(c)
        XCTAssertEqual(try Schema.currentVersion(c), Schema.latestVersion)
        let columns = try c.query("PRAGMA table_info(groups)") { $0.text(1) ?? "" }
        XCTAssertFalse(columns.contains { $0.hasPrefix("rollback") }, "\(columns)")
        let row = try c.queryFirst("SELECT state, mls_state, sync_since FROM groups WHERE mls_group_id = ?", [.blob(group)]) {
            ($0.text(0), $0.blob(1), $0.int64(2))
        }
        XCTAssertEqual(row?.0, "active")
        XCTAssertEqual(row?.1, [1, 2, 3])
        XCTAssertEqual(row?.2, 12)
        let intents = try c.query("SELECT commit_event_id, mls_group_id, intent, lost FROM commit_intents ORDER BY created_at") {
            ($0.blob(0) ?? [], $0.blob(1) ?? [], $0.text(2) ?? "", $0.int64(3))
        }
        XCTAssertEqual(intents.count, 2)
        XCTAssertEqual(intents[0].0, pending)
        XCTAssertEqual(intents[0].1, group)
        XCTAssertEqual(intents[0].2, #"{"op":"rename","name":"A"}"#)
        XCTAssertEqual(intents[0].3, 0)
        XCTAssertEqual(intents[1].0, lost)
        XCTAssertEqual(intents[1].3, 1)
        let settings = try c.query("SELECT key FROM settings") { $0.text(0) ?? "" }
        XCTAssertEqual(settings, ["gift_wrap_cursor"])
    }
}
