/// Noise CipherState (Noise specification rev. 34, section 5.1) for ChaChaPoly: a key and a
/// 64-bit nonce counter. A value type, so a handshake in progress can be copied, stored and
/// abandoned without side effects.
public struct NoiseCipherState: Sendable, Equatable {
    var key: SecretBytes?
    var nonce: UInt64

    init(key: [UInt8]? = nil) {
        self.key = key.map(SecretBytes.init)
        self.nonce = 0
    }

    var hasKey: Bool { key != nil }

    /// Encrypts (or, without a key, returns the plaintext) and advances the nonce.
    public mutating func encrypt(ad: [UInt8], plaintext: [UInt8]) throws(NoiseError) -> [UInt8] {
        guard let key else { return plaintext }
        guard nonce < UInt64.max else { throw .nonceExhausted }
        let out: [UInt8]
        do { out = try Primitives.chachaSeal(key: key.bytes, counter: nonce, plaintext: plaintext, ad: ad) } catch { throw .decryptFailed }
        nonce += 1
        return out
    }

    /// Decrypts (or, without a key, returns the input); on failure the nonce does not advance.
    public mutating func decrypt(ad: [UInt8], ciphertext: [UInt8]) throws(NoiseError) -> [UInt8] {
        guard let key else { return ciphertext }
        guard nonce < UInt64.max else { throw .nonceExhausted }
        let out: [UInt8]
        do { out = try Primitives.chachaOpen(key: key.bytes, counter: nonce, sealed: ciphertext, ad: ad) } catch { throw .decryptFailed }
        nonce += 1
        return out
    }
}

/// Why a Noise operation failed. The DM engine maps all of these to `handshake_failed`.
public enum NoiseError: Error, Sendable, Equatable {
    /// AEAD authentication failed.
    case decryptFailed
    /// A DH result was 32 zero bytes.
    case zeroSharedSecret
    /// A message is shorter than its tokens need, or longer than 65,535 bytes.
    case badLength
    /// 2^64 − 1 messages under one key.
    case nonceExhausted
}
