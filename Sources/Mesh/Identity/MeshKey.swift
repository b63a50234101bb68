import Crypto

/// A mesh signing key (section 2): Ed25519, used for nothing else, replaced every 15 minutes.
/// Not the Nostr key (it names the user) nor the Pigeon identity key (long-lived): a passive
/// listener sees only rotating ids. The secret never appears in descriptions or errors.
public struct MeshKey: Sendable, CustomStringConvertible {
    private let privateKey: SigningKeyBox
    /// The 32-byte Ed25519 public key carried in every packet this key signs.
    public let publicKey: [UInt8]
    /// `mesh_id(publicKey)`.
    public let id: MeshID

    /// From a 32-byte RFC 8032 seed (test vectors, or bytes from the injected random source).
    public init(seed: [UInt8]) throws(MeshError) {
        guard seed.count == 32, let key = try? Curve25519.Signing.PrivateKey(rawRepresentation: seed) else {
            throw .invalidArgument
        }
        privateKey = SigningKeyBox(key)
        publicKey = Array(key.publicKey.rawRepresentation)
        id = MeshID(meshKey: publicKey)
    }

    /// A fresh key from the injected random source (the system CSPRNG in production).
    public static func generate<R: RandomNumberGenerator>(using rng: inout R) -> MeshKey {
        var seed = [UInt8](repeating: 0, count: 32)
        for i in seed.indices { seed[i] = UInt8.random(in: .min ... .max, using: &rng) }
        // 32 bytes are always a valid Ed25519 seed.
        guard let key = try? MeshKey(seed: seed) else { preconditionFailure("a 32-byte seed is always valid") }
        return key
    }

    /// An Ed25519 signature (64 bytes) over `message`.
    func sign(_ message: [UInt8]) -> [UInt8] {
        // BoringSSL's Ed25519 signing cannot fail for a valid key; a failure would be a bug in
        // the library, not something an input can cause.
        guard let signature = try? privateKey.key.signature(for: message) else {
            preconditionFailure("Ed25519 signing failed")
        }
        return Array(signature)
    }

    public var description: String { "MeshKey(\(id))" }
}

/// swift-crypto's Ed25519 private key is an immutable value over BoringSSL state that is only
/// read (signing is a pure function of key and message) but is not marked `Sendable`; this box
/// says so once, here, instead of at every use.
final class SigningKeyBox: @unchecked Sendable {
    let key: Curve25519.Signing.PrivateKey
    init(_ key: Curve25519.Signing.PrivateKey) { self.key = key }
}

/// Ed25519 verification as the mesh needs it: RFC 8032 with the `s < L` check, so a signature
/// cannot be re-encoded into a second valid one (which would give one packet two ids).
/// BoringSSL (under swift-crypto) performs that check; `MeshKeyTests` pins it.
public enum Ed25519Verifier {
    public static func verify(signature: [UInt8], message: [UInt8], publicKey: [UInt8]) -> Bool {
        guard signature.count == 64, publicKey.count == 32,
              let key = try? Curve25519.Signing.PublicKey(rawRepresentation: publicKey)
        else { return false }
        return key.isValidSignature(signature, for: message)
    }
}
