/// How a router behaves: what it announces and does for others, and its timings (section 7).
public struct MeshConfiguration: Sendable {
    /// Default: relay, store and dm; no bridge (the node sets it when it reaches relays).
    public var capabilities: Capabilities = [.relay, .store, .dm]
    /// Off by default: a nickname is a long-term identifier (13).
    public var nickname: String?
    /// Pruned flooding (7.1); `false` is plain flooding, kept for measurements.
    public var pruning = true
    public var seenCapacity = SeenCache.defaultCapacity
    /// A copy heard during the jitter covers its sender's neighbours only if its TTL is at
    /// least the one this node sends (see `FloodingRule.links(covering:)`).
    public var ttlAwareCovering = true
    /// Sync also wants packets this node heard only with TTL 1 (see `MeshRouter.want`).
    public var refetchTTLOne = true
    /// Whether link-local announces are sent on the 10 s schedule (tests of single frames turn
    /// them off so only the frames under test appear).
    public var announces = true
    /// Feeds on (feed.md 8): the types 0x40–0x44 are known, announces carry `presenceTag` of
    /// the current mesh key, and neighbours' tags are delivered. Off, they are `unknown_type`.
    public var feeds = false
    /// The 8-byte presence tag for a mesh key (`FeedPresence.tag` with this node's `P`).
    public var presenceTag: (@Sendable ([UInt8]) -> [UInt8])?

    public static let announceInterval: UInt64 = 10_000
    public static let announceSpread: UInt64 = 2_000
    public static let newLinkAnnounceDelay: UInt64 = 500
    public static let peerSilence: UInt64 = 30_000
    public static let neighbourListFreshness: UInt64 = 25_000
    public static let syncInterval: UInt64 = 60_000
    public static let syncFirstDelay: UInt64 = 1_000
    public static let directedJitter: ClosedRange<UInt64> = 10...40
    public static let broadcastJitter: ClosedRange<UInt64> = 20...80
    /// Pending forwards held at once (each for ≤ 80 ms): a bound under floods.
    public static let maxPendingForwards = 4096
    /// Ids first heard with TTL 1 remembered, in case a copy with a higher TTL follows.
    public static let maxHeldBack = 256
    /// How often sync asks again for a packet heard only with TTL 1.
    public static let maxRefetches = 3
    /// Per-sender rate-limit records held at once.
    public static let maxSenderRecords = 4096
    /// Sync wants (8.5) answered per link per minute (burst as many). A want names up to 32
    /// stored packets, up to ≈ 2 MiB of answers for a 400-byte request, so it is the cheapest
    /// amplifier a stranger has. An honest peer wants at most once per offer we send, and we
    /// send at most 8 offers a minute per link (7.4): 8 wants a minute is all it can use.
    public static let wantsPerLinkPerMinute = 8
    /// Sync wants answered per minute over all links together (burst as many): four links'
    /// full allowance. Ids and links cost an attacker little (BlueZ hands out up to 8 links),
    /// so the total bounds what this node sends for others: at most 32 × 32 stored packets a
    /// minute, never more than the store (≤ 4 MiB) once a minute.
    public static let wantsPerMinute = 32

    public init() {}
}
