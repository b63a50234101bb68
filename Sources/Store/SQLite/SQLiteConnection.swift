import CSQLCipher

/// One SQLCipher connection: our thin replacement for GRDB, which cannot link SQLCipher on Linux.
///
/// Not thread-safe by itself; `BurrowStore` serializes every use. Errors map through
/// `SQLiteConnection.error(code:)` so SQLite's "file is not a database" never reaches a caller:
/// by the time a connection exists the key has been checked, so such a result means damage.
final class SQLiteConnection {
    private(set) var handle: OpaquePointer?

    /// Opens `path`. `create` allows SQLite to create the file; opening an existing store never
    /// does, so a missing database is noticed rather than silently replaced by an empty one.
    init(path: String, create: Bool) throws {
        var db: OpaquePointer?
        var flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_FULLMUTEX
        if create { flags |= SQLITE_OPEN_CREATE }
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let err = SQLiteConnection.error(code: rc, handle: db)
            sqlite3_close_v2(db)
            throw err
        }
        handle = db
        sqlite3_extended_result_codes(db, 1)
    }

    deinit { close() }

    /// Finalizing statements is the owner's job (they finalize on deinit); `close_v2` defers the
    /// actual close until the last one is gone, so no order of releases leaks or crashes.
    func close() {
        if let handle {
            sqlite3_close_v2(handle)
            self.handle = nil
        }
    }

    /// Hands SQLCipher its raw key (`x'<64 hex>'`, the form `PRAGMA key` takes) through the C
    /// entry point the pragma itself calls, so the key never sits in SQL text SQLite keeps.
    func setKey(_ keyLiteral: UnsafeRawBufferPointer) throws {
        let db = try open()
        let rc = sqlite3_key(db, keyLiteral.baseAddress, Int32(keyLiteral.count))
        guard rc == SQLITE_OK else { throw SQLiteConnection.error(code: rc, handle: db) }
    }

    /// Runs one or more statements that take no parameters (schema, pragmas, BEGIN/COMMIT).
    func exec(_ sql: String) throws {
        let db = try open()
        let rc = sqlite3_exec(db, sql, nil, nil, nil)
        guard rc == SQLITE_OK else { throw SQLiteConnection.error(code: rc, handle: db) }
    }

    func prepare(_ sql: String) throws -> SQLiteStatement {
        let db = try open()
        var stmt: OpaquePointer?
        let rc = sqlite3_prepare_v2(db, sql, -1, &stmt, nil)
        guard rc == SQLITE_OK, let stmt else {
            sqlite3_finalize(stmt)
            throw SQLiteConnection.error(code: rc, handle: db)
        }
        return SQLiteStatement(handle: stmt, connection: self)
    }

    /// Runs a statement that returns no rows and reports how many rows it changed.
    @discardableResult
    func execute(_ sql: String, _ values: [SQLiteValue] = []) throws -> Int {
        let stmt = try prepare(sql)
        try stmt.bind(values)
        while try stmt.step() {}
        return Int(sqlite3_changes(handle))
    }

    /// Runs a query and maps each row.
    func query<T>(_ sql: String, _ values: [SQLiteValue] = [], row: (SQLiteStatement) throws -> T) throws -> [T] {
        let stmt = try prepare(sql)
        try stmt.bind(values)
        var rows: [T] = []
        while try stmt.step() { rows.append(try row(stmt)) }
        return rows
    }

    /// The first row of a query, if any.
    func queryFirst<T>(_ sql: String, _ values: [SQLiteValue] = [], row: (SQLiteStatement) throws -> T) throws -> T? {
        let stmt = try prepare(sql)
        try stmt.bind(values)
        guard try stmt.step() else { return nil }
        return try row(stmt)
    }

    /// `BEGIN IMMEDIATE` … `COMMIT`, rolled back if `body` throws or the commit fails.
    /// IMMEDIATE takes the write lock up front, so a transaction never fails half-way with BUSY
    /// when it first writes.
    func transaction<T>(_ body: () throws -> T) throws -> T {
        try exec("BEGIN IMMEDIATE")
        let result: T
        do {
            result = try body()
            try exec("COMMIT")
        } catch {
            rollbackIfActive()
            throw error
        }
        return result
    }

    /// True while a transaction is open (SQLite's autocommit flag is off).
    var inTransaction: Bool {
        guard let handle else { return false }
        return sqlite3_get_autocommit(handle) == 0
    }

    private func rollbackIfActive() {
        // SQLite may already have rolled back on its own (e.g. after SQLITE_FULL or an I/O error).
        if inTransaction { _ = sqlite3_exec(handle, "ROLLBACK", nil, nil, nil) }
    }

    private func open() throws -> OpaquePointer {
        guard let handle else { throw StoreError.misuse("the database connection is closed") }
        return handle
    }

    /// Maps an SQLite result to a `StoreError`. Corruption results (`SQLITE_NOTADB`, which
    /// SQLCipher also returns when a page fails its HMAC, and `SQLITE_CORRUPT`) become
    /// `storeCorrupt` in our own words.
    static func error(code: Int32, handle: OpaquePointer?) -> StoreError {
        switch code & 0xFF {
        case SQLITE_NOTADB, SQLITE_CORRUPT:
            return .storeCorrupt("the database file is unreadable (damaged or truncated)")
        default:
            let message: String
            if let handle, let text = sqlite3_errmsg(handle) {
                message = String(cString: text)
            } else if let text = sqlite3_errstr(code) {
                message = String(cString: text)
            } else {
                message = "unknown error"
            }
            return .sqlite(code: code, message: message)
        }
    }
}
