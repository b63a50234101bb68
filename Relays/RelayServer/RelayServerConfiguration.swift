/// How a relay listens, what it keeps and how much it lets each client do.
///
/// Every field has a default suited to a family relay on one machine or a home server; a JSON
/// file (`RelayServerConfiguration(jsonFile:)`) may set any subset, with the same snake_case
/// names as Relays/README.md lists, and unknown keys are refused so a typo is not silently
/// ignored. `validated()` checks ranges before the relay starts.
public struct RelayServerConfiguration: Sendable, Equatable {
    /// Address to listen on: loopback by default; a LAN address (or 0.0.0.0) for a home server.
    public var host: String = "127.0.0.1"
    /// TCP port (0 picks a free one; `RunningRelay.url` tells which).
    public var port: Int = 7447
    /// Directory holding the relay's own database (never a node's encrypted home: the relay
    /// holds other people's events). Created if missing.
    public var dataDirectory: String = "burrow-relay-data"
    /// URLs clients reach this relay by (e.g. `wss://relay.home.example` behind a TLS proxy),
    /// accepted in NIP-42 `relay` tags besides the listening address itself.
    public var publicURLs: [String] = []
    public var information = Information()
    public var limits = Limits()
    public var auth = AuthPolicy()
    /// Per-kind retention: events of these kinds older than the age are refused and purged.
    public var retention: [RetentionRule] = []
    /// Period of the purge of expired (NIP-40) and past-retention events.
    public var purgeIntervalSeconds: Int = 60

    public init() {}

    /// The NIP-11 fields an operator may set.
    public struct Information: Sendable, Equatable {
        public var name: String = "burrow-relay"
        public var description: String = "A small private relay for a family's Burrow and Marmot groups."
        /// The operator's public key (hex), if they want to be reachable.
        public var pubkey: String?
        /// Another way to reach the operator (an email or URL).
        public var contact: String?

        public init() {}
    }

    /// Size, count and rate limits. Rates are token buckets: up to the per-minute count at
    /// once, refilled evenly over a minute.
    public struct Limits: Sendable, Equatable {
        /// Largest event accepted, as the bytes of its JSON (default 256 KiB: commits and
        /// welcomes of big groups are large). The WebSocket frame limit is twice this.
        public var maxEventBytes: Int = 256 * 1024
        /// Open subscriptions per connection.
        public var maxSubscriptions: Int = 50
        /// Filters in one REQ.
        public var maxFilters: Int = 20
        /// Values in one filter (ids + authors + kinds + every tag value), at most 900.
        public var maxFilterValues: Int = 500
        /// Stored events returned per filter: the default and the cap of `limit`.
        public var queryLimit: Int = 500
        /// Simultaneous WebSocket connections; more are told so and closed.
        public var maxConnections: Int = 512
        /// EVENT messages per minute on one connection.
        public var eventsPerMinute: Int = 600
        /// Events per minute signed by one key, across connections.
        public var eventsPerMinutePerKey: Int = 600
        /// REQ messages per minute on one connection.
        public var requestsPerMinute: Int = 600
        /// How far in the future created_at may be.
        public var maxFutureSeconds: Int = 900
        /// Messages waiting to be written to one client; a client that falls further behind
        /// is disconnected rather than buffered without bound.
        public var outboundQueue: Int = 10_000
        /// Bytes waiting to be written to one client (with `outboundQueue`, whichever comes
        /// first): a client that stops reading costs at most this much before it is disconnected.
        public var outboundBytes: Int = 8 << 20
        /// Bytes of stored events one REQ's reply carries, and of live events held for a
        /// subscription while its stored events are read. A reply that reaches it ends early
        /// with EOSE (the client pages on with `until`); a subscription whose held events
        /// exceed it is CLOSED after its EOSE (the client subscribes again).
        public var requestBytes: Int = 4 << 20
        /// Connections from one IP address at once; more are told so and closed.
        public var maxConnectionsPerIP: Int = 32
        /// Whether `maxConnectionsPerIP` counts loopback clients too (by default a process on
        /// this machine is trusted as far as the number of its connections goes).
        public var limitLoopback: Bool = false
        /// AUTH messages per minute on one connection.
        public var authPerMinute: Int = 10
        /// Keys one connection may authenticate as.
        public var maxAuthKeys: Int = 8
        /// Largest AUTH event, as the bytes of its JSON (a kind-22242 event is small).
        public var maxAuthEventBytes: Int = 4096
        /// Gift wraps (kind 1059) stored for one recipient at once (Docs/protocols/pigeon-dm.md 6.3): the
        /// mailbox of a key that never comes to collect cannot grow without bound, and one
        /// flooded recipient does not take space from the others. Beyond it a wrap gets
        /// `OK false "rate-limited: mailbox full"` until the recipient deletes or they expire.
        public var mailboxWraps: Int = 1000
        /// Bytes of gift wraps (the sum of their JSON) stored for one recipient at once, with
        /// `mailboxWraps` (whichever is reached first); 16 MiB by default.
        public var mailboxBytes: Int = 16 << 20
        /// Live gift wraps stored for all recipients together: the per-recipient quota alone
        /// is defeated by fresh recipient keys. Beyond it a wrap gets `OK false "rate-limited:
        /// the relay holds all the gift wraps it can"`.
        public var relayWraps: Int = 100_000

        public init() {}
    }

    /// Whether clients must authenticate (NIP-42) before writing or reading anything at all.
    /// Gift wraps (kind 1059) always need it: they are served only to their recipient.
    public struct AuthPolicy: Sendable, Equatable {
        public var write: Bool = false
        public var read: Bool = false

        public init() {}
    }

    public struct RetentionRule: Sendable, Equatable {
        public var kinds: [Int]
        public var maxAgeSeconds: Int

        public init(kinds: [Int], maxAgeSeconds: Int) {
            self.kinds = kinds
            self.maxAgeSeconds = maxAgeSeconds
        }
    }

    /// The WebSocket frame/message ceiling: twice the event limit, so a somewhat oversized
    /// event is read and refused with a reason; anything larger ends the connection.
    public var maxMessageBytes: Int { limits.maxEventBytes * 2 }

    /// The largest retention age that applies to `kind`, if any rule names it (the smallest
    /// age wins when several do).
    public func maxAge(ofKind kind: Int) -> Int? {
        retention.filter { $0.kinds.contains(kind) }.map(\.maxAgeSeconds).min()
    }

    /// The configuration with every value checked, or the first problem found.
    public func validated() throws -> RelayServerConfiguration {
        func require(_ condition: Bool, _ why: @autoclosure () -> String) throws {
            if !condition { throw RelayServerError.invalidConfiguration(why()) }
        }
        try require(!host.isEmpty, "host is empty")
        try require((0...65_535).contains(port), "port \(port) is not 0…65535")
        try require(!dataDirectory.isEmpty, "data_directory is empty")
        try require((1024...(64 << 20)).contains(limits.maxEventBytes), "limits.max_event_bytes must be 1024…67108864")
        try require((1...1000).contains(limits.maxSubscriptions), "limits.max_subscriptions must be 1…1000")
        try require((1...200).contains(limits.maxFilters), "limits.max_filters must be 1…200")
        try require((1...900).contains(limits.maxFilterValues), "limits.max_filter_values must be 1…900")
        try require((1...100_000).contains(limits.queryLimit), "limits.query_limit must be 1…100000")
        try require((1...1_000_000).contains(limits.maxConnections), "limits.max_connections must be 1…1000000")
        try require(limits.eventsPerMinute >= 1, "limits.events_per_minute must be at least 1")
        try require(limits.eventsPerMinutePerKey >= 1, "limits.events_per_minute_per_key must be at least 1")
        try require(limits.requestsPerMinute >= 1, "limits.requests_per_minute must be at least 1")
        try require(limits.maxFutureSeconds >= 0, "limits.max_future_seconds must not be negative")
        try require(limits.outboundQueue >= 16, "limits.outbound_queue must be at least 16")
        try require(limits.outboundBytes >= 2 * maxMessageBytes, "limits.outbound_bytes must be at least twice the largest message")
        try require(limits.requestBytes >= limits.maxEventBytes, "limits.request_bytes must be at least limits.max_event_bytes")
        try require(limits.maxConnectionsPerIP >= 1, "limits.max_connections_per_ip must be at least 1")
        try require(limits.authPerMinute >= 1, "limits.auth_per_minute must be at least 1")
        try require(limits.maxAuthKeys >= 1, "limits.max_auth_keys must be at least 1")
        try require((512...65_536).contains(limits.maxAuthEventBytes), "limits.max_auth_event_bytes must be 512…65536")
        try require(limits.mailboxWraps >= 1, "limits.mailbox_wraps must be at least 1")
        try require(limits.relayWraps >= limits.mailboxWraps, "limits.relay_wraps must be at least limits.mailbox_wraps")
        try require(limits.mailboxBytes >= 1024, "limits.mailbox_bytes must be at least 1024")
        try require((1...86_400).contains(purgeIntervalSeconds), "purge_interval_seconds must be 1…86400")
        for rule in retention {
            try require(!rule.kinds.isEmpty, "a retention rule names no kinds")
            try require(rule.kinds.allSatisfy { (0...65_535).contains($0) }, "a retention rule names a kind outside 0…65535")
            try require(rule.maxAgeSeconds >= 1, "retention max_age_seconds must be at least 1")
        }
        if let pubkey = information.pubkey {
            try require(pubkey.utf8.count == 64 && pubkey.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) },
                        "info.pubkey is not 64 lowercase hex digits")
        }
        for url in publicURLs {
            try require(url.hasPrefix("ws://") || url.hasPrefix("wss://"), "public_urls entry \(url) is not a ws:// or wss:// URL")
        }
        return self
    }
}
