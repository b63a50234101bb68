/// The key and nonce that protect a PrivateMessage's sender data (RFC 9420 §6.3.2):
/// ```
/// ciphertext_sample = ciphertext[0..KDF.Nh-1]   (all of it when shorter)
/// sender_data_key   = ExpandWithLabel(sender_data_secret, "key", ciphertext_sample, AEAD.Nk)
/// sender_data_nonce = ExpandWithLabel(sender_data_secret, "nonce", ciphertext_sample, AEAD.Nn)
/// ```
/// `ciphertext` is the PrivateMessage's content ciphertext, so the sender-data keys depend on it.
public struct SenderDataKey: Sendable, Equatable {
    public let key: Secret
    public let nonce: Secret

    public init(_ cs: CipherSuiteProvider, senderDataSecret: Secret, ciphertext: [UInt8]) throws {
        let sample = Array(ciphertext.prefix(cs.kdfNh))
        key = try cs.expandWithLabel(senderDataSecret, label: "key", context: sample, length: cs.aeadNk)
        nonce = try cs.expandWithLabel(senderDataSecret, label: "nonce", context: sample, length: cs.aeadNn)
    }
}
