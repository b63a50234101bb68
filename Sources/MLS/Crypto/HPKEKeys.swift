import Crypto

/// `opaque HPKEPublicKey<V>` (RFC 9420 §5.1.1): an X25519 public key for suite 0x0001.
///
/// Holds the bytes as received so any suite's structures round-trip; X25519 length and validity
/// are checked when the key is used for encryption.
public struct HPKEPublicKey: Hashable, Sendable, TLSCodable, CustomStringConvertible {
    public let bytes: [UInt8]

    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    public func encode(to writer: inout TLSWriter) { writer.writeOpaque(bytes) }
    public init(from reader: inout TLSReader) throws { bytes = try reader.readOpaque() }

    public var description: String { "HPKEPublicKey(\(bytes.count) bytes)" }

    /// The swift-crypto key, or `invalidPublicKey` when the bytes are not an X25519 point.
    func x25519() throws -> Curve25519.KeyAgreement.PublicKey {
        guard bytes.count == 32, let key = try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: bytes) else {
            throw MLSCryptoError.invalidPublicKey("HPKE public key must be 32 X25519 bytes, got \(bytes.count)")
        }
        return key
    }
}

/// An X25519 private key in RFC 9180 `SerializePrivateKey` form (32 bytes), zeroed on release.
public struct HPKEPrivateKey: Sendable, Equatable, CustomStringConvertible {
    public let secret: Secret

    public init(_ secret: Secret) throws {
        guard secret.count == 32 else { throw MLSCryptoError.invalidLength(field: "HPKE private key", expected: 32, actual: secret.count) }
        self.secret = secret
    }

    public var description: String { "HPKEPrivateKey(redacted)" }

    func x25519() throws -> Curve25519.KeyAgreement.PrivateKey {
        guard let key = try? secret.withUnsafeBytes({ try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: $0) }) else {
            throw MLSCryptoError.invalidPrivateKey("X25519 private key rejected")
        }
        return key
    }

    /// The matching public key.
    public func publicKey() throws -> HPKEPublicKey {
        HPKEPublicKey(Array(try x25519().publicKey.rawRepresentation))
    }
}

/// A private key with its public key (RFC 9180 `(skX, pkX)`).
public struct HPKEKeyPair: Sendable, Equatable {
    public let privateKey: HPKEPrivateKey
    public let publicKey: HPKEPublicKey

    /// Pairs a private key with its computed public key.
    public init(privateKey: HPKEPrivateKey) throws {
        self.privateKey = privateKey
        self.publicKey = try privateKey.publicKey()
    }
}
