import Foundation

/// The files of a store inside its home directory, and the file-system rules for them:
/// the directory is 0700, every file 0600, and files are created with those modes from the
/// start (never created wider and narrowed later).
struct StoreHome {
    let directory: URL

    init(_ directory: URL) { self.directory = directory.standardizedFileURL }

    var headerPath: String { path("store.header") }
    var headerTempPath: String { path("store.header.tmp") }
    var databasePath: String { path("store.db") }
    var lockPath: String { path("store.lock") }
    /// The database re-encrypted under a new passphrase, before it replaces `store.db`.
    var rekeyPath: String { path("store.db.next") }
    /// SQLite's companions of the database in WAL mode (and a rollback journal, should one appear).
    var databaseCompanionPaths: [String] { ["-wal", "-shm", "-journal"].map { databasePath + $0 } }

    private func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    static func fileExists(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0
    }

    var directoryExists: Bool {
        var st = stat()
        return stat(directory.path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR
    }

    /// Creates the home (and missing parents) and makes it 0700.
    func prepareDirectory() throws {
        if !directoryExists {
            let parent = directory.deletingLastPathComponent()
            // Parents get the usual mode; a failure here shows up as mkdir's errno below.
            try? FileManager.default.createDirectory(at: parent, withIntermediateDirectories: true)
            if mkdir(directory.path, 0o700) != 0 && errno != EEXIST {
                throw StoreError.io(operation: "creating the home directory", errno: errno)
            }
        }
        guard chmod(directory.path, 0o700) == 0 else {
            throw StoreError.io(operation: "setting the home directory mode", errno: errno)
        }
    }

    /// Creates an empty database file with mode 0600 so SQLite's -wal and -shm, which copy the
    /// database's mode, are 0600 too.
    func createEmptyDatabaseFile() throws { try createEmptyFile(databasePath) }

    /// An empty file with mode 0600 (a database SQLite fills in).
    func createEmptyFile(_ path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw StoreError.io(operation: "creating the database file", errno: errno) }
        defer { close(fd) }
        guard fchmod(fd, 0o600) == 0 else { throw StoreError.io(operation: "setting the database file mode", errno: errno) }
    }

    /// Size of the database file, or nil if it is missing.
    func databaseSize() -> Int64? {
        var st = stat()
        guard stat(databasePath, &st) == 0 else { return nil }
        return Int64(st.st_size)
    }

    /// Writes the header atomically: a 0600 temporary file, fsync, rename, fsync of the directory.
    /// The rename is the moment the store comes into existence.
    func writeHeader(_ data: Data) throws {
        let tmp = headerTempPath
        unlink(tmp)
        let fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw StoreError.io(operation: "creating the store header", errno: errno) }
        var ok = fchmod(fd, 0o600) == 0
        var failure = errno
        if ok {
            ok = data.withUnsafeBytes { raw -> Bool in
                var offset = 0
                while offset < raw.count {
                    let n = write(fd, raw.baseAddress.map { $0 + offset }, raw.count - offset)
                    if n < 0 {
                        if errno == EINTR { continue }
                        failure = errno
                        return false
                    }
                    offset += n
                }
                return true
            }
        }
        if ok, fsync(fd) != 0 { ok = false; failure = errno }
        close(fd)
        guard ok else {
            unlink(tmp)
            throw StoreError.io(operation: "writing the store header", errno: failure)
        }
        guard rename(tmp, headerPath) == 0 else {
            let e = errno
            unlink(tmp)
            throw StoreError.io(operation: "installing the store header", errno: e)
        }
        syncDirectory()
    }

    /// Reads the header; nil if there is none.
    func readHeader() throws -> Data? {
        guard Self.fileExists(headerPath) else { return nil }
        guard let handle = FileHandle(forReadingAtPath: headerPath) else {
            throw StoreError.io(operation: "reading the store header", errno: EACCES)
        }
        defer { try? handle.close() }
        do {
            return try handle.read(upToCount: StoreHeader.maximumSize + 1) ?? Data()
        } catch {
            throw StoreError.io(operation: "reading the store header", errno: EIO)
        }
    }

    /// Removes what an interrupted `create` may have left: a database without a header can
    /// never be opened (its random salt was never recorded), so it holds nothing recoverable.
    func removeIncompleteStore() {
        for p in [databasePath] + databaseCompanionPaths + [headerTempPath, rekeyPath] { unlink(p) }
        syncDirectory()
    }

    /// Size of a file, or nil if it is missing.
    static func size(_ path: String) -> Int64? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        return Int64(st.st_size)
    }

    /// fsync of a file by path (the re-encrypted database before it is renamed into place).
    static func sync(_ path: String) throws {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw StoreError.io(operation: "opening \(URL(fileURLWithPath: path).lastPathComponent)", errno: errno) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw StoreError.io(operation: "syncing \(URL(fileURLWithPath: path).lastPathComponent)", errno: errno) }
    }

    func syncDirectory() {
        let fd = open(directory.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = fsync(fd)
        close(fd)
    }
}
