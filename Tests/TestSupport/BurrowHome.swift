import Foundation

/// One Burrow user driven through the real `burrow` program: a home directory, a passphrase
/// file, `--json` on every command and a bounded relay timeout.
public struct BurrowHome: Sendable {
    public struct CommandFailed: Error, CustomStringConvertible {
        public let args: [String]
        public let result: BurrowResult
        public var description: String { "burrow \(args.joined(separator: " ")) exited \(result.status): \(result.stdout) \(result.stderr)" }
    }

    public let path: String
    public let passphraseFile: String
    public let timeout: Double

    public init(path: String, passphraseFile: String, timeout: Double = 5) {
        self.path = path
        self.passphraseFile = passphraseFile
        self.timeout = timeout
    }

    /// Runs `burrow args… --home … --json` (or `executable`), whatever its status.
    public func run(_ args: [String], environment: [String: String] = [:], executable: URL? = nil) throws -> BurrowResult {
        try BurrowProcess.run(args + ["--home", path, "--passphrase-file", passphraseFile, "--json", "--timeout", String(timeout)],
                              environment: environment, timeout: 300, executable: executable)
    }

    /// Runs `burrow args… --home …` without `--json`: the human output a person reads.
    public func human(_ args: [String], environment: [String: String] = [:]) throws -> BurrowResult {
        try BurrowProcess.run(args + ["--home", path, "--passphrase-file", passphraseFile, "--timeout", String(timeout)],
                              environment: environment, timeout: 300)
    }

    /// Whether a process holds this home's lock now (`flock` on `store.lock`): a running
    /// `burrow` has opened the store. Probing takes the lock for an instant when it is free.
    public var isLockHeld: Bool {
        let fd = open(path + "/store.lock", O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        if flock(fd, LOCK_EX | LOCK_NB) == 0 {
            _ = flock(fd, LOCK_UN)
            return false
        }
        return errno == EWOULDBLOCK || errno == EAGAIN
    }

    /// Runs and requires success; returns the JSON document.
    @discardableResult
    public func ok(_ args: [String]) throws -> [String: Any] {
        let result = try run(args)
        guard result.status == 0, let json = try? result.json(), json["ok"] as? Bool == true else {
            throw CommandFailed(args: args, result: result)
        }
        return json
    }

    /// Runs and returns the error code of a failure (nil when it succeeded).
    /// Makes both homes' DM cards (with these nicknames) and adds each to the other.
    public func exchangeCards(with other: BurrowHome, nicknames: (String, String)) throws {
        let mine = try ok(["contact", "card", "--nickname", nicknames.0])["card"] as? String ?? ""
        let theirs = try other.ok(["contact", "card", "--nickname", nicknames.1])["card"] as? String ?? ""
        _ = try ok(["contact", "add", theirs])
        _ = try other.ok(["contact", "add", mine])
    }

    public func errorCode(_ args: [String]) throws -> String? {
        let result = try run(args)
        guard result.status != 0 else { return nil }
        return (try result.json()["error"] as? [String: Any])?["code"] as? String
    }

    /// `init` with a small KDF, one relay, and a published KeyPackage.
    public static func create(in directory: URL, name: String, relay: String, passphraseFile: String) throws -> BurrowHome {
        let home = BurrowHome(path: directory.appendingPathComponent(name).path, passphraseFile: passphraseFile)
        try home.ok(["init", "--kdf-memory-mib", "8"])
        try home.ok(["relay", "add", relay])
        try home.ok(["keypackage", "publish"])
        return home
    }

    public var pubkey: String {
        get throws { (try ok(["whoami"])["pubkey"] as? String) ?? "" }
    }

    public func group(_ group: String) throws -> [String: Any] { (try ok(["group", "show", group])["group"] as? [String: Any]) ?? [:] }

    public func messages(_ group: String) throws -> [[String: Any]] { (try ok(["messages", group])["messages"] as? [[String: Any]]) ?? [] }

    /// Syncs, accepts every pending invite, and returns the accepted groups.
    @discardableResult
    public func acceptInvites() throws -> [[String: Any]] {
        try ok(["sync"])
        let invites = (try ok(["invite", "list"])["invites"] as? [[String: Any]]) ?? []
        return try invites.compactMap { invite in
            guard let id = invite["id"] as? String else { return nil }
            return try ok(["invite", "accept", id])["group"] as? [String: Any]
        }
    }
}
