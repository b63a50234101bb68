import SQLite
import XCTest
@testable import Store

/// The thin SQLCipher wrapper on its own: bindings, column reads, transactions.
final class StoreSQLiteTests: StoreTestCase {
    private func connection() throws -> SQLiteConnection {
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        let c = try SQLiteConnection(path: home.appendingPathComponent("plain.db").path, options: .init(create: true), mapError: StoreError.init(sqlite:))
        try c.exec("CREATE TABLE t (i INTEGER, s TEXT, b BLOB)")
        return c
    }

    func testBindingsRoundTrip() throws {
        let c = try connection()
        try c.execute("INSERT INTO t VALUES (?, ?, ?)", [.integer(Int64.min), .text(""), .blob([])])
        try c.execute("INSERT INTO t VALUES (?, ?, ?)", [.integer(Int64.max), .text("é\u{0}🦫"), .blob([0, 1, 255])])
        try c.execute("INSERT INTO t VALUES (?, ?, ?)", [.null, .null, .null])
        let rows = try c.query("SELECT i, s, b, i IS NULL, typeof(b) FROM t ORDER BY rowid") {
            ($0.int64(0), $0.text(1), $0.blob(2), $0.bool(3), $0.text(4))
        }
        XCTAssertEqual(rows.count, 3)
        XCTAssertEqual(rows[0].0, Int64.min)
        XCTAssertEqual(rows[0].1, "")
        XCTAssertEqual(rows[0].2, [])
        XCTAssertEqual(rows[0].4, "blob", "an empty blob is a blob, not NULL")
        XCTAssertEqual(rows[1].0, Int64.max)
        XCTAssertEqual(rows[1].1, "é\u{0}🦫")
        XCTAssertEqual(rows[1].2, [0, 1, 255])
        XCTAssertTrue(rows[2].3)
        XCTAssertNil(rows[2].1)
        XCTAssertNil(rows[2].2)
    }

    func testPreparedStatementIsReusable() throws {
        let c = try connection()
        let insert = try c.prepare("INSERT INTO t (i) VALUES (?)")
        for n in 0..<3 {
            try insert.bind(Int64(n), at: 1)
            XCTAssertFalse(try insert.step())
            insert.reset()
        }
        XCTAssertEqual(try c.queryFirst("SELECT sum(i) FROM t") { $0.int(0) }, 3)
    }

    func testErrorsAreTyped() throws {
        let c = try connection()
        XCTAssertThrowsError(try c.exec("SELECT * FROM missing")) { error in
            guard case .sqlite(let code, let message)? = error as? StoreError else { return XCTFail("\(error)") }
            XCTAssertEqual(code, 1)
            XCTAssertTrue(message.contains("no such table"), message)
        }
        XCTAssertThrowsError(try c.prepare("NOT SQL"))
    }

    func testTransactionRollsBackOnThrow() throws {
        struct Abort: Error {}
        let c = try connection()
        XCTAssertThrowsError(try c.transaction { () throws -> Void in
            try c.execute("INSERT INTO t (i) VALUES (1)")
            XCTAssertTrue(c.inTransaction)
            throw Abort()
        })
        XCTAssertFalse(c.inTransaction)
        XCTAssertEqual(try c.queryFirst("SELECT count(*) FROM t") { $0.int(0) }, 0)
        let value = try c.transaction { () throws -> Int in
            try c.execute("INSERT INTO t (i) VALUES (7)")
        }
        XCTAssertEqual(value, 1)
        XCTAssertEqual(try c.queryFirst("SELECT i FROM t") { $0.int(0) }, 7)
    }

    func testClosedConnectionThrows() throws {
        let c = try connection()
        c.close()
        XCTAssertThrowsError(try c.exec("SELECT 1")) { error in
            guard case .misuse? = error as? StoreError else { return XCTFail("\(error)") }
        }
    }
}
