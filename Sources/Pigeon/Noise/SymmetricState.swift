/// Noise SymmetricState (section 5.2) with SHA-256: the chaining key `ck`, the handshake hash
/// `h` and the CipherState keyed by MixKey.
public struct NoiseSymmetricState: Sendable, Equatable {
    static let hashLength = 32

    var chainingKey: SecretBytes
    /// The transcript hash: public (it hashes the public transcript), so not a secret type.
    public private(set) var handshakeHash: [UInt8]
    var cipher: NoiseCipherState

    /// InitializeSymmetric(protocol_name): padded with zeros to 32 bytes, or hashed if longer.
    init(protocolName: String) {
        let name = Array(protocolName.utf8)
        let h = name.count <= Self.hashLength ? name + [UInt8](repeating: 0, count: Self.hashLength - name.count) : Primitives.sha256(name)
        handshakeHash = h
        chainingKey = SecretBytes(h)
        cipher = NoiseCipherState()
    }

    init(chainingKey: [UInt8], handshakeHash: [UInt8], cipher: NoiseCipherState) {
        self.chainingKey = SecretBytes(chainingKey)
        self.handshakeHash = handshakeHash
        self.cipher = cipher
    }

    /// Noise's HKDF(ck, ikm, 2): HMAC-based, identical to RFC 5869 with salt = ck and no info.
    static func hkdf2(chainingKey: [UInt8], ikm: [UInt8]) -> ([UInt8], [UInt8]) {
        let out = Primitives.hkdfSHA256(ikm: ikm, salt: chainingKey, info: [], count: 64)
        return (Array(out[0..<32]), Array(out[32..<64]))
    }

    mutating func mixKey(_ ikm: [UInt8]) {
        let (ck, k) = Self.hkdf2(chainingKey: chainingKey.bytes, ikm: ikm)
        chainingKey = SecretBytes(ck)
        cipher = NoiseCipherState(key: k)
    }

    mutating func mixHash(_ data: [UInt8]) {
        handshakeHash = Primitives.sha256(handshakeHash + data)
    }

    mutating func encryptAndHash(_ plaintext: [UInt8]) throws(NoiseError) -> [UInt8] {
        let ciphertext = try cipher.encrypt(ad: handshakeHash, plaintext: plaintext)
        mixHash(ciphertext)
        return ciphertext
    }

    mutating func decryptAndHash(_ ciphertext: [UInt8]) throws(NoiseError) -> [UInt8] {
        let plaintext = try cipher.decrypt(ad: handshakeHash, ciphertext: ciphertext)
        mixHash(ciphertext)
        return plaintext
    }

    /// Split(): the two transport CipherStates (initiator → responder first). Pigeon never uses
    /// them (section 4.1); the published vectors do.
    func split() -> (NoiseCipherState, NoiseCipherState) {
        let (k1, k2) = Self.hkdf2(chainingKey: chainingKey.bytes, ikm: [])
        return (NoiseCipherState(key: k1), NoiseCipherState(key: k2))
    }

    /// The chaining key, for the ratchet root derivation (section 4.4).
    var chainingKeyBytes: [UInt8] { chainingKey.bytes }
}
