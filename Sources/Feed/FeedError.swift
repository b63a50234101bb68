/// The refusals and outcomes of Docs/protocols/feed.md section 11, by their wire names.
public enum FeedError: String, Error, Sendable, Equatable, CustomStringConvertible {
    // Envelope (4.4).
    case tooLarge = "too_large"
    case badJSON = "bad_json"
    /// A number that parses but has no canonical form (a fraction, an exponent, beyond ±(2^53 − 1)).
    case badNumber = "bad_number"
    case badEnvelope = "bad_envelope"
    case unknownVersion = "unknown_version"
    case nonCanonical = "non_canonical"
    case selfAudience = "self_audience"
    case feedIDMismatch = "feed_id_mismatch"
    case badSignature = "bad_signature"
    // Chain (7.1).
    case fork
    case brokenChain = "broken_chain"
    // Content (5.5, 6).
    case noKey = "no_key"
    case opaque
    case decryptFailed = "decrypt_failed"
    case badContent = "bad_content"
    case typeMismatch = "type_mismatch"
    // Sync (8.3, 8.4).
    case badFrame = "bad_frame"
    case linkFailed = "link_failed"
    case linkReplay = "link_replay"
    case messageIDMismatch = "message_id_mismatch"
    // Relay carrier (9).
    case badEvent = "bad_event"
    // Keys (5.3).
    case badBundle = "bad_bundle"
    case badFeedKeys = "bad_feed_keys"
    case identityMismatch = "identity_mismatch"
    case bundleOutdated = "bundle_outdated"

    public var description: String { rawValue }
}
