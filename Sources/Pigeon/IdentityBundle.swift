/// Section 2.2: the only statement tying the Noise static key `S` to the identity key `I`.
///
///     bundle = I (32) ‖ S (32) ‖ sig (64),  sig = Ed25519(I, "burrow-pigeon-v1:bundle" ‖ I ‖ S)
///
/// The domain prefix is what Pigeon's audit asked for: a bundle signed over the bare static
/// key (Pigeon's form) fails here.
public struct IdentityBundle: Sendable, Hashable {
    public static let length = 128

    public let identityKey: Ed25519PublicKey
    public let staticKey: X25519PublicKey
    public let signature: [UInt8]

    /// The signed message: domain ‖ I ‖ S.
    public static func message(identity: Ed25519PublicKey, staticKey: X25519PublicKey) -> [UInt8] {
        Domain.bundle + identity.bytes + staticKey.bytes
    }

    /// Signs a bundle for `identity` and `staticKey`.
    public init(identity: Ed25519PrivateKey, staticKey: X25519PublicKey) throws(PigeonKeyError) {
        self.identityKey = identity.publicKey
        self.staticKey = staticKey
        self.signature = try identity.sign(Self.message(identity: identity.publicKey, staticKey: staticKey))
    }

    /// The 128 bytes.
    public var bytes: [UInt8] { identityKey.bytes + staticKey.bytes + signature }

    /// Layout only (used inside card decoding, where the signature is checked in its turn).
    init(layout bytes: [UInt8]) throws(PigeonError) {
        guard bytes.count == Self.length else { throw .badCard }
        // Not checked as a point here: a key that is not one fails the signature check in turn.
        self.identityKey = Ed25519PublicKey(validBytes: Array(bytes[0..<32]))
        self.staticKey = X25519PublicKey(validBytes: Array(bytes[32..<64]))
        self.signature = Array(bytes[64..<128])
    }

    /// True when the signature verifies (s < L included).
    public var isValid: Bool {
        identityKey.isValidSignature(signature, for: Self.message(identity: identityKey, staticKey: staticKey))
    }
}
