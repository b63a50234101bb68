/// What the flooding rule (7.1) knows about one link: its peers' ids (empty when no announce
/// has named one: such a link is never skipped) and, per peer, its neighbour list if the
/// announce carrying it is at most 25 s old.
public struct FloodLink: Sendable, Hashable {
    public let link: LinkID
    public let peers: [MeshID]
    public let neighbours: [MeshID: [MeshID]]

    public init(link: LinkID, peers: [MeshID], neighbours: [MeshID: [MeshID]] = [:]) {
        self.link = link
        self.peers = peers
        self.neighbours = neighbours
    }
}

/// The forwarding rule of section 7.1 as a pure function, so the vectors and the router use
/// one definition.
public enum FloodingRule {
    /// Whether a received packet is forwarded at all (7.1): by a relay, received with TTL ≥ 2,
    /// not link-local, not addressed to this node.
    public static func forwards(type: PacketType, ttl: UInt8, addressedToMe: Bool, relay: Bool = true) -> Bool {
        relay && ttl >= 2 && !type.isLinkLocal && !addressedToMe
    }

    /// The whole decision for one packet: `ingress` nil for a packet originated here (it goes
    /// on every link, or the recipient's link), else the rule for a received packet heard on
    /// `ingress` and, during its jitter, on `duplicatesFrom`.
    public static func decide(
        type: PacketType, ttl: UInt8, recipient: MeshID?, addressedToMe: Bool, links: [FloodLink],
        ingress: LinkID?, duplicatesFrom: [LinkID] = [], pruned: Bool = true
    ) -> [LinkID] {
        guard let ingress else { return self.links(recipient: recipient, links: links, heardFrom: []) }
        guard forwards(type: type, ttl: ttl, addressedToMe: addressedToMe) else { return [] }
        return self.links(recipient: recipient, links: links, heardFrom: Set([ingress] + duplicatesFrom), pruned: pruned)
    }

    /// The links a packet goes out on.
    ///
    /// - `heardFrom`: the links it arrived on (first arrival and duplicates during the jitter);
    ///   empty for a packet originated here.
    /// - `pruned`: `false` gives plain flooding (the duplicate rule alone), for comparison.
    /// - `covering`: the heard-from links whose peers' neighbour lists count as covered; `nil`
    ///   means all of `heardFrom` (the rule as written). The router passes the links a copy came
    ///   from with at least the TTL it will send, so a neighbour is never left to a copy that
    ///   reaches less far than ours would.
    public static func links(
        recipient: MeshID?, links: [FloodLink], heardFrom: Set<LinkID>, covering: Set<LinkID>? = nil, pruned: Bool = true
    ) -> [LinkID] {
        // A recipient that is a neighbour: its link only (never back where it came from).
        if let recipient, let direct = links.first(where: { $0.peers.contains(recipient) }) {
            return heardFrom.contains(direct.link) ? [] : [direct.link]
        }
        if heardFrom.isEmpty { return links.map(\.link).sorted() }
        var covered = Set<MeshID>()
        if pruned {
            let covering = covering ?? heardFrom
            for link in links where heardFrom.contains(link.link) {
                for peer in link.peers {
                    covered.insert(peer)
                    if covering.contains(link.link) { covered.formUnion(link.neighbours[peer] ?? []) }
                }
            }
        }
        return links.filter { link in
            guard !heardFrom.contains(link.link) else { return false }
            if link.peers.isEmpty { return true }
            return !link.peers.allSatisfy(covered.contains)
        }.map(\.link).sorted()
    }
}
