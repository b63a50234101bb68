import Crypto

/// `opaque SignaturePublicKey<V>` (RFC 9420 §5.1.1): an Ed25519 public key for suite 0x0001.
///
/// Holds the bytes as received so any suite's structures round-trip; the Ed25519 check happens
/// when a signature is verified.
public struct SignaturePublicKey: Hashable, Sendable, TLSCodable, CustomStringConvertible {
    public let bytes: [UInt8]

    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    public func encode(to writer: inout TLSWriter) { writer.writeOpaque(bytes) }
    public init(from reader: inout TLSReader) throws { bytes = try reader.readOpaque() }

    public var description: String { "SignaturePublicKey(\(bytes.count) bytes)" }

    func ed25519() throws -> Curve25519.Signing.PublicKey {
        guard bytes.count == 32, let key = try? Curve25519.Signing.PublicKey(rawRepresentation: bytes) else {
            throw MLSCryptoError.invalidPublicKey("signature public key must be 32 Ed25519 bytes, got \(bytes.count)")
        }
        return key
    }
}

/// An Ed25519 signing key (the 32-byte seed, RFC 8032 form), zeroed on release.
///
/// swift-crypto signs with BoringSSL's standard (deterministic) Ed25519, so signatures verify
/// under OpenMLS and any RFC 8032 implementation.
public struct SignaturePrivateKey: Sendable, CustomStringConvertible {
    public let seed: Secret
    public let publicKey: SignaturePublicKey

    public init(seed: Secret) throws {
        guard seed.count == 32 else { throw MLSCryptoError.invalidLength(field: "Ed25519 private key", expected: 32, actual: seed.count) }
        guard let key = try? seed.withUnsafeBytes({ try Curve25519.Signing.PrivateKey(rawRepresentation: $0) }) else {
            throw MLSCryptoError.invalidPrivateKey("Ed25519 seed rejected")
        }
        self.seed = seed
        self.publicKey = SignaturePublicKey(Array(key.publicKey.rawRepresentation))
    }

    /// A fresh key from `rng`.
    public static func generate(using rng: inout some RandomNumberGenerator) throws -> SignaturePrivateKey {
        try SignaturePrivateKey(seed: rng.randomSecret(32))
    }

    public var description: String { "SignaturePrivateKey(public: \(publicKey.bytes.count) bytes, private redacted)" }

    /// A raw Ed25519 signature over `message` (no MLS label; see `CipherSuiteProvider.signWithLabel`).
    func sign(_ message: [UInt8]) throws -> [UInt8] {
        let key = try seed.withUnsafeBytes { try Curve25519.Signing.PrivateKey(rawRepresentation: $0) }
        return Array(try key.signature(for: message))
    }
}
