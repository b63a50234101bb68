/// What went wrong in MLS cryptography: HPKE, labeled functions, signatures, the key schedule
/// and the secret tree. Cases name the faulty input and never carry secret values.
public enum MLSCryptoError: Error, Equatable, Sendable {
    /// The cipher suite is not MLS_128_DHKEMX25519_AES128GCM_SHA256_Ed25519 (0x0001).
    case unsupportedCipherSuite(UInt16)
    /// A key, nonce or other fixed-size value had the wrong length.
    case invalidLength(field: String, expected: Int, actual: Int)
    /// An X25519 or Ed25519 public key was rejected by swift-crypto.
    case invalidPublicKey(String)
    /// An X25519 or Ed25519 private key was rejected by swift-crypto.
    case invalidPrivateKey(String)
    /// X25519 produced the all-zero shared secret (a low-order public key, RFC 9180 §7.1.4).
    case diffieHellmanFailed
    /// An HKDF-Expand output length outside 1...255·Nh (or beyond a label's uint16).
    case invalidOutputLength(Int)
    /// AES-GCM refused to encrypt (swift-crypto reported an error for valid-length inputs).
    case encryptionFailed
    /// AEAD authentication failed: wrong key, nonce, associated data, or a tampered ciphertext.
    case decryptionFailed
    /// The HPKE context's sequence number would overflow (RFC 9180 §5.2).
    case messageLimitReached
    /// A signature did not verify under the given public key and label.
    case invalidSignature
    /// A MAC (confirmation tag, membership tag) did not verify.
    case invalidMAC(String)
    /// More pre-shared keys than a `PSKLabel` can index (uint16).
    case tooManyPreSharedKeys(Int)
    /// A leaf index outside the secret tree.
    case leafOutOfRange(leaf: UInt32, leafCount: UInt32)
    /// A generation further ahead than the maximum forward distance allows.
    case generationTooFarInFuture(requested: UInt32, current: UInt32)
    /// A generation older than the out-of-order tolerance keeps keys for.
    case generationTooFarInPast(requested: UInt32, current: UInt32)
    /// The key of this generation was already used (a replayed or duplicated message).
    case generationAlreadyConsumed(UInt32)
    /// A hash ratchet reached generation 2^32 − 1 and cannot advance.
    case ratchetExhausted
    /// The secret tree no longer holds the secret needed (deleted after use, RFC 9420 §9.2).
    case secretUnavailable(String)
}
