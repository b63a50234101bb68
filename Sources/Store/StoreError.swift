import SQLite

/// Store failures, mapped one-to-one onto the CLI's error codes where the user must act.
///
/// No case ever carries a passphrase, key, or stored content: messages name what was wrong
/// (a file, a parameter, an SQLite result code), never the data involved.
public enum StoreError: Error, Equatable, Sendable {
    /// The home holds no store (`not_initialized`).
    case notInitialized
    /// `create` found a store already in the home (`already_initialized`).
    case alreadyInitialized
    /// The passphrase does not derive the key recorded by the key-check value (`wrong_passphrase`).
    case wrongPassphrase
    /// The key is right but the store cannot be read: damaged header, database or schema
    /// (`store_corrupt`). The string says which part, never SQLite's own wording.
    case storeCorrupt(String)
    /// Another process (or another open store in this one) owns the home (`busy`).
    case busy
    /// An SQLite failure that is neither corruption nor a wrong key (disk full, I/O error,
    /// a constraint our SQL violated). `message` is SQLite's text, which never holds bound values.
    case sqlite(code: Int32, message: String)
    /// `burrow run` is locked (`burrow lock`, `--lock-after`): the store's key is wiped from
    /// memory until `burrow unlock` (`locked`).
    case locked
    /// A passphrase change was cut short after the database moved to the new passphrase, and
    /// the old one was given (`wrong_passphrase`: the new passphrase opens the store).
    case passphraseChangedMeanwhile
    /// The Argon2id memory cost is outside what a store accepts (`invalid_input`).
    case invalidKDFMemory(mib: Int)
    /// A value handed to a repository does not fit the schema (`invalid_input`),
    /// e.g. an event id that is not 32 bytes.
    case invalidInput(String)
    /// A file-system operation on the home failed; `operation` names it, `errno` says why.
    case io(operation: String, errno: Int32)
    /// libsodium could not derive the key (it failed to allocate the Argon2id memory).
    case keyDerivationFailed
    /// The store was written by a newer Burrow whose schema this build does not know.
    case unsupportedSchemaVersion(Int)
    /// The store was closed, or a transaction object was used after its transaction ended,
    /// or a transaction was started inside another one.
    case misuse(String)
}

extension StoreError: CustomStringConvertible {
    public var description: String {
        switch self {
        case .notInitialized: return "no store in this home (run init first)"
        case .alreadyInitialized: return "a store already exists in this home"
        case .wrongPassphrase: return "wrong passphrase"
        case .locked: return "the node is locked: unlock it with `burrow unlock`"
        case .passphraseChangedMeanwhile:
            return "wrong passphrase: a passphrase change was interrupted after the store moved to the new passphrase; use the new one"
        case .storeCorrupt(let what): return "the store is damaged: \(what)"
        case .busy: return "another process is using this home"
        case .sqlite(let code, let message): return "database error \(code): \(message)"
        case .invalidKDFMemory(let mib):
            return "Argon2id memory must be between \(StoreKDFParameters.minimumMemoryMiB) and \(StoreKDFParameters.maximumMemoryMiB) MiB, not \(mib)"
        case .invalidInput(let what): return "invalid input: \(what)"
        case .io(let operation, let errno): return "\(operation) failed (errno \(errno))"
        case .keyDerivationFailed: return "key derivation failed (not enough memory for Argon2id)"
        case .unsupportedSchemaVersion(let v): return "the store has schema version \(v), newer than this program knows"
        case .misuse(let what): return "store misuse: \(what)"
        }
    }
}

extension StoreError {
    /// The store's words for a failure of its SQLite connection.
    init(sqlite failure: SQLiteFailure) {
        switch failure {
        case .closed: self = .misuse("the database connection is closed")
        case .corrupt(let what): self = .storeCorrupt(what)
        case .tooLarge(let what): self = .invalidInput(what)
        case .failed(let code, let message): self = .sqlite(code: code, message: message)
        }
    }
}
