import SQLite

/// Everything that can go wrong in the relay, in one enum for the module. Cases say what was
/// wrong; none carries event content or keys beyond what a client sent us in the clear.
public enum RelayServerError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A configuration value is out of range or inconsistent (the text names the key).
    case invalidConfiguration(String)
    /// The configuration file could not be read or is not the JSON we expect.
    case configurationFile(path: String, reason: String)
    /// The data directory could not be created or is not usable.
    case dataDirectory(path: String, reason: String)
    /// SQLite reported an error (code and SQLite's message).
    case storage(code: Int32, message: String)
    /// The database was closed (the relay is shutting down).
    case storeClosed
    /// The database file exists but is not a relay database of a version we know.
    case unsupportedSchema(Int64)
    /// The server could not start listening (address in use, permission, bad host).
    case listenFailed(String)
    /// The relay is closed; nothing more can be done with it.
    case closed

    // Client input, each answered on the wire rather than thrown out of the relay.
    /// The frame is not a JSON array whose first element names a known message type.
    case malformedMessage(String)
    /// A message type we do not implement (e.g. NIP-45 COUNT).
    case unsupportedMessage(String)

    public var description: String {
        switch self {
        case .invalidConfiguration(let why): return "invalid configuration: \(why)"
        case .configurationFile(let path, let reason): return "configuration file \(path): \(reason)"
        case .dataDirectory(let path, let reason): return "data directory \(path): \(reason)"
        case .storage(let code, let message): return "database error \(code): \(message)"
        case .storeClosed: return "the database is closed"
        case .unsupportedSchema(let version): return "the database has schema version \(version), which this relay does not know"
        case .listenFailed(let why): return "could not listen: \(why)"
        case .closed: return "the relay is closed"
        case .malformedMessage(let why): return why
        case .unsupportedMessage(let type): return "\(type) is not supported"
        }
    }
}

extension RelayServerError {
    /// The relay's words for a failure of its SQLite connection.
    init(sqlite failure: SQLiteFailure) {
        switch failure {
        case .closed: self = .storeClosed
        case .corrupt(let what): self = .storage(code: 11, message: what)  // SQLITE_CORRUPT
        case .tooLarge(let what): self = .storage(code: 18, message: what)  // SQLITE_TOOBIG
        case .failed(let code, let message): self = .storage(code: code, message: message)
        }
    }
}
