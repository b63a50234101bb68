/// Everything that can go wrong talking to relays. Each case says what was wrong; none carries
/// secrets. Every wait is bounded, so `timeout` is an ordinary outcome rather than a hang.
public enum RelayClientError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The text is not a `ws://` or `wss://` URL we can dial.
    case invalidURL(String)
    /// TCP or the WebSocket upgrade failed (nothing listening, connection reset, upgrade refused).
    case unreachable(String)
    /// The TLS handshake failed (certificate, protocol): the relay is there, but trying again
    /// will not help.
    case tlsFailed(String)
    /// Nothing arrived within the allowed time; says what we were waiting for.
    case timeout(String)
    /// The connection ended (peer close, reset, or our own close); says how.
    case connectionClosed(String)
    /// The relay sent a frame or message larger than our limit; the connection was dropped.
    case frameTooLarge(limit: Int)
    /// The relay sent something that is not a NIP-01 relay message.
    case malformedMessage(String)
    /// The relay sent an event whose id or signature does not verify, or that does not
    /// match the subscription it came on; the event was dropped.
    case invalidEvent(String)
    /// The relay refused (OK false, or CLOSED), with its reason text.
    case rejected(String)
    /// NIP-42 authentication was needed and could not be done (no key, no challenge, refused).
    case authenticationFailed(String)
    /// We refused to send: the message is larger than our own limit.
    case outboundTooLarge(limit: Int)
    /// The pool or connection was closed by its owner.
    case shutDown
    /// A fetch got no answer from any relay; each relay's failure is listed.
    case noRelayAnswered([RelayFailure])

    public var description: String {
        switch self {
        case .invalidURL(let text): return "invalid relay URL: \(text)"
        case .unreachable(let why): return "relay unreachable: \(why)"
        case .tlsFailed(let why): return "relay unreachable: TLS failed: \(why)"
        case .timeout(let what): return "timed out waiting for \(what)"
        case .connectionClosed(let how): return "connection closed: \(how)"
        case .frameTooLarge(let limit): return "relay sent a frame or message over \(limit) bytes"
        case .malformedMessage(let why): return "malformed relay message: \(why)"
        case .invalidEvent(let why): return "invalid event from relay: \(why)"
        case .rejected(let reason): return "relay rejected: \(reason)"
        case .authenticationFailed(let why): return "authentication failed: \(why)"
        case .outboundTooLarge(let limit): return "message over our \(limit)-byte limit not sent"
        case .shutDown: return "relay client shut down"
        case .noRelayAnswered(let failures):
            // One line per relay, so a person sees at once which relays failed and how.
            return "no relay answered:" + failures.map { "\n  \($0.description)" }.joined()
        }
    }
}
