import CSodium

/// Argon2id parameters of a store. They are not secret: they live in the plaintext header
/// beside the salt because they are needed before the database can be opened.
public struct StoreKDFParameters: Equatable, Sendable {
    public static let defaultMemoryMiB = 64
    public static let minimumMemoryMiB = 8
    /// A bound so a hostile or damaged header cannot make us allocate without limit.
    public static let maximumMemoryMiB = 4096
    public static let defaultPasses = 3
    public static let allowedPasses = 1...16
    public static let saltCount = 16

    /// Argon2id memory cost in MiB.
    public let memoryMiB: Int
    /// Argon2id time cost (passes over memory).
    public let passes: Int
    /// Random per-store salt (16 bytes).
    public let salt: [UInt8]

    public init(memoryMiB: Int, passes: Int = StoreKDFParameters.defaultPasses, salt: [UInt8]) throws {
        guard (Self.minimumMemoryMiB...Self.maximumMemoryMiB).contains(memoryMiB) else {
            throw StoreError.invalidKDFMemory(mib: memoryMiB)
        }
        guard Self.allowedPasses.contains(passes) else {
            throw StoreError.invalidInput("Argon2id passes must be in \(Self.allowedPasses), not \(passes)")
        }
        guard salt.count == Self.saltCount else {
            throw StoreError.invalidInput("the salt must be \(Self.saltCount) bytes")
        }
        self.memoryMiB = memoryMiB
        self.passes = passes
        self.salt = salt
    }

    /// Fresh parameters with a random salt from libsodium's CSPRNG.
    static func fresh(memoryMiB: Int, passes: Int = defaultPasses) throws -> StoreKDFParameters {
        guard Sodium.isReady else { throw StoreError.keyDerivationFailed }
        var salt = [UInt8](repeating: 0, count: saltCount)
        salt.withUnsafeMutableBytes { buf in
            if let base = buf.baseAddress { randombytes_buf(base, buf.count) }
        }
        return try StoreKDFParameters(memoryMiB: memoryMiB, passes: passes, salt: salt)
    }
}

/// The 32-byte database key, derived from the passphrase and held only in a `SecretBuffer`.
final class StoreKey {
    static let count = 32
    /// What the key-check value authenticates; any fixed label works, it only must never change.
    static let checkLabel: [UInt8] = Array("burrow key check".utf8)

    private let bytes: SecretBuffer

    /// passphrase → Argon2id13 (crypto_pwhash) → 32 bytes.
    init(passphrase: [UInt8], parameters: StoreKDFParameters) throws {
        bytes = try SecretBuffer(count: Self.count)
        let memlimit = parameters.memoryMiB * 1024 * 1024
        // A non-null pointer even for an empty passphrase (its length stays 0).
        let pw: [UInt8] = passphrase.isEmpty ? [0] : passphrase
        let rc: Int32 = bytes.withUnsafeMutableBytes { out, outCount in
            pw.withUnsafeBufferPointer { p in
                parameters.salt.withUnsafeBufferPointer { s in
                    guard let pBase = p.baseAddress, let sBase = s.baseAddress else { return -1 }
                    return pBase.withMemoryRebound(to: CChar.self, capacity: p.count) { pc in
                        crypto_pwhash(out, UInt64(outCount), pc, UInt64(passphrase.count),
                                      sBase, UInt64(parameters.passes), memlimit, crypto_pwhash_ALG_ARGON2ID13)
                    }
                }
            }
        }
        guard rc == 0 else { throw StoreError.keyDerivationFailed }
    }

    /// HMAC-SHA256(key, "burrow key check"): stored in the header so a wrong passphrase is told
    /// apart from a damaged database without asking SQLite.
    func checkValue() -> [UInt8] {
        var mac = [UInt8](repeating: 0, count: Int(crypto_auth_hmacsha256_bytes()))
        bytes.withUnsafeBytes { key, _ in
            _ = crypto_auth_hmacsha256(&mac, Self.checkLabel, UInt64(Self.checkLabel.count), key)
        }
        return mac
    }

    /// Constant-time comparison of our check value with the stored one.
    func matches(checkValue stored: [UInt8]) -> Bool {
        let mine = checkValue()
        guard stored.count == mine.count else { return false }
        return sodium_memcmp(mine, stored, mine.count) == 0
    }

    /// The raw-key literal SQLCipher accepts (`x'<64 hex>'`), built in a wiped buffer and
    /// handed to `body` only for the duration of the call.
    func withKeyLiteral<T>(_ body: (UnsafeRawBufferPointer) throws -> T) throws -> T {
        let hexCount = Self.count * 2
        let literal = try SecretBuffer(count: hexCount + 4)  // x ' hex ' NUL-room
        literal.withUnsafeMutableBytes { o, _ in
            o[0] = UInt8(ascii: "x")
            o[1] = UInt8(ascii: "'")
            bytes.withUnsafeBytes { key, keyCount in
                // sodium_bin2hex writes the hex digits and a NUL (hexCount + 1 bytes).
                (o + 2).withMemoryRebound(to: CChar.self, capacity: hexCount + 1) {
                    _ = sodium_bin2hex($0, hexCount + 1, key, keyCount)
                }
            }
            o[2 + hexCount] = UInt8(ascii: "'")
        }
        // The literal is x'…' without the trailing NUL slot.
        return try literal.withUnsafeBytes { p, _ in
            try body(UnsafeRawBufferPointer(start: p, count: hexCount + 3))
        }
    }
}
