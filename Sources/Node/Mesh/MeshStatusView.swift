import Mesh

/// `burrow mesh status`: the transport, this node's mesh id, each link with its peers (from
/// their announces), the store and the counters of Docs/protocols/mesh.md section 12.
public struct MeshStatusView: Sendable {
    public struct Link: Sendable {
        public let link: UInt32
        /// `central`, `peripheral` or `udp`.
        public let role: String
        public let mtu: Int
        public let peers: [PeerInfo]
    }

    public let transport: String
    /// `("port", "7801")` for udp, `("adapter", "hci0")` for bluez.
    public let place: (String, String)?
    public let meshID: String
    public let links: [Link]
    public let storedPackets: Int
    public let storedBytes: Int
    public let counters: MeshCounters
}
