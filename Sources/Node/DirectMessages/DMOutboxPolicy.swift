import Pigeon

/// How long and how often the DM outbox tries a frame, and how much of it one flush may take
/// (issue 19: replies to strangers must not pile up, nor a dead relay hold every command).
enum DMOutboxPolicy {
    /// A handshake frame is useless after the handshake window (24 h), a message frame after
    /// its gift wrap's own expiration (30 days).
    static let handshakeLifetime = NostrCarrier.handshakeExpirySeconds
    static let messageLifetime = NostrCarrier.messageExpirySeconds
    /// Attempts before a frame is given up (`failed`): with the backoff below, about two days.
    static let maxAttempts = 60
    /// Attempts retried on the next flush at once (a relay briefly down, a command's own retry).
    static let immediateAttempts = 3
    /// Longest pause between two attempts.
    static let maxRetryDelay: Int64 = 3_600

    /// Seconds to wait after the `attempts`-th failed attempt: none for the first few, then
    /// 15 s doubling up to an hour.
    static func retryDelay(afterAttempts attempts: Int) -> Int64 {
        guard attempts >= immediateAttempts else { return 0 }
        return min(maxRetryDelay, 15 << Int64(min(attempts - immediateAttempts, 12)))
    }

    /// Frames one flush takes from the outbox; the rest wait for the next.
    static let framesPerFlush = 256
    /// Recipients published to at the same time within one flush.
    static let concurrentRecipients = 8
    /// Pending handshake replies to strangers kept at once (the engine keeps as many of their
    /// pending states: a reply whose state was evicted could never complete).
    static let maxStrangerRows = StrangerLimits.maxPending
    /// Relays taken from someone else's kind-10050 inbox list.
    static let maxInboxRelays = 4
}
