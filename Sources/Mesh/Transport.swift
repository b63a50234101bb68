/// What a link layer reports to the node (11): links coming and going, and frames.
public enum TransportEvent: Sendable, Equatable {
    /// A link is up with its MTU (20–509): a BLE connection (ATT MTU − 3), the notify link,
    /// or a listed UDP port.
    case linkUp(LinkID, mtu: Int)
    /// A receive link sharing another link's air (11.1: a central writing to our peripheral):
    /// its frames are budgeted and reassembled on their own (7.4, 5), and what is sent to its
    /// peers goes out on `sendsOn`. Up again with a new MTU, it keeps its state.
    case receiveLinkUp(LinkID, mtu: Int, sendsOn: LinkID)
    case linkDown(LinkID)
    /// One frame read from a link (≤ 509 bytes; the router checks everything else).
    case frame(LinkID, [UInt8])
}

/// A link layer (BlueZ, the UDP loopback radio): a dumb pipe moving opaque frames. Encryption,
/// identity and routing happen above it, in `MeshRouter`; the node feeds `events` to the router
/// and writes the router's `.transmit` actions with `send`.
public protocol MeshTransport: Sendable {
    /// `"bluez"`, `"udp"`: what `burrow mesh status` prints as `transport`.
    var name: String { get }
    /// Link and frame events, in arrival order, until `stop`.
    var events: AsyncStream<TransportEvent> { get }
    /// Writes one frame on a link; a frame over the link's MTU is a caller bug and is refused.
    func send(_ frame: [UInt8], on link: LinkID) async throws
    func stop() async
}

/// A transport that can end one of its links when the router asks (`MeshAction.close`: the
/// duplicate of another connection to the same node, Docs/protocols/mesh.md 11.1). BlueZ can; the UDP radio
/// cannot and need not (its links are the command line's, one per peer port, so two nodes
/// never share two of them).
public protocol LinkClosing {
    /// Ends the connection behind `link`; its `linkDown` follows on `events`.
    func close(_ link: LinkID) async
}

/// A transport whose links have roles (`burrow mesh status`'s `role`): BlueZ has central
/// connections and the peripheral's notify link; every UDP link is `udp`.
public protocol LinkRoleReporting {
    func role(of link: LinkID) -> String
}
