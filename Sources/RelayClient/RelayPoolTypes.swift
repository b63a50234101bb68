import Nostr

/// One relay's answer to a publish: its OK (accepted or not, with the relay's message), or,
/// when no OK came, `accepted == false` with the failure in `error` and its text in `message`.
public struct PublishResult: Sendable, Equatable {
    public let url: String
    public let accepted: Bool
    public let message: String
    /// Why there is no OK (unreachable, timeout, connection lost); nil when the relay answered.
    public let error: RelayClientError?

    public init(url: String, accepted: Bool, message: String, error: RelayClientError? = nil) {
        self.url = url
        self.accepted = accepted
        self.message = message
        self.error = error
    }

    /// The machine-readable prefix of the relay's message (`duplicate`, `invalid`, …).
    public var reasonPrefix: String? { RelayReason.prefix(of: message) }
}

/// A failure tied to one relay.
public struct RelayFailure: Sendable, Equatable, CustomStringConvertible {
    public let url: String
    public let error: RelayClientError

    public init(url: String, error: RelayClientError) {
        self.url = url
        self.error = error
    }

    public var description: String { "\(url): \(error)" }
}

/// What a fetch found: every verified event once (newest first), and what went wrong where.
public struct FetchResult: Sendable {
    public var events: [Event]
    /// Relays that failed, refused, timed out, or sent invalid events (which were dropped).
    public var errors: [RelayFailure]
    /// Relays that answered every page of the query (EOSE).
    public var completedRelays: [String]
    /// The relays that returned each event.
    public var sources: [EventID: [String]]

    public init(events: [Event] = [], errors: [RelayFailure] = [], completedRelays: [String] = [], sources: [EventID: [String]] = [:]) {
        self.events = events
        self.errors = errors
        self.completedRelays = completedRelays
        self.sources = sources
    }
}

/// What a pool subscription reports, in arrival order.
public enum RelayPoolEvent: Sendable {
    /// A verified event matching the subscription, the first time any relay delivered it.
    case event(Event, relay: String)
    /// This relay has sent its stored events (after each (re)subscription).
    case eose(relay: String)
    /// Every relay has sent EOSE, failed, or timed out (`eoseTimeout`): reported once.
    case eoseAll
    /// A NOTICE from a relay.
    case notice(relay: String, message: String)
    /// The relay ended the subscription (after an authentication retry, where one applied).
    case closed(relay: String, message: String)
    /// Something went wrong with this relay: an invalid event (dropped), a malformed message,
    /// a lost connection, a failed reconnect or authentication, an EOSE timeout.
    case error(relay: String, RelayClientError)
    /// The connection to this relay was re-established and the subscription re-sent.
    case reconnected(relay: String)
}
