/// What went wrong below SQL, before a caller puts it in its own words.
///
/// The wrapper is shared by the node's encrypted store and the relay's event store, which
/// report failures as different error types (`StoreError`, `RelayServerError`); each hands the
/// connection a function from this value to its own error, so every layer throws one type.
public enum SQLiteFailure: Sendable, Equatable {
    /// The connection was closed before this use.
    case closed
    /// The file is not a database, is damaged, or (SQLCipher) a page failed its HMAC.
    case corrupt(String)
    /// A value cannot be bound (over SQLite's 2 GiB limit).
    case tooLarge(String)
    /// Any other result code, with SQLite's message (which never holds bound values).
    case failed(code: Int32, message: String)
}

/// Turns an `SQLiteFailure` into the owning layer's error type.
public typealias SQLiteErrorMapper = @Sendable (SQLiteFailure) -> any Error
