import Crypto

/// The cryptography of a cipher suite this engine runs (RFC 9420 §5.1), for code that reads
/// like the RFC: `cs.expandWithLabel(...)`, `cs.Nh`, `cs.aeadNk`.
///
/// Wire structures carry a `CipherSuite` code point (any value, so unknown suites round-trip);
/// `CipherSuiteProvider(suite)` is the check that turns one into something that can do
/// cryptography. Only MLS_128_DHKEMX25519_AES128GCM_SHA256_Ed25519 (0x0001) exists: X25519 HPKE,
/// HKDF-SHA256, AES-128-GCM and Ed25519, all from swift-crypto. Length names follow the RFC:
/// `Nh` (hash output), `kdfNh` (KDF.Nh), `aeadNk` (AEAD.Nk), `aeadNn` (AEAD.Nn).
public struct CipherSuiteProvider: Hashable, Sendable, CustomStringConvertible {
    /// The suite's code point, as carried in `cipher_suite` fields.
    public let suite: CipherSuite

    private init(unchecked suite: CipherSuite) { self.suite = suite }

    /// MLS_128_DHKEMX25519_AES128GCM_SHA256_Ed25519.
    public static let mls128DHKEMX25519AES128GCMSHA256Ed25519 = CipherSuiteProvider(unchecked: .mls128DHKEMX25519AES128GCMSHA256Ed25519)

    /// The provider for `suite`; throws `unsupportedCipherSuite` for anything but 0x0001.
    public init(_ suite: CipherSuite) throws {
        guard suite.isSupported else { throw MLSCryptoError.unsupportedCipherSuite(suite.rawValue) }
        self.init(unchecked: suite)
    }

    public var description: String { "MLS_128_DHKEMX25519_AES128GCM_SHA256_Ed25519" }

    // MARK: Sizes

    /// Hash output length (SHA-256).
    public var Nh: Int { 32 }
    /// KDF.Nh: the HKDF-Extract output length.
    public var kdfNh: Int { 32 }
    /// AEAD.Nk: the AES-128-GCM key length.
    public var aeadNk: Int { 16 }
    /// AEAD.Nn: the AES-GCM nonce length.
    public var aeadNn: Int { 12 }
    /// AES-GCM tag length.
    public var aeadTagLength: Int { 16 }
    /// The HPKE suite this MLS suite uses.
    public var hpke: HPKESuite { .x25519SHA256AES128GCM }
    /// The TLS SignatureScheme of the suite's signature keys (ed25519).
    public var signatureScheme: UInt16 { 0x0807 }

    // MARK: Hash, MAC, KDF

    public func hash(_ data: [UInt8]) -> [UInt8] { Array(SHA256.hash(data: data)) }

    /// HMAC-SHA256, the suite's MAC (confirmation and membership tags).
    public func mac(key: Secret, data: [UInt8]) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: data, using: key.symmetricKey))
    }

    /// Constant-time MAC check.
    public func verifyMAC(key: Secret, data: [UInt8], mac: [UInt8]) -> Bool {
        HMAC<SHA256>.isValidAuthenticationCode(mac, authenticating: data, using: key.symmetricKey)
    }

    /// KDF.Extract(salt, ikm) = HKDF-Extract.
    public func kdfExtract(salt: Secret, ikm: Secret) -> Secret {
        HKDFPrimitives.extract(salt: salt, ikm: ikm)
    }

    /// KDF.Expand(prk, info, length) = HKDF-Expand; `length` must be 0...255·Nh.
    public func kdfExpand(prk: Secret, info: [UInt8], length: Int) throws -> Secret {
        try HKDFPrimitives.expand(prk: prk, info: info, length: length)
    }

    // MARK: AEAD

    /// AES-128-GCM seal; returns ciphertext ‖ tag.
    public func aeadSeal(key: Secret, nonce: Secret, aad: [UInt8], plaintext: [UInt8]) throws -> [UInt8] {
        try AES128GCM.seal(key: key, nonce: nonce, aad: aad, plaintext: plaintext)
    }

    /// AES-128-GCM open of ciphertext ‖ tag; `decryptionFailed` when authentication fails.
    public func aeadOpen(key: Secret, nonce: Secret, aad: [UInt8], ciphertext: [UInt8]) throws -> [UInt8] {
        try AES128GCM.open(key: key, nonce: nonce, aad: aad, ciphertext: ciphertext)
    }
}

extension CipherSuite {
    /// Whether this engine can run the suite (only 0x0001).
    public var isSupported: Bool { self == .mls128DHKEMX25519AES128GCMSHA256Ed25519 }
}

/// HKDF-SHA256 through swift-crypto, with the length checks swift-crypto leaves to callers.
enum HKDFPrimitives {
    static let hashLength = 32

    static func extract(salt: Secret, ikm: Secret) -> Secret {
        let prk = salt.withUnsafeBytes { saltBytes in
            HKDF<SHA256>.extract(inputKeyMaterial: ikm.symmetricKey, salt: Array(saltBytes))
        }
        return Secret(SymmetricKey(data: prk))
    }

    static func expand(prk: Secret, info: [UInt8], length: Int) throws -> Secret {
        guard length >= 0, length <= 255 * hashLength else { throw MLSCryptoError.invalidOutputLength(length) }
        // swift-crypto traps on a zero-length request; RFC 5869 defines it as the empty string.
        if length == 0 { return Secret([]) }
        return Secret(HKDF<SHA256>.expand(pseudoRandomKey: prk.symmetricKey, info: info, outputByteCount: length))
    }

    /// Expand to exactly the hash length, which can never be out of range.
    static func expandHashLength(prk: Secret, info: [UInt8]) -> Secret {
        Secret(HKDF<SHA256>.expand(pseudoRandomKey: prk.symmetricKey, info: info, outputByteCount: hashLength))
    }
}

/// AES-128-GCM through swift-crypto, taking keys and nonces as `Secret`s.
enum AES128GCM {
    static let keyLength = 16
    static let nonceLength = 12
    static let tagLength = 16

    static func seal(key: Secret, nonce: Secret, aad: [UInt8], plaintext: [UInt8]) throws -> [UInt8] {
        guard key.count == keyLength else { throw MLSCryptoError.invalidLength(field: "AEAD key", expected: keyLength, actual: key.count) }
        let gcmNonce = try makeNonce(nonce)
        do {
            let box = try AES.GCM.seal(plaintext, using: key.symmetricKey, nonce: gcmNonce, authenticating: aad)
            return Array(box.ciphertext) + Array(box.tag)
        } catch {
            throw MLSCryptoError.encryptionFailed
        }
    }

    static func open(key: Secret, nonce: Secret, aad: [UInt8], ciphertext: [UInt8]) throws -> [UInt8] {
        guard key.count == keyLength else { throw MLSCryptoError.invalidLength(field: "AEAD key", expected: keyLength, actual: key.count) }
        guard ciphertext.count >= tagLength else { throw MLSCryptoError.decryptionFailed }
        let gcmNonce = try makeNonce(nonce)
        do {
            let box = try AES.GCM.SealedBox(
                nonce: gcmNonce,
                ciphertext: ciphertext[..<(ciphertext.count - tagLength)],
                tag: ciphertext[(ciphertext.count - tagLength)...]
            )
            return Array(try AES.GCM.open(box, using: key.symmetricKey, authenticating: aad))
        } catch {
            throw MLSCryptoError.decryptionFailed
        }
    }

    private static func makeNonce(_ nonce: Secret) throws -> AES.GCM.Nonce {
        guard nonce.count == nonceLength else { throw MLSCryptoError.invalidLength(field: "AEAD nonce", expected: nonceLength, actual: nonce.count) }
        guard let value = try? nonce.withUnsafeBytes({ try AES.GCM.Nonce(data: Array($0)) }) else {
            throw MLSCryptoError.invalidLength(field: "AEAD nonce", expected: nonceLength, actual: nonce.count)
        }
        return value
    }
}
