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
    /// The Argon2id parameters of the store's current passphrase (not secret).
    public var kdfParameters: StoreKDFParameters {
        mutex.lock()
        defer { mutex.unlock() }
        return header.kdf
    }

    private let mutex = NSRecursiveLock()
    private var connection: SQLiteConnection?
    private var homeLock: HomeLock?
    private var inTransaction = false
    private var header: StoreHeader
    /// Locked: the connection (and with it SQLCipher's copy of the key) is closed, the home
    /// lock kept, until `unlock`.
    private var locked = false

    private init(home: URL, header: StoreHeader, connection: SQLiteConnection, homeLock: HomeLock) {
        self.home = home
        self.header = header
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

    /// Removes a home this program just created and must not keep (a restore that failed half
    /// way): the store's files, then the directory if nothing else is in it. Never call it on a
    /// home that existed before.
    public static func removeCreatedHome(_ home: URL) {
        let files = StoreHome(home)
        files.removeIncompleteStore()
        for path in [files.headerPath, files.lockPath] { unlink(path) }
        rmdir(files.directory.path)
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
        try create(home: home, passphrase: passphrase, kdfMemoryMiB: kdfMemoryMiB, passes: StoreKDFParameters.defaultPasses,
                   policy: StoreHeader.currentPolicy)
    }

    /// `create` with explicit passes and policy: tests make an earlier policy's store with it.
    static func create(home: URL, passphrase: [UInt8], kdfMemoryMiB: Int, passes: Int, policy: Int) throws -> BurrowStore {
        guard (StoreKDFParameters.minimumMemoryMiB...StoreKDFParameters.maximumMemoryMiB).contains(kdfMemoryMiB) else {
            throw StoreError.invalidKDFMemory(mib: kdfMemoryMiB)
        }
        guard !passphrase.isEmpty else { throw StoreError.invalidInput("the passphrase is empty") }
        let files = StoreHome(home)
        try files.prepareDirectory()
        let lock = try HomeLock(path: files.lockPath)
        guard !StoreHome.fileExists(files.headerPath) else { throw StoreError.alreadyInitialized }
        files.removeIncompleteStore()

        let parameters = try StoreKDFParameters.fresh(memoryMiB: kdfMemoryMiB, passes: passes)
        let key = try StoreKey(passphrase: passphrase, parameters: parameters)
        let header = StoreHeader(kdf: parameters, keyCheck: key.checkValue(), cipherPageSize: cipherPageSize, policy: policy)
        do {
            try files.createEmptyDatabaseFile()
            let connection = try SQLiteConnection(path: files.databasePath, options: .init(create: true), mapError: StoreError.init(sqlite:))
            try configure(connection, key: key, pageSize: header.cipherPageSize)
            try Schema.migrate(connection)
            try files.writeHeader(try header.encoded())
            return BurrowStore(home: files.directory, header: header, connection: connection, homeLock: lock)
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
        let (header, key) = try settledKey(files, passphrase: passphrase)

        // From here on the key is right: anything SQLite cannot read is damage.
        guard let size = files.databaseSize() else { throw StoreError.storeCorrupt("the database file is missing") }
        guard size > 0 else { throw StoreError.storeCorrupt("the database file is empty") }
        let connection = try SQLiteConnection(path: files.databasePath, options: .init(create: false), mapError: StoreError.init(sqlite:))
        try configure(connection, key: key, pageSize: header.cipherPageSize)
        let version = try Schema.currentVersion(connection)
        guard version > 0 else { throw StoreError.storeCorrupt("the database has no schema") }
        guard version <= Schema.latestVersion else { throw StoreError.unsupportedSchemaVersion(version) }
        try Schema.migrate(connection)
        let store = BurrowStore(home: files.directory, header: header, connection: connection, homeLock: lock)
        if header.policy < StoreHeader.currentPolicy {
            // Parameters an earlier policy allowed are raised now that we know the passphrase.
            let upgraded = max(header.kdf.memoryMiB, StoreKDFParameters.defaultMemoryMiB)
            try store.changePassphrase(to: passphrase, kdfMemoryMiB: upgraded)
        }
        return store
    }

    /// The header and key `passphrase` opens, after settling a passphrase change a crash cut
    /// short (the header names a pending change):
    /// - the re-encrypted copy is still beside the database: the new passphrase finishes the
    ///   change (the copy replaces the database), the old one abandons it (the copy goes);
    /// - the copy already replaced the database: only the new passphrase opens it.
    /// A copy without a pending header is an export that never got that far: it goes.
    private static func settledKey(_ files: StoreHome, passphrase: [UInt8]) throws -> (StoreHeader, StoreKey) {
        guard let headerData = try files.readHeader() else { throw StoreError.notInitialized }
        var header = try StoreHeader.decode(headerData)
        let current = try StoreKey(passphrase: passphrase, parameters: header.kdf)
        let opensCurrent = current.matches(checkValue: header.keyCheck)
        guard let pending = header.pending else {
            guard opensCurrent else { throw StoreError.wrongPassphrase }
            if StoreHome.fileExists(files.rekeyPath) { unlink(files.rekeyPath) }
            return (header, current)
        }
        let next = try StoreKey(passphrase: passphrase, parameters: pending.kdf)
        let opensNext = next.matches(checkValue: pending.keyCheck)
        guard opensCurrent || opensNext else { throw StoreError.wrongPassphrase }
        let copyWaiting = StoreHome.fileExists(files.rekeyPath)
        if copyWaiting && opensNext {
            try installRekeyedCopy(files)
        } else if copyWaiting {
            unlink(files.rekeyPath)
            files.syncDirectory()
            header.pending = nil
            try files.writeHeader(try header.encoded())
            return (header, current)
        } else if !opensNext {
            throw StoreError.passphraseChangedMeanwhile
        }
        header = StoreHeader(kdf: pending.kdf, keyCheck: pending.keyCheck, cipherPageSize: header.cipherPageSize,
                             policy: StoreHeader.currentPolicy)
        try files.writeHeader(try header.encoded())
        return (header, next)
    }

    /// Moves the re-encrypted copy over the database. The old database's write-ahead log was
    /// checkpointed and truncated before the copy was made; a log with frames in it would
    /// belong to the old key, so it stops the swap rather than be applied to the new file.
    private static func installRekeyedCopy(_ files: StoreHome) throws {
        let log = files.databaseCompanionPaths[0]
        if let size = StoreHome.size(log), size > 0 {
            throw StoreError.storeCorrupt("the write-ahead log holds changes made during a passphrase change")
        }
        for companion in files.databaseCompanionPaths { unlink(companion) }
        guard rename(files.rekeyPath, files.databasePath) == 0 else {
            throw StoreError.io(operation: "installing the re-encrypted database", errno: errno)
        }
        files.syncDirectory()
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

    /// Where a passphrase change stands, for the crash tests' failpoints.
    public enum PassphraseChangeStage: String, Sendable {
        /// The re-encrypted copy is written and synced beside the database.
        case copied
        /// The header names the pending change.
        case pending
        /// The copy replaced the database.
        case swapped
    }

    /// Re-encrypts the store under `newPassphrase` (fresh salt; Argon2id memory `kdfMemoryMiB`,
    /// default the current one; the current policy's passes) so that a crash at any point
    /// leaves the old or the new passphrase opening it, with nothing lost:
    /// 1. the WAL is checkpointed and the database exported (`sqlcipher_export`) under the new
    ///    key to `store.db.next`, synced;
    /// 2. the header records the pending change (atomic rename);
    /// 3. the connection closes and the copy is renamed over the database;
    /// 4. the header names only the new parameters; the connection reopens under the new key.
    /// `open` settles a change cut short between 2 and 4 (`settledKey`).
    public func changePassphrase(to newPassphrase: [UInt8], kdfMemoryMiB: Int? = nil,
                                 stage: (PassphraseChangeStage) -> Void = { _ in }) throws {
        guard !newPassphrase.isEmpty else { throw StoreError.invalidInput("the passphrase is empty") }
        mutex.lock()
        defer { mutex.unlock() }
        if locked { throw StoreError.locked }
        guard let old = connection else { throw StoreError.misuse("the store is closed") }
        guard !inTransaction else { throw StoreError.misuse("a transaction is open on this store") }
        let files = StoreHome(home)
        let parameters = try StoreKDFParameters.fresh(memoryMiB: kdfMemoryMiB ?? header.kdf.memoryMiB,
                                                      passes: max(header.kdf.passes, StoreKDFParameters.defaultPasses))
        let key = try StoreKey(passphrase: newPassphrase, parameters: parameters)
        let version = try Schema.currentVersion(old)

        // 1. The copy.
        unlink(files.rekeyPath)
        do {
            // The connection may not create files: the copy starts as an empty 0600 file.
            try files.createEmptyFile(files.rekeyPath)
            _ = try old.query("PRAGMA wal_checkpoint(TRUNCATE)") { $0.int(0) }
            try key.withKeyLiteral { try old.attach(path: files.rekeyPath, as: "rekeyed", keyLiteral: $0) }
            defer { try? old.exec("DETACH DATABASE rekeyed") }
            try old.exec("PRAGMA rekeyed.cipher_page_size = \(header.cipherPageSize)")
            _ = try old.query("SELECT sqlcipher_export('rekeyed')") { _ in 0 }
            try old.exec("PRAGMA rekeyed.user_version = \(version)")
        } catch {
            unlink(files.rekeyPath)
            throw error
        }
        try StoreHome.sync(files.rekeyPath)
        stage(.copied)

        // 2. The pending header.
        var next = header
        next.pending = StoreHeader.Pending(kdf: parameters, keyCheck: key.checkValue())
        try files.writeHeader(try next.encoded())
        stage(.pending)

        // 3. The swap.
        old.close()
        connection = nil
        // A failure here leaves the store closed with the change pending: the next open settles
        // it with either passphrase, as after a crash.
        try Self.installRekeyedCopy(files)
        stage(.swapped)

        // 4. The final header and the new connection.
        let settled = StoreHeader(kdf: parameters, keyCheck: key.checkValue(), cipherPageSize: header.cipherPageSize,
                                  policy: StoreHeader.currentPolicy)
        try files.writeHeader(try settled.encoded())
        header = settled
        connection = try Self.reopen(files, key: key, header: settled)
    }

    private static func reopen(_ files: StoreHome, key: StoreKey, header: StoreHeader) throws -> SQLiteConnection {
        let connection = try SQLiteConnection(path: files.databasePath, options: .init(create: false), mapError: StoreError.init(sqlite:))
        try configure(connection, key: key, pageSize: header.cipherPageSize)
        return connection
    }

    /// Wipes the key from memory and keeps the home: the connection closes (SQLCipher zeroes
    /// its key material as it does), every transaction answers `locked` until `unlock`.
    public func lock() {
        mutex.lock()
        defer { mutex.unlock() }
        guard !locked, let connection, !inTransaction else { return }
        _ = try? connection.query("PRAGMA wal_checkpoint(TRUNCATE)") { $0.int(0) }
        connection.close()
        self.connection = nil
        locked = true
    }

    /// Reopens the database with the key `passphrase` derives, checked as `open` checks it.
    public func unlock(passphrase: [UInt8]) throws {
        mutex.lock()
        defer { mutex.unlock() }
        guard locked else { return }
        let files = StoreHome(home)
        let (settled, key) = try Self.settledKey(files, passphrase: passphrase)
        connection = try Self.reopen(files, key: key, header: settled)
        header = settled
        locked = false
    }

    /// Whether `lock` wiped the key.
    public var isLocked: Bool {
        mutex.lock()
        defer { mutex.unlock() }
        return locked
    }

    /// Closes the database (checkpointing the WAL) and releases the home. Idempotent.
    public func close() {
        mutex.lock()
        defer { mutex.unlock() }
        connection?.close()
        connection = nil
        locked = false
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
        if locked { throw StoreError.locked }
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
        if locked { throw StoreError.locked }
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
