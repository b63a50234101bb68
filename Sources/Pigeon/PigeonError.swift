/// Every refusal of the Pigeon profile, one case per code of section 9 (and the section 8 codes
/// the engine itself can produce). The raw value is the wire/CLI code exactly.
///
/// A refusal carries no data: no key, no plaintext, no frame bytes (section 7: refusals carry
/// codes, never secrets). Every engine transition that throws one leaves the state unchanged.
public enum PigeonError: String, Error, Sendable, Equatable, CaseIterable, CustomStringConvertible {
    /// Malformed frame or rumor content (3, 6.1).
    case badFrame = "bad_frame"
    /// Card layout (2.3).
    case badCard = "bad_card"
    /// Bundle, link or card signature (2.3).
    case badSignature = "bad_signature"
    /// Card older than the stored one (2.3).
    case cardOutdated = "card_outdated"
    /// Static ≠ bundle; not the contact called; own identity; card of another `I`.
    case identityMismatch = "identity_mismatch"
    /// Handshake1 outside the window or at the floor (4.5).
    case handshakeStale = "handshake_stale"
    case handshakeFuture = "handshake_future"
    /// Handshake1 with a cached ephemeral and nothing to answer from.
    case handshakeReplay = "handshake_replay"
    /// Noise decryption failed or a DH result was zero.
    case handshakeFailed = "handshake_failed"
    /// No pending state or session for the id, or it expired.
    case sessionUnknown = "session_unknown"
    /// Key used, deleted, or of a retired chain.
    case messageReplayed = "message_replayed"
    /// Over 1000 keys to skip in one chain.
    case skipLimit = "skip_limit"
    /// AEAD check failed; nothing changed.
    case decryptFailed = "decrypt_failed"
    /// Authentic message, bad padding or content (the key is consumed: reported in a result,
    /// not thrown, see `ReceivedContent`).
    case badPlaintext = "bad_plaintext"
    /// Section 8: content over 16,382 bytes (a text body over 16,357).
    case messageTooLarge = "message_too_large"
    /// Section 8: the engine holds no contact with that identity key.
    case unknownContact = "unknown_contact"

    public var code: String { rawValue }
    public var description: String { rawValue }
}
