import CSQLCipher

/// A prepared statement: bind parameters (1-based), step, read columns (0-based).
/// Finalized when released.
public final class SQLiteStatement {
    private let handle: OpaquePointer
    private let connection: SQLiteConnection

    init(handle: OpaquePointer, connection: SQLiteConnection) {
        self.handle = handle
        self.connection = connection
    }

    deinit { sqlite3_finalize(handle) }

    // MARK: Binding

    public func bind(_ values: [SQLiteValue]) throws {
        for (offset, value) in values.enumerated() { try bind(value, at: Int32(offset + 1)) }
    }

    public func bind(_ value: SQLiteValue, at index: Int32) throws {
        let rc: Int32
        switch value {
        case .integer(let v):
            rc = sqlite3_bind_int64(handle, index, v)
        case .null:
            rc = sqlite3_bind_null(handle, index)
        case .text(let s):
            let count = s.utf8.count
            guard count <= Int32.max else { throw connection.mapError(.tooLarge("text value too large")) }
            // withCString never yields a null pointer, so an empty string binds '' and not NULL.
            rc = s.withCString { sqlite3_bind_text(handle, index, $0, Int32(count), csqlcipher_transient()) }
        case .blob(let bytes):
            guard bytes.count <= Int32.max else { throw connection.mapError(.tooLarge("blob value too large")) }
            if bytes.isEmpty {
                // A null pointer would bind NULL; an empty blob is a zero-length zeroblob.
                rc = sqlite3_bind_zeroblob(handle, index, 0)
            } else {
                rc = bytes.withUnsafeBytes {
                    sqlite3_bind_blob(handle, index, $0.baseAddress, Int32($0.count), csqlcipher_transient())
                }
            }
        }
        guard rc == SQLITE_OK else { throw connection.mapError(SQLiteConnection.failure(code: rc, handle: connection.handle)) }
    }

    /// Binds bytes SQLite copies at once (a key literal held in wiped memory: no Swift copy).
    public func bindTransient(_ bytes: UnsafeRawBufferPointer, at index: Int32) throws {
        guard let base = bytes.baseAddress, bytes.count <= Int32.max else { throw connection.mapError(.tooLarge("blob value too large")) }
        let rc = sqlite3_bind_blob(handle, index, base, Int32(bytes.count), csqlcipher_transient())
        guard rc == SQLITE_OK else { throw connection.mapError(SQLiteConnection.failure(code: rc, handle: connection.handle)) }
    }

    public func bind(_ value: Int64, at index: Int32) throws { try bind(.integer(value), at: index) }
    public func bind(_ value: String, at index: Int32) throws { try bind(.text(value), at: index) }
    public func bind(_ value: [UInt8], at index: Int32) throws { try bind(.blob(value), at: index) }
    public func bindNull(at index: Int32) throws { try bind(.null, at: index) }

    // MARK: Stepping

    /// Advances to the next row: true when a row is available, false when the statement is done.
    public func step() throws -> Bool {
        let rc = sqlite3_step(handle)
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        case SQLITE_ERROR where Self.isGenericError(connection.handle):
            // The statement compiled, so a bare SQLITE_ERROR while stepping comes from below
            // SQL: SQLCipher reports a page that fails its HMAC this way.
            throw connection.mapError(.corrupt("the database file is unreadable (a page failed its integrity check)"))
        default: throw connection.mapError(SQLiteConnection.failure(code: rc, handle: connection.handle))
        }
    }

    /// Whether the connection's last error is SQLite's generic text for SQLITE_ERROR (no SQL-level detail).
    private static func isGenericError(_ handle: OpaquePointer?) -> Bool {
        guard let handle, let message = sqlite3_errmsg(handle), let generic = sqlite3_errstr(SQLITE_ERROR) else { return false }
        return String(cString: message) == String(cString: generic)
    }

    /// Makes the statement ready to run again with new bindings.
    public func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    // MARK: Columns

    public func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }

    public func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }

    public func int(_ column: Int32) -> Int { Int(sqlite3_column_int64(handle, column)) }

    public func bool(_ column: Int32) -> Bool { sqlite3_column_int64(handle, column) != 0 }

    /// The column as UTF-8 text; nil for NULL.
    public func text(_ column: Int32) -> String? {
        guard let ptr = sqlite3_column_text(handle, column) else { return nil }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: ptr, count: count), as: UTF8.self)
    }

    /// The column as bytes; nil for NULL, `[]` for an empty blob.
    public func blob(_ column: Int32) -> [UInt8]? {
        if isNull(column) { return nil }
        // column_blob before column_bytes, as SQLite documents.
        let ptr = sqlite3_column_blob(handle, column)
        let count = Int(sqlite3_column_bytes(handle, column))
        guard let ptr, count > 0 else { return [] }
        return Array(UnsafeRawBufferPointer(start: ptr, count: count))
    }
}
