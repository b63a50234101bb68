import ArgumentParser
import Backup
import Foundation
import Node
import Nostr

/// `burrow backup create|restore|verify|show` (issue 25): an encrypted file a family can
/// restore on a new machine.
struct BackupCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup", abstract: "Encrypted backups of the identity, contacts, groups and history.",
        subcommands: [BackupCreateCommand.self, BackupRestoreCommand.self, BackupVerifyCommand.self, BackupShowCommand.self])
}

/// The backup's passphrase, apart from the store's: `--backup-passphrase-file`, else
/// `--backup-passphrase-stdin`, else `$BURROW_BACKUP_PASSPHRASE`, else asked on the terminal
/// (twice when creating). Never a command-line argument.
struct BackupPassphraseOptions: ParsableArguments {
    @Option(name: .customLong("backup-passphrase-file"), help: "Read the backup's passphrase from this file.")
    var file: String?
    @Flag(name: .customLong("backup-passphrase-stdin"), help: "Read the backup's passphrase from standard input.")
    var stdin = false

    func resolve(confirm: Bool) throws -> [UInt8] {
        let bytes = try read(confirm: confirm)
        if file == nil { ForwardedSecret.remember(bytes, flag: "--backup-passphrase-stdin") }
        return bytes
    }

    private func read(confirm: Bool) throws -> [UInt8] {
        if stdin {
            let bytes = Passphrase.stripOneNewline(Console.readAllStdin())
            guard !bytes.isEmpty else { throw CLIError(.passphrase_required, "the backup passphrase on stdin is empty") }
            return bytes
        }
        return Array(try Passphrase.secret(file: file, environment: "BURROW_BACKUP_PASSPHRASE", prompt: "Backup passphrase: ",
                                           what: "backup passphrase", option: "--backup-passphrase-file", confirm: confirm).utf8)
    }
}

/// Parses `--include identity,contacts,messages,groups`.
enum BackupParts {
    static func parse(_ text: String?) throws -> Set<BackupContent.Part> {
        guard let text else { return Set(BackupContent.Part.allCases) }
        var parts = Set<BackupContent.Part>()
        for word in text.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces).lowercased() }) where !word.isEmpty {
            guard let part = BackupContent.Part(rawValue: word) else {
                throw CLIError(.invalid_input, "unknown part \(word): --include takes identity, contacts, messages, groups")
            }
            parts.insert(part)
        }
        guard !parts.isEmpty else { throw CLIError(.invalid_input, "--include names no part") }
        return parts
    }
}

/// Progress lines on stderr, only when a person watches it.
enum BackupProgress {
    static func say(_ text: String) {
        guard Console.capture == nil, isatty(STDERR_FILENO) == 1 else { return }
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }
}

struct BackupCreateCommand: BurrowCommand {
    static let configuration = CommandConfiguration(
        commandName: "create", abstract: "Write an encrypted backup to FILE (verified by reading it back before it is kept).")
    @OptionGroup var globals: GlobalOptions
    @Argument(help: "The backup file to write (replaced only once the new one is verified).") var file: String
    @Option(name: .customLong("include"), help: "What to include: identity,contacts,messages,groups (default: all).")
    var include: String?
    @OptionGroup var backupPassphrase: BackupPassphraseOptions
    @Option(name: .customLong("kdf-memory-mib"), help: "Argon2id memory in MiB (default 64, 8 to 1024).") var kdfMemoryMiB: UInt32 = 64
    @Option(name: .customLong("kdf-passes"), help: "Argon2id passes (default 3, 1 to 16).") var kdfPasses: UInt32 = 3

    func execute() async throws -> CommandOutput {
        let parts = try BackupParts.parse(include)
        let kdf: BackupKDFParameters
        guard kdfMemoryMiB <= BackupKDFParameters.memoryRange.upperBound / 1024 else {
            throw CLIError(.invalid_input, "--kdf-memory-mib must be 8 to 1024")
        }
        do { kdf = try BackupKDFParameters(passes: kdfPasses, memoryKiB: kdfMemoryMiB * 1024) } catch {
            throw CLIError(.invalid_input, "\(error)")
        }
        let passphrase = try backupPassphrase.resolve(confirm: true)
        BackupProgress.say("reading the store…")
        let content = try await NodeOpener.with(globals) { try $0.backupContent(parts: parts) }
        let bytes = try content.encoded()
        BackupProgress.say("sealing \(bytes.count) bytes (Argon2id, \(kdf.memoryKiB / 1024) MiB, \(kdf.passes) passes)…")
        let sealed = try BackupFile.seal(bytes, passphrase: passphrase, kdf: kdf)
        BackupProgress.say("writing and reading it back…")
        try BackupWriter.write(sealed, to: file) { written throws(BackupError) in
            // Decrypted again and compared byte for byte before the file is kept.
            guard try BackupFile.open(written, passphrase: passphrase) == bytes else { throw .corrupt("the file read back differs") }
        }
        let size = sealed.count
        let summary = BackupSummary(content)
        return CommandOutput(
            fields: [("file", .string(file)), ("bytes", .int(size)), ("verified", .bool(true))] + summary.fields,
            human: "Backup written to \(file) (\(size) bytes) and verified.\n" + summary.human
                + "\nKeep its passphrase somewhere safe: without it the backup cannot be opened.")
    }
}

struct BackupRestoreCommand: BurrowCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore", abstract: "Create a new home from a backup (the home must not exist yet).")
    @OptionGroup var globals: GlobalOptions
    @Argument(help: "The backup file.") var file: String
    @OptionGroup var backupPassphrase: BackupPassphraseOptions
    @Option(name: .customLong("kdf-memory-mib"), help: "Argon2id memory of the new store in MiB (default 64, minimum 8).")
    var kdfMemoryMiB: Int = 64

    func execute() async throws -> CommandOutput {
        let home = globals.homeURL
        guard !BurrowNode.exists(home: home) else {
            throw CLIError(.already_initialized, "\(home.path) already holds a store: restore into a new home (--home DIR)")
        }
        let content = try BackupOpening.open(file, backupPassphrase).content
        let storePassphrase = try Passphrase.resolve(globals, confirm: true)
        BackupProgress.say("creating the store…")
        let (node, summary) = try BurrowNode.restore(content, home: home, passphrase: storePassphrase, kdfMemoryMiB: kdfMemoryMiB)
        node.close()
        var human = "Restored into \(home.path) as \(summary.npub).\n" + BackupSummary(content).human
        if !summary.contacts.isEmpty {
            human += "\nDM contacts start a new session at the first message (the old sessions' keys were never in the backup)."
        }
        if !summary.groups.isEmpty {
            human += "\nAt the next `burrow sync` or `burrow run` each group catches up from its relays and replaces our keys,"
                + " or, if the relays no longer hold its history, asks an admin to re-add us."
        }
        return CommandOutput(fields: [("home", .string(home.path)), ("npub", .string(summary.npub))] + BackupSummary(content).fields,
                             human: human)
    }
}

struct BackupVerifyCommand: BurrowCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify", abstract: "Check that a backup opens with its passphrase and is intact.")
    @OptionGroup var globals: GlobalOptions
    @Argument(help: "The backup file.") var file: String
    @OptionGroup var backupPassphrase: BackupPassphraseOptions

    func execute() async throws -> CommandOutput {
        let content = try BackupOpening.open(file, backupPassphrase).content
        let summary = BackupSummary(content)
        return CommandOutput(fields: [("file", .string(file)), ("verified", .bool(true))] + summary.fields,
                             human: "\(file) opens and is intact.\n" + summary.human)
    }
}

struct BackupShowCommand: BurrowCommand {
    static let configuration = CommandConfiguration(
        commandName: "show", abstract: "What a backup holds (names and counts, never a secret).")
    @OptionGroup var globals: GlobalOptions
    @Argument(help: "The backup file.") var file: String
    @OptionGroup var backupPassphrase: BackupPassphraseOptions

    func execute() async throws -> CommandOutput {
        let (header, content) = try BackupOpening.open(file, backupPassphrase)
        let summary = BackupSummary(content)
        var fields: [(String, JSONOutput)] = [("file", .string(file)), ("format_version", .int(Int64(header.version))),
                                              ("kdf", .object([("algorithm", .string("argon2id")), ("passes", .int(Int64(header.kdf.passes))),
                                                               ("memory_kib", .int(Int64(header.kdf.memoryKiB)))]))]
        fields += summary.fields
        fields.append(("groups_detail", .array(content.groups.map {
            .object([("name", .string($0.name)), ("mls_group_id", .string(Hex.encode(Array($0.mlsGroupID)))),
                     ("state", .string($0.state)), ("epoch", .int($0.epoch))])
        })))
        fields.append(("contacts_detail", .array(content.contacts.map { .object([("name", .string($0.name))]) })))
        var human = "\(file): Burrow backup, format \(header.version), Argon2id \(header.kdf.memoryKiB / 1024) MiB × \(header.kdf.passes)\n"
            + summary.human
        for g in content.groups { human += "\n  group \(g.name) (\(g.state), epoch \(g.epoch))" }
        for c in content.contacts { human += "\n  contact \(c.name)" }
        return CommandOutput(fields: fields, human: human)
    }
}

/// What a backup holds, as counts and the identity's npub.
struct BackupSummary {
    let content: BackupContent
    init(_ content: BackupContent) { self.content = content }

    var npub: String? {
        content.identity.flatMap { try? SecretKey(bytes: Array($0.nostrSecretKey)) }.map { Keys(secretKey: $0).publicKey.npub }
    }

    var fields: [(String, JSONOutput)] {
        [("created_at", .int(content.createdAt)), ("parts", .array(content.parts.map { .string($0.rawValue) })),
         ("npub", npub.map { .string($0) } ?? .null), ("contacts", .int(content.contacts.count)), ("groups", .int(content.groups.count)),
         ("group_messages", .int(content.groupMessages.count)), ("direct_messages", .int(content.directMessages.count)),
         ("relays", .array(content.relays.map { .string($0.url) }))]
    }

    var human: String {
        var lines = ["made:     \(HumanTime.format(seconds: content.createdAt))",
                     "holds:    \(content.parts.map(\.rawValue).joined(separator: ", "))"]
        if let npub { lines.append("identity: \(npub)") }
        lines.append("contacts: \(content.contacts.count), groups: \(content.groups.count), "
                     + "messages: \(content.groupMessages.count) in groups, \(content.directMessages.count) direct")
        return lines.joined(separator: "\n")
    }
}

/// A backup file read (bounded), its header checked, opened with its passphrase and decoded:
/// what `restore`, `verify` and `show` start with.
enum BackupOpening {
    static func open(_ file: String, _ passphrase: BackupPassphraseOptions) throws -> (header: BackupFile.Header, content: BackupContent) {
        let sealed = try BackupReader.read(file)
        let header = try BackupFile.header(of: sealed)
        let key = try passphrase.resolve(confirm: false)
        BackupProgress.say("opening the backup (Argon2id)…")
        return (header, try BackupContent.decode(try BackupFile.open(sealed, passphrase: key)))
    }
}

/// Reads a backup file with a bound: the header's limit on content plus the header and tag.
enum BackupReader {
    static func read(_ path: String) throws -> [UInt8] {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw CLIError(.invalid_input, "cannot read \(path)") }
        defer { try? handle.close() }
        let limit = BackupFile.maximumContent + BackupFile.headerCount + BackupFile.tagCount
        guard let data = try? handle.read(upToCount: limit + 1) else { throw CLIError(.invalid_input, "cannot read \(path)") }
        guard data.count <= limit else { throw BackupError.unsupported("the file is larger than any backup (over 1 GiB)") }
        return Array(data)
    }
}

/// Writes a backup as the store writes its header: a 0600 temporary file beside the target,
/// fsync, `check` on the bytes read back from disk, rename, fsync of the directory. A failure
/// at any step leaves the previous file (if any) untouched and no temporary file behind.
enum BackupWriter {
    static func write(_ bytes: [UInt8], to path: String, check: ([UInt8]) throws(BackupError) -> Void) throws {
        let target = URL(fileURLWithPath: path)
        let directory = target.deletingLastPathComponent().path
        let temporary = directory + "/." + target.lastPathComponent + ".tmp-\(getpid())"
        unlink(temporary)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw CLIError(.invalid_input, "cannot write in \(directory): \(String(cString: strerror(errno)))") }
        var failure: String?
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count, failure == nil {
                let n = Glibc.write(fd, raw.baseAddress.map { $0 + offset }, raw.count - offset)
                if n < 0 { if errno != EINTR { failure = String(cString: strerror(errno)) } } else { offset += n }
            }
        }
        if failure == nil, fsync(fd) != 0 { failure = String(cString: strerror(errno)) }
        close(fd)
        do {
            if let failure { throw CLIError(.invalid_input, "writing \(path) failed: \(failure)") }
            guard let readBack = FileManager.default.contents(atPath: temporary) else { throw CLIError(.invalid_input, "cannot read back \(path)") }
            try check(Array(readBack))
            guard rename(temporary, path) == 0 else { throw CLIError(.invalid_input, "cannot install \(path): \(String(cString: strerror(errno)))") }
        } catch {
            unlink(temporary)
            throw error
        }
        let dirFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dirFD >= 0 { _ = fsync(dirFD); close(dirFD) }
    }
}
