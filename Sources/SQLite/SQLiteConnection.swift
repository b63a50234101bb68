import CSQLCipher

/// One SQLite connection through Debian's SQLCipher: the thin wrapper the node's encrypted store
/// and the relay's plain event store share (GRDB cannot link SQLCipher on Linux).
///
/// Not thread-safe by itself: its owner serializes every use (`BurrowStore` behind its lock,
/// `EventStore` on one serial queue). Failures go through the owner's `mapError`, so SQLite's
/// "file is not a database" reaches callers in the owner's words. SQLCipher 3.4 is SQLite 3.15:
/// no UPSERT, no RETURNING, no window functions, at most 999 bound parameters per statement.
public final class SQLiteConnection {
    public struct Options: Sendable {
        /// Let SQLite create a missing file. Opening an existing store never does, so a missing
        /// database is noticed rather than silently replaced by an empty one.
        public var create: Bool
        /// SQLite's own mutex (FULLMUTEX) for a connection shared behind a lock; off (NOMUTEX)
        /// for one confined to a single queue.
        public var serialized: Bool
        /// Milliseconds to wait on another process's lock before BUSY; nil waits not at all.
        public var busyTimeoutMilliseconds: Int32?

        public init(create: Bool, serialized: Bool = true, busyTimeoutMilliseconds: Int32? = nil) {
            self.create = create
            self.serialized = serialized
            self.busyTimeoutMilliseconds = busyTimeoutMilliseconds
        }
    }

    public private(set) var handle: OpaquePointer?
    let mapError: SQLiteErrorMapper

    public init(path: String, options: Options, mapError: @escaping SQLiteErrorMapper) throws {
        self.mapError = mapError
        var db: OpaquePointer?
        var flags = SQLITE_OPEN_READWRITE | (options.serialized ? SQLITE_OPEN_FULLMUTEX : SQLITE_OPEN_NOMUTEX)
        if options.create { flags |= SQLITE_OPEN_CREATE }
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let failure = SQLiteConnection.failure(code: rc, handle: db)
            sqlite3_close_v2(db)
            throw mapError(failure)
        }
        handle = db
        sqlite3_extended_result_codes(db, 1)
        if let timeout = options.busyTimeoutMilliseconds { sqlite3_busy_timeout(db, timeout) }
    }

    deinit { close() }

    /// Finalizing statements is the owner's job (they finalize on deinit); `close_v2` defers the
    /// actual close until the last one is gone, so no order of releases leaks or crashes.
    public func close() {
        if let handle {
            sqlite3_close_v2(handle)
            self.handle = nil
        }
    }

    /// Hands SQLCipher its raw key (`x'<64 hex>'`, the form `PRAGMA key` takes) through the C
    /// entry point the pragma itself calls, so the key never sits in SQL text SQLite keeps.
    public func setKey(_ keyLiteral: UnsafeRawBufferPointer) throws {
        let db = try open()
        let rc = sqlite3_key(db, keyLiteral.baseAddress, Int32(keyLiteral.count))
        guard rc == SQLITE_OK else { throw mapError(SQLiteConnection.failure(code: rc, handle: db)) }
    }

    /// Attaches the database at `path` as `schema` under its own raw SQLCipher key (`x'<hex>'`),
    /// bound as a parameter so the key is in no SQL text.
    public func attach(path: String, as schema: String, keyLiteral: UnsafeRawBufferPointer) throws {
        let stmt = try prepare("ATTACH DATABASE ? AS \(schema) KEY ?")
        try stmt.bind(.text(path), at: 1)
        try stmt.bindTransient(keyLiteral, at: 2)
        while try stmt.step() {}
    }

    /// Runs one or more statements that take no parameters (schema, pragmas, BEGIN/COMMIT).
    public func exec(_ sql: String) throws {
        let db = try open()
        let rc = sqlite3_exec(db, sql, nil, nil, nil)
        guard rc == SQLITE_OK else { throw mapError(SQLiteConnection.failure(code: rc, handle: db)) }
    }

    public func prepare(_ sql: String) throws -> SQLiteStatement {
        let db = try open()
        var stmt: OpaquePointer?
        let rc = sqlite3_prepare_v2(db, sql, -1, &stmt, nil)
        guard rc == SQLITE_OK, let stmt else {
            sqlite3_finalize(stmt)
            throw mapError(SQLiteConnection.failure(code: rc, handle: db))
        }
        return SQLiteStatement(handle: stmt, connection: self)
    }

    /// Runs a statement that returns no rows and reports how many rows it changed.
    @discardableResult
    public func execute(_ sql: String, _ values: [SQLiteValue] = []) throws -> Int {
        let stmt = try prepare(sql)
        try stmt.bind(values)
        while try stmt.step() {}
        return Int(sqlite3_changes(handle))
    }

    /// Runs a query and maps each row.
    public func query<T>(_ sql: String, _ values: [SQLiteValue] = [], row: (SQLiteStatement) throws -> T) throws -> [T] {
        let stmt = try prepare(sql)
        try stmt.bind(values)
        var rows: [T] = []
        while try stmt.step() { rows.append(try row(stmt)) }
        return rows
    }

    /// The first row of a query, if any.
    public func queryFirst<T>(_ sql: String, _ values: [SQLiteValue] = [], row: (SQLiteStatement) throws -> T) throws -> T? {
        let stmt = try prepare(sql)
        try stmt.bind(values)
        guard try stmt.step() else { return nil }
        return try row(stmt)
    }

    /// `BEGIN IMMEDIATE` … `COMMIT`, rolled back if `body` throws or the commit fails.
    /// IMMEDIATE takes the write lock up front, so a transaction never fails half-way with BUSY
    /// when it first writes.
    public func transaction<T>(_ body: () throws -> T) throws -> T {
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
    public var inTransaction: Bool {
        guard let handle else { return false }
        return sqlite3_get_autocommit(handle) == 0
    }

    private func rollbackIfActive() {
        // SQLite may already have rolled back on its own (e.g. after SQLITE_FULL or an I/O error).
        if inTransaction { _ = sqlite3_exec(handle, "ROLLBACK", nil, nil, nil) }
    }

    private func open() throws -> OpaquePointer {
        guard let handle else { throw mapError(.closed) }
        return handle
    }

    /// The rows the last statement changed.
    public var changes: Int { handle.map { Int(sqlite3_changes($0)) } ?? 0 }

    public var lastInsertRowID: Int64 { handle.map { sqlite3_last_insert_rowid($0) } ?? 0 }

    /// Classifies an SQLite result. Corruption results (`SQLITE_NOTADB`, which SQLCipher also
    /// returns when a page fails its HMAC, and `SQLITE_CORRUPT`) are told apart from the rest.
    static func failure(code: Int32, handle: OpaquePointer?) -> SQLiteFailure {
        switch code & 0xFF {
        case SQLITE_NOTADB, SQLITE_CORRUPT:
            return .corrupt("the database file is unreadable (damaged or truncated)")
        default:
            let message: String
            if let handle, let text = sqlite3_errmsg(handle) {
                message = String(cString: text)
            } else if let text = sqlite3_errstr(code) {
                message = String(cString: text)
            } else {
                message = "unknown error"
            }
            return .failed(code: code, message: message)
        }
    }
}
