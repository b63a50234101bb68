import CSodium
import Crypto
import Foundation

/// Why a backup file is refused. Nothing is written or restored from a refused file.
public enum BackupError: Error, Equatable, Sendable, CustomStringConvertible {
    /// Too short, damaged, or changed: a header field or the content failed its check.
    case corrupt(String)
    /// The passphrase does not open this backup.
    case wrongPassphrase
    /// A format version or KDF parameters this program does not take (a newer program's file,
    /// or parameters that would make us allocate or compute without a sane bound).
    case unsupported(String)
    /// Argon2id or the cipher failed (out of memory, libsodium not ready).
    case cryptoFailed

    public var description: String {
        switch self {
        case .corrupt(let why): return "the backup is damaged: \(why)"
        case .wrongPassphrase: return "that passphrase does not open this backup"
        case .unsupported(let why): return "this backup cannot be read by this version of burrow: \(why)"
        case .cryptoFailed: return "the backup's key could not be derived"
        }
    }
}

/// Argon2id parameters of a backup, stored in its header so they can change later.
public struct BackupKDFParameters: Equatable, Sendable {
    /// Passes over memory.
    public let passes: UInt32
    /// KiB of memory.
    public let memoryKiB: UInt32
    /// Lanes: libsodium's Argon2id runs one, so only 1 is taken.
    public let parallelism: UInt32

    public static let `default` = BackupKDFParameters(unchecked: 3, 64 * 1024, 1)
    public static let passesRange: ClosedRange<UInt32> = 1...16
    /// 8 MiB to 1 GiB: a header asking for more is a memory bomb, refused before any work.
    public static let memoryRange: ClosedRange<UInt32> = 8 * 1024...1024 * 1024

    init(unchecked passes: UInt32, _ memoryKiB: UInt32, _ parallelism: UInt32) {
        self.passes = passes
        self.memoryKiB = memoryKiB
        self.parallelism = parallelism
    }

    public init(passes: UInt32, memoryKiB: UInt32, parallelism: UInt32 = 1) throws(BackupError) {
        guard Self.passesRange.contains(passes) else { throw .unsupported("Argon2id passes \(passes) outside \(Self.passesRange)") }
        guard Self.memoryRange.contains(memoryKiB) else {
            throw .unsupported("Argon2id memory of \(memoryKiB) KiB outside 8 MiB…1 GiB")
        }
        guard parallelism == 1 else { throw .unsupported("Argon2id parallelism \(parallelism) (only 1 is supported)") }
        self.init(unchecked: passes, memoryKiB, parallelism)
    }
}

/// The backup container (issue 25): a fixed header, then AES-256-GCM over the content with the
/// whole header as associated data, so no header byte can change unnoticed.
///
/// Header, big-endian: magic `BURROW_BACKUP_V1` (16) · format version u16 · Argon2id passes u32,
/// memory KiB u32, parallelism u32 · salt (16) · nonce (12) · key check (32). Then the sealed
/// content and its 16-byte tag. The passphrase goes through Argon2id to 32 bytes; HKDF-SHA256
/// makes the content key and the key check (an HMAC-SHA256 of a fixed label), which tells a wrong
/// passphrase apart from a damaged body.
public enum BackupFile {
    public static let magic: [UInt8] = Array("BURROW_BACKUP_V1".utf8)
    public static let version: UInt16 = 1
    public static let saltCount = 16
    public static let nonceCount = 12
    public static let checkCount = 32
    public static let tagCount = 16
    public static let headerCount = 16 + 2 + 12 + saltCount + nonceCount + checkCount
    /// The content may be up to 1 GiB.
    public static let maximumContent = 1 << 30

    /// A parsed header: not yet proof of anything but its own shape.
    public struct Header: Equatable, Sendable {
        public let version: UInt16
        public let kdf: BackupKDFParameters
        public let salt: [UInt8]
        public let nonce: [UInt8]
        public let check: [UInt8]

        public var bytes: [UInt8] {
            var out = BackupFile.magic
            out += withUnsafeBytes(of: version.bigEndian, Array.init)
            for field in [kdf.passes, kdf.memoryKiB, kdf.parallelism] { out += withUnsafeBytes(of: field.bigEndian, Array.init) }
            return out + salt + nonce + check
        }
    }

    /// Seals `content` under `passphrase` with fresh salt and nonce.
    public static func seal(_ content: [UInt8], passphrase: [UInt8], kdf: BackupKDFParameters = .default) throws(BackupError) -> [UInt8] {
        guard content.count <= maximumContent else { throw .unsupported("content over 1 GiB") }
        let salt = random(saltCount), nonce = random(nonceCount)
        let keys = try derive(passphrase: passphrase, salt: salt, kdf: kdf)
        let header = Header(version: version, kdf: kdf, salt: salt, nonce: nonce, check: keys.check)
        let headerBytes = header.bytes
        do {
            let box = try AES.GCM.seal(content, using: keys.content, nonce: try AES.GCM.Nonce(data: nonce), authenticating: headerBytes)
            return headerBytes + Array(box.ciphertext) + Array(box.tag)
        } catch {
            throw .cryptoFailed
        }
    }

    /// The header of `file`, checked for shape, version and bounds only (no passphrase):
    /// `backup show` and the first step of `open`.
    public static func header(of file: [UInt8]) throws(BackupError) -> Header {
        guard file.count >= magic.count, Array(file.prefix(magic.count)) == magic else { throw .corrupt("not a Burrow backup") }
        guard file.count >= headerCount + tagCount else { throw .corrupt("truncated (\(file.count) bytes)") }
        var reader = file[magic.count..<headerCount]
        func u16() -> UInt16 { defer { reader = reader.dropFirst(2) }; return reader.prefix(2).reduce(0) { $0 << 8 | UInt16($1) } }
        func u32() -> UInt32 { defer { reader = reader.dropFirst(4) }; return reader.prefix(4).reduce(0) { $0 << 8 | UInt32($1) } }
        func bytes(_ n: Int) -> [UInt8] { defer { reader = reader.dropFirst(n) }; return Array(reader.prefix(n)) }
        let fileVersion = u16()
        guard fileVersion == version else { throw .unsupported("format version \(fileVersion) (this program reads \(version))") }
        let passes = u32(), memory = u32(), parallelism = u32()
        let kdf = try BackupKDFParameters(passes: passes, memoryKiB: memory, parallelism: parallelism)
        guard file.count - headerCount - tagCount <= maximumContent else { throw .unsupported("content over 1 GiB") }
        return Header(version: fileVersion, kdf: kdf, salt: bytes(saltCount), nonce: bytes(nonceCount), check: bytes(checkCount))
    }

    /// The content of `file`, if `passphrase` opens it and nothing in it changed.
    public static func open(_ file: [UInt8], passphrase: [UInt8]) throws(BackupError) -> [UInt8] {
        let header = try header(of: file)
        let keys = try derive(passphrase: passphrase, salt: header.salt, kdf: header.kdf)
        guard keys.check.count == header.check.count, sodium_memcmp(keys.check, header.check, keys.check.count) == 0 else {
            throw .wrongPassphrase
        }
        let sealed = file[headerCount...]
        do {
            let box = try AES.GCM.SealedBox(nonce: try AES.GCM.Nonce(data: header.nonce), ciphertext: sealed.dropLast(tagCount),
                                            tag: sealed.suffix(tagCount))
            return Array(try AES.GCM.open(box, using: keys.content, authenticating: file[..<headerCount]))
        } catch {
            throw .corrupt("the content or its header failed authentication")
        }
    }

    // MARK: Keys

    static let contentLabel = Array("burrow backup content key".utf8)
    static let checkLabel = Array("burrow backup key check".utf8)

    private static func derive(passphrase: [UInt8], salt: [UInt8], kdf: BackupKDFParameters) throws(BackupError)
        -> (content: SymmetricKey, check: [UInt8]) {
        guard sodium_init() >= 0 else { throw .cryptoFailed }
        var master = [UInt8](repeating: 0, count: 32)
        defer { sodium_memzero(&master, master.count) }
        let password: [UInt8] = passphrase.isEmpty ? [0] : passphrase
        let rc = password.withUnsafeBufferPointer { p -> Int32 in
            guard let base = p.baseAddress else { return -1 }
            return base.withMemoryRebound(to: CChar.self, capacity: p.count) { pc in
                crypto_pwhash(&master, UInt64(master.count), pc, UInt64(passphrase.count), salt, UInt64(kdf.passes),
                              Int(kdf.memoryKiB) * 1024, crypto_pwhash_ALG_ARGON2ID13)
            }
        }
        guard rc == 0 else { throw .cryptoFailed }
        let root = SymmetricKey(data: master)
        let content = HKDF<SHA256>.deriveKey(inputKeyMaterial: root, info: contentLabel, outputByteCount: 32)
        let checkKey = HKDF<SHA256>.deriveKey(inputKeyMaterial: root, info: checkLabel, outputByteCount: 32)
        let check = Array(HMAC<SHA256>.authenticationCode(for: checkLabel, using: checkKey))
        return (content, check)
    }

    private static func random(_ count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        randombytes_buf(&bytes, count)
        return bytes
    }
}
