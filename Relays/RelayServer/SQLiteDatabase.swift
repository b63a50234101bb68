import CSQLCipher

/// A value bound to an SQL parameter.
enum SQLValue {
    case integer(Int64)
    case text(String)
    case blob([UInt8])
    case null
}

/// One plain SQLite connection through the CSQLCipher shim (no key is ever set, so the file
/// is ordinary SQLite). Not thread-safe: `EventStore` uses it from one serial queue only.
/// SQLCipher 3.4 is SQLite 3.15: no UPSERT, no RETURNING, no window functions, at most 999
/// bound parameters per statement.
final class SQLiteDatabase {
    private var handle: OpaquePointer?

    init(path: String) throws {
        var db: OpaquePointer?
        let rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil)
        guard rc == SQLITE_OK, let db else {
            let error = Self.error(rc, db)
            sqlite3_close_v2(db)
            throw error
        }
        handle = db
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_timeout(db, 5000)
    }

    deinit { close() }

    func close() {
        if let handle {
            sqlite3_close_v2(handle)
            self.handle = nil
        }
    }

    var isOpen: Bool { handle != nil }

    func exec(_ sql: String) throws {
        let db = try open()
        let rc = sqlite3_exec(db, sql, nil, nil, nil)
        guard rc == SQLITE_OK else { throw Self.error(rc, db) }
    }

    func prepare(_ sql: String) throws -> SQLStatement {
        let db = try open()
        var stmt: OpaquePointer?
        let rc = sqlite3_prepare_v2(db, sql, -1, &stmt, nil)
        guard rc == SQLITE_OK, let stmt else {
            sqlite3_finalize(stmt)
            throw Self.error(rc, db)
        }
        return SQLStatement(stmt, database: self)
    }

    /// Runs a statement without result rows; returns the number of rows it changed.
    @discardableResult
    func execute(_ sql: String, _ values: [SQLValue] = []) throws -> Int {
        let stmt = try prepare(sql)
        try stmt.bind(values)
        while try stmt.step() {}
        return Int(sqlite3_changes(handle))
    }

    func query<T>(_ sql: String, _ values: [SQLValue] = [], row: (SQLStatement) throws -> T) throws -> [T] {
        let stmt = try prepare(sql)
        try stmt.bind(values)
        var rows: [T] = []
        while try stmt.step() { rows.append(try row(stmt)) }
        return rows
    }

    var lastInsertRowID: Int64 { handle.map { sqlite3_last_insert_rowid($0) } ?? 0 }

    /// `BEGIN IMMEDIATE` … `COMMIT`, rolled back when `body` throws.
    func transaction<T>(_ body: () throws -> T) throws -> T {
        try exec("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try exec("COMMIT")
            return result
        } catch {
            if let handle, sqlite3_get_autocommit(handle) == 0 { _ = sqlite3_exec(handle, "ROLLBACK", nil, nil, nil) }
            throw error
        }
    }

    private func open() throws -> OpaquePointer {
        guard let handle else { throw RelayServerError.storeClosed }
        return handle
    }

    static func error(_ code: Int32, _ handle: OpaquePointer?) -> RelayServerError {
        let message: String
        if let handle, let text = sqlite3_errmsg(handle) {
            message = String(cString: text)
        } else if let text = sqlite3_errstr(code) {
            message = String(cString: text)
        } else {
            message = "unknown error"
        }
        return .storage(code: code, message: message)
    }

    fileprivate var rawHandle: OpaquePointer? { handle }
}

/// A prepared statement: parameters are 1-based, columns 0-based. Finalized on release.
final class SQLStatement {
    private let handle: OpaquePointer
    private let database: SQLiteDatabase

    fileprivate init(_ handle: OpaquePointer, database: SQLiteDatabase) {
        self.handle = handle
        self.database = database
    }

    deinit { sqlite3_finalize(handle) }

    func bind(_ values: [SQLValue]) throws {
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let rc: Int32
            switch value {
            case .integer(let v):
                rc = sqlite3_bind_int64(handle, index, v)
            case .null:
                rc = sqlite3_bind_null(handle, index)
            case .text(let s):
                let bytes = Array(s.utf8)
                rc = bytes.withUnsafeBufferPointer { buffer in
                    // A zero-length buffer may have no base address; bind '' explicitly.
                    buffer.isEmpty
                        ? sqlite3_bind_text(handle, index, "", 0, csqlcipher_transient())
                        : buffer.withMemoryRebound(to: CChar.self) {
                            sqlite3_bind_text(handle, index, $0.baseAddress, Int32($0.count), csqlcipher_transient())
                        }
                }
            case .blob(let bytes):
                rc = bytes.isEmpty
                    ? sqlite3_bind_zeroblob(handle, index, 0)
                    : bytes.withUnsafeBytes {
                        sqlite3_bind_blob(handle, index, $0.baseAddress, Int32($0.count), csqlcipher_transient())
                    }
            }
            guard rc == SQLITE_OK else { throw SQLiteDatabase.error(rc, database.rawHandle) }
        }
    }

    /// True when a row is available, false when the statement is done.
    func step() throws -> Bool {
        let rc = sqlite3_step(handle)
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw SQLiteDatabase.error(rc, database.rawHandle)
        }
    }

    /// Makes the statement ready to bind and step again.
    func reset() throws {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }

    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }

    func blob(_ column: Int32) -> [UInt8] {
        let count = Int(sqlite3_column_bytes(handle, column))
        guard count > 0, let pointer = sqlite3_column_blob(handle, column) else { return [] }
        return Array(UnsafeRawBufferPointer(start: pointer, count: count))
    }

    func text(_ column: Int32) -> String {
        guard let pointer = sqlite3_column_text(handle, column) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
    }
}
