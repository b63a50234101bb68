/// The packet types of section 3.1 with their addressing, scope, freshness class, payload cap
/// and origin TTL. `0x20` (fragment) is a link frame, not a packet type, so it is not a case:
/// a packet claiming it is `unknown_type`.
public enum PacketType: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case announce = 0x01
    case leave = 0x02
    case dm = 0x10
    case nostrEvent = 0x11
    case syncRequest = 0x21
    case syncOffer = 0x22
    case inviteBeacon = 0x30
    case joinHello = 0x31
    case joinChallenge = 0x32
    case joinRequest = 0x33
    case joinWelcome = 0x34
    case joinDone = 0x35
    case joinError = 0x36
    /// The feed sync types (feed.md 8.1): known only to a router with feeds on, so a node
    /// without them keeps refusing 0x40–0x44 as `unknown_type` (mesh.md 3.1).
    case feedRequest = 0x40
    case feedOffer = 0x41
    case feedChunk = 0x42
    case feedAck = 0x43
    case feedRange = 0x44

    public var isFeed: Bool { (0x40...0x44).contains(rawValue) }

    /// Directed types carry a recipient; broadcast ones must not.
    public var isDirected: Bool {
        switch self {
        case .announce, .leave, .nostrEvent, .inviteBeacon: return false
        case .dm, .syncRequest, .syncOffer, .joinHello, .joinChallenge, .joinRequest, .joinWelcome, .joinDone, .joinError,
             .feedRequest, .feedOffer, .feedChunk, .feedAck, .feedRange:
            return true
        }
    }

    /// Link-local packets travel one link: TTL 1, never forwarded.
    public var isLinkLocal: Bool {
        switch self {
        case .announce, .leave, .syncRequest, .syncOffer: return true
        case .feedRequest, .feedOffer, .feedChunk, .feedAck, .feedRange: return true
        default: return false
        }
    }

    /// Carried packets (dm, nostr-event) are fresh for 24 h and are stored; live ones for 120 s.
    public var isCarried: Bool { self == .dm || self == .nostrEvent }

    public var maxPayload: Int {
        switch self {
        case .announce: return 512
        case .leave: return 0
        case .dm: return 32768
        case .nostrEvent: return 65535
        case .syncRequest: return 274
        case .syncOffer: return 1098
        case .inviteBeacon: return 186
        case .joinHello: return 64
        case .joinChallenge: return 2048
        case .joinRequest: return 32768
        case .joinWelcome: return 65535
        case .joinDone: return 49
        case .joinError: return 33
        case .feedRequest: return 2328
        case .feedOffer: return 2584
        case .feedChunk: return 64060
        case .feedAck: return 2136
        case .feedRange: return 2584
        }
    }

    /// The TTL a packet of this type leaves its origin with.
    public var originTTL: UInt8 {
        switch self {
        case .announce, .leave, .syncRequest, .syncOffer: return 1
        case .feedRequest, .feedOffer, .feedChunk, .feedAck, .feedRange: return 1
        case .dm, .nostrEvent: return 7
        case .inviteBeacon, .joinHello, .joinChallenge, .joinRequest, .joinWelcome, .joinDone, .joinError: return 2
        }
    }

    /// How far before the receiver's clock a packet of this type is still fresh (section 3.1).
    public var pastBound: UInt64 { isCarried ? Freshness.carriedPast : Freshness.livePast }

    /// The largest packet of this type: 118 bytes of overhead (126 with a recipient) + payload.
    public var maxPacketLength: Int { Packet.overhead(directed: isDirected) + maxPayload }

    public var description: String {
        switch self {
        case .announce: return "announce"
        case .leave: return "leave"
        case .dm: return "dm"
        case .nostrEvent: return "nostr-event"
        case .syncRequest: return "sync-request"
        case .syncOffer: return "sync-offer"
        case .inviteBeacon: return "invite-beacon"
        case .joinHello: return "join-hello"
        case .joinChallenge: return "join-challenge"
        case .joinRequest: return "join-request"
        case .joinWelcome: return "join-welcome"
        case .joinDone: return "join-done"
        case .joinError: return "join-error"
        case .feedRequest: return "feed-request"
        case .feedOffer: return "feed-offer"
        case .feedChunk: return "feed-chunk"
        case .feedAck: return "feed-ack"
        case .feedRange: return "feed-range"
        }
    }
}

/// The freshness window of section 3.1, in milliseconds relative to the receiver's clock.
public enum Freshness {
    public static let livePast: UInt64 = 120_000
    public static let carriedPast: UInt64 = 24 * 3600 * 1000
    public static let future: UInt64 = 60_000

    /// Section 4 step 4: `future` if too new, `stale` if too old.
    static func check(timestamp: UInt64, type: PacketType, now: UInt64) throws(MeshError) {
        if timestamp > now && timestamp - now > future { throw .future }
        if timestamp < now && now - timestamp > type.pastBound { throw .stale }
    }
}
