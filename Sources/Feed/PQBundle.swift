import Crypto

/// A node's signed statement of its current keys (feed.md 5.3):
/// `0x01 ‖ I (32) ‖ S (32) ‖ u64(created_at, ms) ‖ ek (1184) ‖ sig (64)`, 1,321 bytes, where `sig`
/// is Ed25519 by `I` over the domain string and the first 1,257 bytes. Only `decode` (which
/// checks the length, version, signature and `ek`) or `make` yield one.
public struct PQBundle: Equatable, Sendable {
    public static let domain = Array("burrow-feed-v1:pq-bundle".utf8)
    public static let version: UInt8 = 0x01
    public static let encapsulationKeyCount = 1184
    public static let count = 1321
    static let signedCount = 1257

    public let bytes: [UInt8]
    public var identityKey: [UInt8] { Array(bytes[1..<33]) }
    public var staticKey: [UInt8] { Array(bytes[33..<65]) }
    public var createdAt: UInt64 { bytes[65..<73].reduce(0) { $0 << 8 | UInt64($1) } }
    public var encapsulationKey: [UInt8] { Array(bytes[73..<1257]) }
    /// SHA-256 of the bundle: how feed-keys bodies name it.
    public var hash: [UInt8] { Array(SHA256.hash(data: bytes)) }

    public static func decode(_ bytes: [UInt8]) throws(FeedError) -> PQBundle {
        guard bytes.count == count, bytes[0] == version else { throw .badBundle }
        guard let key = try? Curve25519.Signing.PublicKey(rawRepresentation: bytes[1..<33]),
              key.isValidSignature(bytes[signedCount...], for: domain + bytes[..<signedCount]) else { throw .badBundle }
        guard isValidEncapsulationKey(Array(bytes[73..<1257])) else { throw .badBundle }
        return PQBundle(bytes: bytes)
    }

    /// A new bundle of `identity` with the X25519 public key `staticKey`, made at `createdAt`
    /// (ms), and the ML-KEM-768 key its 64-byte seed `d ‖ z` makes (swift-crypto's `MLKEM768`).
    public static func make(identity: Curve25519.Signing.PrivateKey, staticKey: [UInt8], createdAt: UInt64,
                            kemSeed: [UInt8]) throws -> (bundle: PQBundle, kem: MLKEM768.PrivateKey) {
        let kem = try MLKEM768.PrivateKey(seedRepresentation: kemSeed, publicKey: nil)
        let signed = [version] + Array(identity.publicKey.rawRepresentation) + staticKey + u64(createdAt) + Array(kem.publicKey.rawRepresentation)
        let signature = try identity.signature(for: domain + signed)
        return (try decode(signed + Array(signature)), kem)
    }

    /// The bundle a `key_rotation` content announces (feed.md 6), rebuilt from its members
    /// and decoded (signature and `ek` checked): `bad_content` when the members do not make one.
    public static func announced(by content: FeedJSON) throws(FeedError) -> PQBundle {
        func bytes(_ name: String, _ count: Int) throws(FeedError) -> [UInt8] {
            guard let text = content[name]?.string, let value = Base64URL.decode(text), value.count == count else { throw .badContent }
            return value
        }
        guard content["type"]?.string == "key_rotation", case .integer(let createdAt)? = content["created_at"],
              let created = UInt64(exactly: createdAt) else { throw .badContent }
        let rebuilt = [version] + (try bytes("new_identity_key", 32)) + (try bytes("new_dh_key", 32)) + u64(created)
            + (try bytes("new_pq_key", encapsulationKeyCount)) + (try bytes("previous_key_sig", 64))
        do { return try decode(rebuilt) } catch { throw .badContent }
    }

    static func u64(_ value: UInt64) -> [UInt8] { withUnsafeBytes(of: value.bigEndian, Array.init) }

    /// FIPS 203 §7.2's input check of an ML-KEM-768 encapsulation key, through swift-crypto
    /// (1,184 bytes; every coefficient below q, which its parser enforces).
    public static func isValidEncapsulationKey(_ ek: [UInt8]) -> Bool {
        ek.count == encapsulationKeyCount && (try? MLKEM768.PublicKey(rawRepresentation: ek)) != nil
    }
}

extension FeedKeys {
    /// P = HKDF(seed of I, "", "burrow-feed-v1:presence-key" ‖ u64(bundle created_at), 32).
    public static func presenceKey(identitySeed: [UInt8], createdAt: UInt64) -> [UInt8] {
        FeedAudience.hkdf(identitySeed, salt: [], info: Array("burrow-feed-v1:presence-key".utf8) + PQBundle.u64(createdAt), count: 32)
    }
}
