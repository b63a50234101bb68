import NIOSSL

/// How the relay client talks to relays: size limits, the bound on every wait, reconnect
/// policy. Defaults suit Marmot traffic (events up to a few hundred KiB).
public struct RelayConfiguration: Sendable {
    /// Largest WebSocket frame accepted or sent. The WebSocket packages default to 16 KiB,
    /// which breaks large events; a bigger frame from a relay drops the connection with
    /// `RelayClientError.frameTooLarge`.
    ///
    /// The WebSocket layer itself reads frames up to twice this size (its own hard ceiling,
    /// which bounds memory); a frame beyond that ceiling is dropped by the layer before we see
    /// it, so it ends the connection as `connectionClosed` instead.
    public var maxFrameSize: Int = 1 << 20
    /// Largest message (one frame, or a frame and its continuations) accepted or sent.
    public var maxMessageSize: Int = 1 << 20

    /// Bound on TCP + TLS + WebSocket upgrade.
    public var connectTimeout: Duration = .seconds(10)
    /// Bound on a relay's first EOSE for a live subscription; past it the relay counts as
    /// caught up (with an error reported) so the pool's overall EOSE is not held hostage.
    public var eoseTimeout: Duration = .seconds(15)
    /// Bound on the OK that answers our NIP-42 AUTH event.
    public var authTimeout: Duration = .seconds(10)
    /// Answer a relay's AUTH challenge as soon as it arrives (with the pool's identity key).
    /// When false, authenticate only after an `auth-required:` refusal.
    public var authenticateWhenChallenged = true
    /// WebSocket pings at this period detect dead connections (nil: no pings).
    public var pingInterval: Duration? = .seconds(30)

    /// Reconnect delays for relays that carry live subscriptions.
    public var backoff = Backoff()
    /// Pauses between the tries of one publish or fetch whose connection failed or dropped
    /// (bounded by the operation's timeout; see `ReconnectWindow`): short, since a command waits.
    public var operationBackoff = Backoff(initial: .milliseconds(200), maximum: .seconds(2))
    /// After a reconnect, subscriptions resume from the newest created_at seen minus this.
    public var resubscribeMargin: Duration = .seconds(15 * 60)
    /// The margin when a filter asks for kind 1059: gift wraps are back-dated up to two days
    /// (NIP-59), so at least a week; duplicates are dropped by id.
    public var giftWrapResubscribeMargin: Duration = .seconds(7 * 24 * 3600)
    /// Upper bound on `until` pages one fetch makes per relay.
    public var maxPages: Int = 10_000
    /// No relay is assumed to cap a REQ's results below this many events, so a smaller
    /// answer is complete and needs no `until` follow-up (real caps are 100–5000).
    public var smallestRelayCap: Int = 10

    /// TLS for `wss://` relays (system trust roots by default).
    public var tlsConfiguration: TLSConfiguration = .makeClientConfiguration()

    public init() {}

    /// Frame and message limits clamped to what the WebSocket layer can represent.
    var effectiveMaxFrameSize: Int { min(max(maxFrameSize, 1 << 10), Int(UInt32.max) / 2) }
    var effectiveMaxMessageSize: Int { max(maxMessageSize, 1 << 10) }
    /// The frame size the WebSocket layer buffers before handing a frame to us.
    var frameReadCeiling: Int { effectiveMaxFrameSize * 2 }
}
