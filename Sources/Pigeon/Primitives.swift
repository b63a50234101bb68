import Crypto
import Foundation

/// The primitives of section 1, all from swift-crypto (BoringSSL on Linux); apart from HKDF's
/// two loops over HMAC (see `hkdfSHA256`) nothing here implements an algorithm, it only fixes
/// the parameters the profile uses and adds the checks the profile demands on top (s < L for
/// Ed25519, the zero X25519 result).
enum Primitives {
    // MARK: Hashes and MACs

    static func sha256<D: DataProtocol>(_ data: D) -> [UInt8] { Array(SHA256.hash(data: data)) }

    static func sha512<D: DataProtocol>(_ data: D) -> [UInt8] { Array(SHA512.hash(data: data)) }

    static func hmacSHA256(key: [UInt8], _ data: [UInt8]) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: data, using: SymmetricKey(data: key)))
    }

    /// HKDF-SHA256 (RFC 5869); an empty `salt` is "no salt" (HMAC pads it to zeros either way).
    ///
    /// Written out over swift-crypto's HMAC (extract PRK = HMAC(salt, IKM); expand T(i) =
    /// HMAC(PRK, T(i−1) ‖ info ‖ i), the PRK's key schedule computed once): swift-crypto's own
    /// `HKDF` gives the same bytes (PrimitivesTests checks both against RFC 5869's vectors and
    /// against each other) but on Linux costs about as much as ten HMACs, two thirds of a
    /// ratchet message. `count` is one of the profile's constants (at most 64 here; RFC 5869
    /// allows 255 × 32).
    static func hkdfSHA256(ikm: [UInt8], salt: [UInt8], info: [UInt8], count: Int) -> [UInt8] {
        let prk = HMAC<SHA256>.authenticationCode(for: ikm, using: SymmetricKey(data: salt))
        let keyed = HMAC<SHA256>(key: SymmetricKey(data: prk))
        var out: [UInt8] = []
        out.reserveCapacity(count)
        var block: [UInt8] = []
        var counter: UInt8 = 1
        while out.count < count, counter != 0 {
            var mac = keyed
            mac.update(data: block)
            mac.update(data: info)
            mac.update(data: [counter])
            block = Array(mac.finalize())
            out += block.prefix(count - out.count)
            counter &+= 1
        }
        return out
    }

    // MARK: AEADs

    struct AEADFailure: Error {}

    /// AES-256-GCM with a 12-byte nonce; returns ciphertext ‖ 16-byte tag.
    static func aesGCMSeal(key: [UInt8], nonce: [UInt8], plaintext: [UInt8], ad: [UInt8]) throws(AEADFailure) -> [UInt8] {
        do {
            let box = try AES.GCM.seal(plaintext, using: SymmetricKey(data: key), nonce: AES.GCM.Nonce(data: nonce), authenticating: ad)
            return Array(box.ciphertext) + Array(box.tag)
        } catch { throw AEADFailure() }
    }

    static func aesGCMOpen(key: [UInt8], nonce: [UInt8], sealed: [UInt8], ad: [UInt8]) throws(AEADFailure) -> [UInt8] {
        guard sealed.count >= 16 else { throw AEADFailure() }
        do {
            let box = try AES.GCM.SealedBox(
                nonce: AES.GCM.Nonce(data: nonce), ciphertext: sealed.dropLast(16), tag: sealed.suffix(16))
            return Array(try AES.GCM.open(box, using: SymmetricKey(data: key), authenticating: ad))
        } catch { throw AEADFailure() }
    }

    /// ChaCha20-Poly1305 (RFC 8439) as Noise uses it: nonce = 4 zero bytes ‖ u64 little-endian.
    static func chachaSeal(key: [UInt8], counter: UInt64, plaintext: [UInt8], ad: [UInt8]) throws(AEADFailure) -> [UInt8] {
        do {
            let box = try ChaChaPoly.seal(plaintext, using: SymmetricKey(data: key), nonce: noiseNonce(counter), authenticating: ad)
            return Array(box.ciphertext) + Array(box.tag)
        } catch { throw AEADFailure() }
    }

    static func chachaOpen(key: [UInt8], counter: UInt64, sealed: [UInt8], ad: [UInt8]) throws(AEADFailure) -> [UInt8] {
        guard sealed.count >= 16 else { throw AEADFailure() }
        do {
            let box = try ChaChaPoly.SealedBox(nonce: noiseNonce(counter), ciphertext: sealed.dropLast(16), tag: sealed.suffix(16))
            return Array(try ChaChaPoly.open(box, using: SymmetricKey(data: key), authenticating: ad))
        } catch { throw AEADFailure() }
    }

    private static func noiseNonce(_ counter: UInt64) throws -> ChaChaPoly.Nonce {
        var bytes = [UInt8](repeating: 0, count: 4)
        for i in 0..<8 { bytes.append(UInt8(truncatingIfNeeded: counter >> (8 * i))) }
        return try ChaChaPoly.Nonce(data: bytes)
    }
}

// MARK: - X25519

/// An X25519 private key (RFC 7748). The raw scalar is kept as given (clamping happens inside
/// the primitive), so a key round-trips through storage byte for byte.
public struct X25519PrivateKey: Sendable, Equatable, CustomStringConvertible {
    let secret: SecretBytes
    /// The public key, computed once.
    public let publicKey: X25519PublicKey

    /// `bytes` must be 32 bytes.
    public init(bytes: [UInt8]) throws(PigeonKeyError) {
        guard bytes.count == 32, let key = try? Curve25519.KeyAgreement.PrivateKey(rawRepresentation: bytes) else {
            throw PigeonKeyError.invalidPrivateKey
        }
        self.secret = SecretBytes(bytes)
        self.publicKey = X25519PublicKey(validBytes: Array(key.publicKey.rawRepresentation))
    }

    /// A fresh key from the system CSPRNG.
    public static func generate() -> X25519PrivateKey {
        let key = Curve25519.KeyAgreement.PrivateKey()
        let bytes = Array(key.rawRepresentation)
        return X25519PrivateKey(secret: SecretBytes(bytes), publicKey: X25519PublicKey(validBytes: Array(key.publicKey.rawRepresentation)))
    }

    private init(secret: SecretBytes, publicKey: X25519PublicKey) {
        self.secret = secret
        self.publicKey = publicKey
    }

    /// The 32 raw bytes, for storage only.
    public var rawBytes: [UInt8] { secret.bytes }

    /// DH(self, peer). Throws `ZeroResult` when the result is 32 zero bytes (a low-order peer
    /// key), which the profile refuses wherever it occurs.
    func sharedSecret(with peer: X25519PublicKey) throws(ZeroResult) -> [UInt8] {
        guard let privateKey = try? Curve25519.KeyAgreement.PrivateKey(rawRepresentation: secret.bytes),
              let publicKey = try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: peer.bytes),
              let shared = try? privateKey.sharedSecretFromKeyAgreement(with: publicKey)
        else { throw ZeroResult() }  // BoringSSL refuses the all-zero result itself
        let bytes = shared.withUnsafeBytes { Array($0) }
        guard bytes.count == 32, !isAllZero(bytes) else { throw ZeroResult() }
        return bytes
    }

    struct ZeroResult: Error {}

    public var description: String { "X25519PrivateKey(public: \(publicKey))" }
}

/// An X25519 public key: 32 bytes (every 32-byte string is a u-coordinate; low-order points
/// are caught by the zero-result check).
public struct X25519PublicKey: Sendable, Hashable, CustomStringConvertible {
    public let bytes: [UInt8]

    public init(bytes: [UInt8]) throws(PigeonKeyError) {
        guard bytes.count == 32 else { throw PigeonKeyError.invalidPublicKey }
        self.bytes = bytes
    }

    init(validBytes: [UInt8]) { self.bytes = validBytes }

    public static func == (lhs: X25519PublicKey, rhs: X25519PublicKey) -> Bool { constantTimeEqual(lhs.bytes, rhs.bytes) }
    public func hash(into hasher: inout Hasher) { hasher.combine(bytes) }
    public var description: String { hexString(bytes) }
}

// MARK: - Ed25519

/// An Ed25519 identity key pair (RFC 8032) from its 32-byte seed. Signing is deterministic
/// (BoringSSL's ED25519_sign), which the vectors check byte for byte.
public struct Ed25519PrivateKey: Sendable, Equatable, CustomStringConvertible {
    let seed: SecretBytes
    public let publicKey: Ed25519PublicKey

    public init(seed: [UInt8]) throws(PigeonKeyError) {
        guard seed.count == 32, let key = try? Curve25519.Signing.PrivateKey(rawRepresentation: seed) else {
            throw PigeonKeyError.invalidPrivateKey
        }
        self.seed = SecretBytes(seed)
        self.publicKey = Ed25519PublicKey(validBytes: Array(key.publicKey.rawRepresentation))
    }

    public static func generate() -> Ed25519PrivateKey {
        let key = Curve25519.Signing.PrivateKey()
        // A seed swift-crypto produced is always accepted back.
        return (try? Ed25519PrivateKey(seed: Array(key.rawRepresentation)))
            ?? Ed25519PrivateKey(uncheckedSeed: Array(key.rawRepresentation), publicKey: Array(key.publicKey.rawRepresentation))
    }

    private init(uncheckedSeed: [UInt8], publicKey: [UInt8]) {
        self.seed = SecretBytes(uncheckedSeed)
        self.publicKey = Ed25519PublicKey(validBytes: publicKey)
    }

    /// The 32-byte seed, for storage only.
    public var seedBytes: [UInt8] { seed.bytes }

    /// The 64-byte signature of `message`.
    func sign(_ message: [UInt8]) throws(PigeonKeyError) -> [UInt8] {
        guard let key = try? Curve25519.Signing.PrivateKey(rawRepresentation: seed.bytes),
              let signature = try? key.signature(for: message), signature.count == 64
        else { throw PigeonKeyError.signingFailed }
        return Array(signature)
    }

    public var description: String { "Ed25519PrivateKey(public: \(publicKey))" }
}

/// An Ed25519 public key (the identity key `I`).
public struct Ed25519PublicKey: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let bytes: [UInt8]

    /// 32 bytes that decode as a curve point.
    public init(bytes: [UInt8]) throws(PigeonKeyError) {
        guard bytes.count == 32, (try? Curve25519.Signing.PublicKey(rawRepresentation: bytes)) != nil else {
            throw PigeonKeyError.invalidPublicKey
        }
        self.bytes = bytes
    }

    init(validBytes: [UInt8]) { self.bytes = validBytes }

    /// The group order L, little-endian, for the s < L check of RFC 8032 section 5.1.7.
    static let groupOrderLE: [UInt8] = [
        0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9, 0xde, 0x14,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10,
    ]

    /// True when `signature` is a valid Ed25519 signature of `message` with s < L (a signature
    /// with s + L would otherwise be a second valid encoding; the check is explicit here so it
    /// does not depend on the backend's version).
    public func isValidSignature(_ signature: [UInt8], for message: [UInt8]) -> Bool {
        guard signature.count == 64, Self.scalarIsCanonical(Array(signature[32..<64])) else { return false }
        guard let key = try? Curve25519.Signing.PublicKey(rawRepresentation: bytes) else { return false }
        return key.isValidSignature(signature, for: message)
    }

    /// s (little-endian) < L. Public values only: timing does not matter here.
    static func scalarIsCanonical(_ s: [UInt8]) -> Bool {
        for i in stride(from: 31, through: 0, by: -1) {
            if s[i] < groupOrderLE[i] { return true }
            if s[i] > groupOrderLE[i] { return false }
        }
        return false  // s == L
    }

    public static func == (lhs: Ed25519PublicKey, rhs: Ed25519PublicKey) -> Bool { constantTimeEqual(lhs.bytes, rhs.bytes) }
    public func hash(into hasher: inout Hasher) { hasher.combine(bytes) }
    /// Byte order, for deterministic listings (not a security decision).
    public static func < (lhs: Ed25519PublicKey, rhs: Ed25519PublicKey) -> Bool { lhs.bytes.lexicographicallyPrecedes(rhs.bytes) }
    public var hex: String { hexString(bytes) }
    public var description: String { hex }
}

/// Key material that is not a key: wrong length, not a point, or refused by the backend.
public enum PigeonKeyError: Error, Sendable, Equatable {
    case invalidPrivateKey
    case invalidPublicKey
    case signingFailed
}

func hexString<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
    let digits = Array("0123456789abcdef".utf8)
    var out: [UInt8] = []
    out.reserveCapacity(bytes.count * 2)
    for b in bytes {
        out.append(digits[Int(b >> 4)])
        out.append(digits[Int(b & 0x0f)])
    }
    return String(decoding: out, as: UTF8.self)
}
