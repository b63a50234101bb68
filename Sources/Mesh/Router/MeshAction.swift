import Nostr

/// What the router asks its host to do; the host (node, simulated radio) carries it out.
public enum MeshAction: Sendable {
    /// Write one frame (≤ the link's MTU) on a link.
    case transmit(link: LinkID, frame: [UInt8])
    /// A packet for this node or every node: hand it to the layer above.
    case deliver(MeshDelivery)
    /// Close a link: a second connection to a neighbour this node is also connected to on
    /// another link (11.1: of two nodes, the one with the larger mesh id closes the duplicate).
    /// The host ends the connection and reports the link down.
    case close(link: LinkID)
}

/// A delivered packet and what it carried, payload already checked (section 8).
public struct MeshDelivery: Sendable {
    public enum Content: Sendable {
        /// A Pigeon frame, opaque here, addressed to one of this node's DM tags.
        case dm(frame: [UInt8])
        /// A verified event of a carried kind; it enters the Marmot pipeline as if from a relay.
        case nostrEvent(Event)
        /// An invite beacon whose signature binds it to the sending mesh key; `hops` = 3 − TTL.
        case beacon(InviteBeacon, hops: Int)
        /// An invite exchange message addressed to this node.
        case join(JoinMessage)
        /// A feed sync payload (types 0x40–0x44) addressed to this node, still sealed; the
        /// packet's type and mesh key say which link it belongs to.
        case feed(payload: [UInt8])
        /// A neighbour's announce carried a feed presence tag (feed.md 8.2), for the node to
        /// match against its contacts' presence keys with the packet's mesh key.
        case presence(tag: [UInt8])
    }

    public let packet: Packet
    /// The link it arrived on.
    public let link: LinkID
    public let content: Content
}

/// The counters `burrow mesh status` prints.
public struct MeshCounters: Sendable, Equatable {
    public var framesIn = 0
    public var framesOut = 0
    public var delivered = 0
    public var forwarded = 0
    public var duplicates = 0
    /// Refusals by spec name (section 4).
    public var dropped: [String: Int] = [:]

    public init() {}

    mutating func drop(_ error: MeshError) {
        dropped[error.rawValue, default: 0] += 1
        if error == .duplicate { duplicates += 1 }
    }
}

/// What the router knows of a neighbour, from its latest announce.
public struct PeerInfo: Sendable, Equatable {
    public let id: MeshID
    public var capabilities: Capabilities
    public var neighbours: [MeshID]
    public var nickname: String?
    /// The receiver's clock at the latest announce.
    public var lastHeard: UInt64
}

/// One link as the router sees it.
public struct LinkStatus: Sendable, Equatable {
    public let link: LinkID
    public let mtu: Int
    public let peers: [PeerInfo]
    /// For a receive link, the link whose air it shares (`linkUp(_:mtu:sendsOn:now:)`).
    public var sendsOn: LinkID? = nil
}
