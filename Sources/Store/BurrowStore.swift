import CSQLCipher
import Foundation
import SQLite

/// The node's encrypted store: one SQLCipher database in the home, keyed from the passphrase
/// with Argon2id, owned by exactly one process at a time.
///
/// Every state change goes through `transaction`, which is `BEGIN IMMEDIATE … COMMIT` and rolls
/// back when its body throws. All use is serialized on an internal lock, so a store may be
/// shared between threads; a transaction must not be started inside another.
/// `@unchecked Sendable`: the connection and transaction flag are only touched under `mutex`.
public final class BurrowStore: @unchecked Sendable {
    /// The home directory this store owns.
    public let home: URL
    /// The Argon2id parameters the store was created with (not secret).
    public let kdfParameters: StoreKDFParameters

    private let mutex = NSRecursiveLock()
    private var connection: SQLiteConnection?
    private var homeLock: HomeLock?
    private var inTransaction = false

    private init(home: URL, kdfParameters: StoreKDFParameters, connection: SQLiteConnection, homeLock: HomeLock) {
        self.home = home
        self.kdfParameters = kdfParameters
        self.connection = connection
        self.homeLock = homeLock
    }

    deinit { close() }

    /// SQLCipher page size for new stores (SQLite's own default page size, and SQLCipher 4's).
    static let cipherPageSize = 4096

    // MARK: Lifecycle

    /// Whether `home` holds a store (its header exists; the header is written last by `create`).
    public static func exists(home: URL) -> Bool {
        StoreHome.fileExists(StoreHome(home).headerPath)
    }

    /// Waits up to `timeout` for the process holding the home to let it go (a command that
    /// is finishing); whether it is free now. Polls the lock every 50 ms and takes nothing.
    public static func waitUntilFree(home: URL, timeout: Duration) -> Bool {
        let path = StoreHome(home).lockPath
        let deadline = ContinuousClock.now + timeout
        while true {
            if let lock = try? HomeLock(path: path) {
                lock.release()
                return true
            }
            if ContinuousClock.now >= deadline { return false }
            usleep(50_000)
        }
    }

    /// Creates a store in `home` (made 0700 if needed) and returns it open and locked.
    /// Throws `alreadyInitialized` if the home holds a store, `busy` if another process owns it,
    /// `invalidKDFMemory` unless `kdfMemoryMiB` is in 8...4096.
    public static func create(home: URL, passphrase: [UInt8], kdfMemoryMiB: Int = StoreKDFParameters.defaultMemoryMiB) throws -> BurrowStore {
        guard (StoreKDFParameters.minimumMemoryMiB...StoreKDFParameters.maximumMemoryMiB).contains(kdfMemoryMiB) else {
            throw StoreError.invalidKDFMemory(mib: kdfMemoryMiB)
        }
        guard !passphrase.isEmpty else { throw StoreError.invalidInput("the passphrase is empty") }
        let files = StoreHome(home)
        try files.prepareDirectory()
        let lock = try HomeLock(path: files.lockPath)
        guard !StoreHome.fileExists(files.headerPath) else { throw StoreError.alreadyInitialized }
        files.removeIncompleteStore()

        let parameters = try StoreKDFParameters.fresh(memoryMiB: kdfMemoryMiB)
        let key = try StoreKey(passphrase: passphrase, parameters: parameters)
        let header = StoreHeader(kdf: parameters, keyCheck: key.checkValue(), cipherPageSize: cipherPageSize)
        do {
            try files.createEmptyDatabaseFile()
            let connection = try SQLiteConnection(path: files.databasePath, options: .init(create: true), mapError: StoreError.init(sqlite:))
            try configure(connection, key: key, pageSize: header.cipherPageSize)
            try Schema.migrate(connection)
            try files.writeHeader(try header.encoded())
            return BurrowStore(home: files.directory, kdfParameters: parameters, connection: connection, homeLock: lock)
        } catch {
            files.removeIncompleteStore()
            throw error
        }
    }

    /// Opens the store in `home`. Throws `notInitialized` (no store), `busy` (another owner),
    /// `wrongPassphrase` (the key check fails), `storeCorrupt` (right key, unreadable store) or
    /// `unsupportedSchemaVersion` (written by a newer Burrow).
    public static func open(home: URL, passphrase: [UInt8]) throws -> BurrowStore {
        let files = StoreHome(home)
        guard files.directoryExists else { throw StoreError.notInitialized }
        guard StoreHome.fileExists(files.headerPath) else { throw StoreError.notInitialized }
        let lock = try HomeLock(path: files.lockPath)
        let (header, key) = try checkedKey(files, passphrase: passphrase)

        // From here on the key is right: anything SQLite cannot read is damage.
        guard let size = files.databaseSize() else { throw StoreError.storeCorrupt("the database file is missing") }
        guard size > 0 else { throw StoreError.storeCorrupt("the database file is empty") }
        let connection = try SQLiteConnection(path: files.databasePath, options: .init(create: false), mapError: StoreError.init(sqlite:))
        try configure(connection, key: key, pageSize: header.cipherPageSize)
        let version = try Schema.currentVersion(connection)
        guard version > 0 else { throw StoreError.storeCorrupt("the database has no schema") }
        guard version <= Schema.latestVersion else { throw StoreError.unsupportedSchemaVersion(version) }
        try Schema.migrate(connection)
        return BurrowStore(home: files.directory, kdfParameters: header.kdf, connection: connection, homeLock: lock)
    }

    /// Checks `passphrase` against the home's key-check value exactly as `open` does, without
    /// taking the home lock or touching the database. A command handed to the running node (which
    /// holds the lock) proves with this that it knows the passphrase, as a direct `open` would.
    /// Throws `notInitialized` (no store), `storeCorrupt` (unreadable header) or `wrongPassphrase`.
    public static func verifyPassphrase(home: URL, passphrase: [UInt8]) throws {
        let files = StoreHome(home)
        guard files.directoryExists, StoreHome.fileExists(files.headerPath) else { throw StoreError.notInitialized }
        _ = try checkedKey(files, passphrase: passphrase)
    }

    /// Reads the header, derives the key from `passphrase` and compares its check value with the
    /// stored one in constant time: the single place that decides `wrongPassphrase`.
    private static func checkedKey(_ files: StoreHome, passphrase: [UInt8]) throws -> (StoreHeader, StoreKey) {
        guard let headerData = try files.readHeader() else { throw StoreError.notInitialized }
        let header = try StoreHeader.decode(headerData)
        let key = try StoreKey(passphrase: passphrase, parameters: header.kdf)
        guard key.matches(checkValue: header.keyCheck) else { throw StoreError.wrongPassphrase }
        return (header, key)
    }

    /// Keys the connection and sets the pragmas every connection runs with. The first read
    /// (`sqlite_master`) is where a damaged page 1 shows up.
    private static func configure(_ connection: SQLiteConnection, key: StoreKey, pageSize: Int) throws {
        try key.withKeyLiteral { try connection.setKey($0) }
        try connection.exec("PRAGMA cipher_page_size = \(pageSize)")
        _ = try connection.queryFirst("SELECT count(*) FROM sqlite_master") { $0.int(0) }
        let mode = try connection.queryFirst("PRAGMA journal_mode = WAL") { $0.text(0) } ?? nil
        guard mode?.lowercased() == "wal" else {
            throw StoreError.sqlite(code: SQLITE_ERROR, message: "could not switch the database to WAL mode")
        }
        try connection.exec("""
            PRAGMA foreign_keys = ON;
            PRAGMA secure_delete = ON;
            PRAGMA synchronous = FULL;
            PRAGMA temp_store = MEMORY;
            """)
        sqlite3_busy_timeout(connection.handle, 5000)
    }

    /// Closes the database (checkpointing the WAL) and releases the home. Idempotent.
    public func close() {
        mutex.lock()
        defer { mutex.unlock() }
        connection?.close()
        connection = nil
        homeLock?.release()
        homeLock = nil
    }

    /// Whether `close` has been called.
    public var isClosed: Bool {
        mutex.lock()
        defer { mutex.unlock() }
        return connection == nil
    }

    // MARK: Transactions

    /// Runs `body` in one `BEGIN IMMEDIATE` transaction: committed when it returns, rolled back
    /// when it throws. The `StoreTransaction` is only valid inside `body`.
    public func transaction<T>(_ body: (StoreTransaction) throws -> T) throws -> T {
        mutex.lock()
        defer { mutex.unlock() }
        guard let connection else { throw StoreError.misuse("the store is closed") }
        guard !inTransaction else { throw StoreError.misuse("a transaction is already open on this store") }
        inTransaction = true
        defer { inTransaction = false }
        let tx = StoreTransaction(connection: connection)
        defer { tx.finish() }
        return try connection.transaction { try body(tx) }
    }

    /// The schema version of the open store.
    public func schemaVersion() throws -> Int {
        try transaction { try Schema.currentVersion($0.connection()) }
    }
}

extension BurrowStore {
    /// Moves the write-ahead log into the database and truncates it, so pages that
    /// `secure_delete` overwrote (old epochs' secrets) leave no copy in the log file.
    public func checkpoint() throws {
        mutex.lock()
        defer { mutex.unlock() }
        guard let connection else { throw StoreError.misuse("the store is closed") }
        guard !inTransaction else { throw StoreError.misuse("a transaction is open on this store") }
        _ = try connection.query("PRAGMA wal_checkpoint(TRUNCATE)") { $0.int(0) }
    }

    /// The SQLite journal mode and `synchronous` level the store runs with (for reports such
    /// as the benchmarks', which state each side's durability).
    public func durability() throws -> (journalMode: String, synchronous: Int) {
        try transaction { tx in
            let connection = try tx.connection()
            let mode = try connection.queryFirst("PRAGMA journal_mode") { $0.text(0) } ?? nil
            let synchronous = try connection.queryFirst("PRAGMA synchronous") { $0.int(0) } ?? -1
            return (mode ?? "unknown", synchronous)
        }
    }

    /// Reads every page and checks the database's structure (`PRAGMA integrity_check`).
    /// Opening only reads what it needs, so damage deep in the file shows up here, or when the
    /// damaged rows are first read, as `storeCorrupt`.
    public func verifyIntegrity() throws {
        let problems = try transaction { tx in
            try tx.connection().query("PRAGMA integrity_check") { $0.text(0) ?? "" }
        }
        guard problems == ["ok"] else {
            throw StoreError.storeCorrupt("the integrity check found \(problems.count) problem(s)")
        }
    }
}
