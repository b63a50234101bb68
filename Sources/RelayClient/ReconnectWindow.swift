/// How long one operation on one relay (a publish, a fetch's pages) keeps trying after its
/// connection failed or dropped: until `timeout` has passed without progress, pausing with
/// backoff between tries. This is what makes a relay restart in the middle of a command cost a
/// moment instead of the command ("a dropped connection is reconnected within `--timeout`").
///
/// Reconnecting does not count as progress (a relay that accepts connections and drops them
/// would otherwise hold the operation forever); an answered page or an OK does.
struct ReconnectWindow {
    private let timeout: Duration
    private var deadline: ContinuousClock.Instant
    private var backoff: Backoff

    init(timeout: Duration, backoff: Backoff, now: ContinuousClock.Instant = .now) {
        self.timeout = timeout
        self.deadline = now + timeout
        self.backoff = backoff
    }

    /// What is left of the window: the bound for the next try's waits.
    func remaining(now: ContinuousClock.Instant = .now) -> Duration {
        max(deadline - now, .zero)
    }

    /// The operation moved forward: the window starts again.
    mutating func progressed(now: ContinuousClock.Instant = .now) {
        deadline = now + timeout
        backoff.reset()
    }

    /// The pause before trying again after `error`, or nil when trying again cannot help
    /// (the error is not about the connection) or the window has closed. The last pause is
    /// shortened so that one more try fits before the window closes.
    mutating func pause<R: RandomNumberGenerator>(
        after error: RelayClientError, now: ContinuousClock.Instant = .now, using rng: inout R
    ) -> Duration? {
        guard error.mayPassOnReconnect else { return nil }
        let left = remaining(now: now) - Self.shortestTry
        guard left > .zero else { return nil }
        return min(backoff.nextDelay(using: &rng), left)
    }

    /// Time kept for the try after a pause: a loopback or LAN relay answers well within it.
    static let shortestTry: Duration = .milliseconds(250)
}

extension RelayClientError {
    /// True for failures of the connection itself (refused, reset, closed, a connect that took
    /// too long), which a relay coming back can cure. A refusal, a protocol breach, a TLS
    /// failure or a closed pool is final.
    var mayPassOnReconnect: Bool {
        switch self {
        case .unreachable, .connectionClosed, .timeout: return true
        case .invalidURL, .tlsFailed, .frameTooLarge, .malformedMessage, .invalidEvent, .rejected,
             .authenticationFailed, .outboundTooLarge, .shutDown, .noRelayAnswered:
            return false
        }
    }
}
