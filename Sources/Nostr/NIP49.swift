import CSodium
import Foundation

/// NIP-49: a private key encrypted with a password, as `ncryptsec1…` (bech32, 91 bytes):
/// version 0x02 · log_n · salt (16) · nonce (24) · key-security byte · XChaCha20-Poly1305 of the
/// 32-byte key (48 bytes with its tag), the key-security byte as associated data. The key is
/// scrypt(NFKC(password), salt, N = 2^log_n, r = 8, p = 1), 32 bytes, from libsodium.
public enum NIP49 {
    public static let hrp = "ncryptsec"
    public static let version: UInt8 = 0x02
    public static let encodedCount = 91
    /// 2^16 (64 MiB of scrypt memory) as the NIP's first suggestion.
    public static let defaultLogN: UInt8 = 16
    /// Up to 2^20 (1 GiB): a file asking for more is refused before scrypt allocates it.
    public static let logNRange: ClosedRange<UInt8> = 1...20

    /// How the key was handled before it was encrypted (the NIP's key-security byte).
    public enum KeySecurity: UInt8, Sendable {
        /// Known to have been handled insecurely (stored or copied unencrypted).
        case insecure = 0x00
        case secure = 0x01
        /// The client does not track it.
        case unknown = 0x02
    }

    public enum Failure: Error, Equatable, Sendable, CustomStringConvertible {
        /// Not an ncryptsec string, or not 91 bytes, or an unknown version or security byte.
        case malformed(String)
        /// A log_n this program will not run scrypt with (over 2^20 takes more than 1 GiB).
        case unsupportedLogN(UInt8)
        /// The password does not open it (or it was changed).
        case wrongPassword
        case cryptoFailed

        public var description: String {
            switch self {
            case .malformed(let why): return "not an ncryptsec key: \(why)"
            case .unsupportedLogN(let n): return "log_n \(n) would take more than 1 GiB of memory to open"
            case .wrongPassword: return "that password does not open this ncryptsec key"
            case .cryptoFailed: return "scrypt or the cipher failed"
            }
        }
    }

    /// Encrypts `key` under `password`.
    public static func encrypt(_ key: SecretKey, password: String, logN: UInt8 = defaultLogN,
                               security: KeySecurity = .unknown) throws(Failure) -> String {
        guard logNRange.contains(logN) else { throw .unsupportedLogN(logN) }
        guard sodium_init() >= 0 else { throw .cryptoFailed }
        var salt = [UInt8](repeating: 0, count: 16), nonce = [UInt8](repeating: 0, count: 24)
        randombytes_buf(&salt, salt.count)
        randombytes_buf(&nonce, nonce.count)
        var symmetric = try derive(password: password, salt: salt, logN: logN)
        defer { sodium_memzero(&symmetric, symmetric.count) }
        var plaintext = key.bytes
        defer { sodium_memzero(&plaintext, plaintext.count) }
        var ciphertext = [UInt8](repeating: 0, count: 48)
        var written: UInt64 = 0
        let associated = [security.rawValue]
        guard crypto_aead_xchacha20poly1305_ietf_encrypt(&ciphertext, &written, plaintext, UInt64(plaintext.count), associated, 1, nil,
                                                         nonce, symmetric) == 0, written == 48 else { throw .cryptoFailed }
        return Bech32.encode(hrp: hrp, data: [version, logN] + salt + nonce + associated + ciphertext)
    }

    /// The key inside `text`, if `password` opens it; and how it was handled before.
    public static func decrypt(_ text: String, password: String) throws(Failure) -> (key: SecretKey, security: KeySecurity) {
        let decoded: (hrp: String, data: [UInt8])
        do { decoded = try Bech32.decode(text.trimmingCharacters(in: .whitespacesAndNewlines), maximumLength: 200) } catch {
            throw .malformed("\(error)")
        }
        let data = decoded.data
        guard decoded.hrp == hrp else { throw .malformed("prefix \(decoded.hrp), not ncryptsec") }
        guard data.count == encodedCount else { throw .malformed("\(data.count) bytes, not 91") }
        guard data[0] == version else { throw .malformed("version \(data[0])") }
        let logN = data[1]
        guard let security = KeySecurity(rawValue: data[42]) else { throw .malformed("key-security byte \(data[42])") }
        guard logNRange.contains(logN) else { throw .unsupportedLogN(logN) }
        let salt = Array(data[2..<18]), nonce = Array(data[18..<42]), ciphertext = Array(data[43..<91])
        guard sodium_init() >= 0 else { throw .cryptoFailed }
        var symmetric = try derive(password: password, salt: salt, logN: logN)
        defer { sodium_memzero(&symmetric, symmetric.count) }
        var plaintext = [UInt8](repeating: 0, count: 32)
        defer { sodium_memzero(&plaintext, plaintext.count) }
        var read: UInt64 = 0
        guard crypto_aead_xchacha20poly1305_ietf_decrypt(&plaintext, &read, nil, ciphertext, UInt64(ciphertext.count), [data[42]], 1,
                                                         nonce, symmetric) == 0, read == 32 else { throw .wrongPassword }
        do { return (try SecretKey(bytes: plaintext), security) } catch { throw .malformed("the key inside is not a valid secp256k1 key") }
    }

    private static func derive(password: String, salt: [UInt8], logN: UInt8) throws(Failure) -> [UInt8] {
        var normalized = Array(password.precomposedStringWithCompatibilityMapping.utf8)
        defer { sodium_memzero(&normalized, normalized.count) }
        var key = [UInt8](repeating: 0, count: 32)
        let rc = crypto_pwhash_scryptsalsa208sha256_ll(normalized, normalized.count, salt, salt.count, UInt64(1) << UInt64(logN), 8, 1,
                                                       &key, key.count)
        guard rc == 0 else { throw .cryptoFailed }
        return key
    }
}
