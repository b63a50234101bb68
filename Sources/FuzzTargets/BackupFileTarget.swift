import Backup

/// Backup files as `backup restore`, `verify` and `show` read them: the header (magic, version,
/// KDF bounds), then the passphrase check and AES-GCM over the content.
///
/// Properties: a header that parses writes back to exactly the bytes it came from; a file opens
/// only with its passphrase and only to the content it sealed (the generated seeds are sealed
/// here, under fast KDF parameters; any other parameters are only parsed, so the fuzzer cannot
/// spend its time in Argon2id).
public enum BackupFileTarget: FuzzTarget {
    public static let name = "backup-file"
    static let passphrase = Array("fuzz passphrase".utf8)
    static let fast: BackupKDFParameters? = try? BackupKDFParameters(passes: 1, memoryKiB: 8 * 1024)

    public static func run(_ bytes: [UInt8]) throws -> FuzzOutcome {
        let header: BackupFile.Header
        do { header = try BackupFile.header(of: bytes) } catch {
            switch error {
            case .corrupt: return .rejected("corrupt")
            case .unsupported: return .rejected("unsupported")
            case .wrongPassphrase, .cryptoFailed: throw PropertyViolation(name, "the header alone gave \(error)")
            }
        }
        guard header.bytes == Array(bytes.prefix(BackupFile.headerCount)) else {
            throw PropertyViolation(name, "a parsed header does not write back to its bytes")
        }
        guard header.kdf == fast else { return .rejected("slow-kdf") }
        do {
            let content = try BackupFile.open(bytes, passphrase: passphrase)
            guard content.count == bytes.count - BackupFile.headerCount - BackupFile.tagCount else {
                throw PropertyViolation(name, "opened content of the wrong length")
            }
            return .accepted("content")
        } catch let error as BackupError {
            switch error {
            case .wrongPassphrase: return .rejected("passphrase")
            case .corrupt: return .rejected("authentication")
            case .unsupported, .cryptoFailed: throw PropertyViolation(name, "opening gave \(error)")
            }
        }
    }

    /// Files sealed here: empty, short and longer content.
    static func seeds() throws -> [FuzzSeeds.Seed] {
        guard let fast else { throw FixtureError("no fast KDF parameters") }
        return try [("empty", []), ("short", Array("family".utf8)), ("longer", Array(repeating: 0x42, count: 300))].map { name, content in
            (name, try BackupFile.seal(content, passphrase: passphrase, kdf: fast))
        }
    }
}
