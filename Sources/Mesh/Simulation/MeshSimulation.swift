import Nostr
import SeededRandom

/// An in-process radio (11.3): N routers joined by a topology, with per-link MTU, seeded loss,
/// duplication, latency (hence reordering), scheduled partitions and a virtual clock. Every
/// frame goes through the real router code; only the air is simulated.
public struct MeshSimulation: Sendable {
    public typealias Router = MeshRouter<SplitMix64>

    public struct Impairment: Sendable {
        /// Probability that a frame is lost on a link.
        public var loss: Double = 0
        /// Probability that a frame arrives twice.
        public var duplication: Double = 0
        /// Per-frame latency in ms, drawn uniformly.
        public var latency: ClosedRange<UInt64> = 5...15
        /// Whether frames on one link may overtake each other. A BLE link (ATT) delivers in
        /// order, so by default a frame never arrives before the one sent before it on the same
        /// link; with reordering each frame's latency is independent (as over UDP with delay).
        public var reordering = false

        public init(loss: Double = 0, duplication: Double = 0, latency: ClosedRange<UInt64> = 5...15, reordering: Bool = false) {
            self.loss = loss
            self.duplication = duplication
            self.latency = latency
            self.reordering = reordering
        }
    }

    /// A delivery seen by the simulation: node, packet id, content kind, time.
    public struct Delivery: Sendable, Hashable {
        public let node: Int
        public let packet: PacketID
        public let type: PacketType
        public let at: UInt64
    }

    enum Event: Sendable {
        case frame(node: Int, link: LinkID, bytes: [UInt8])
        case wake(node: Int)
        case linkDown(edge: Int)
        case linkUp(edge: Int)
    }

    public let topology: Topology
    public var impairment: Impairment
    public private(set) var routers: [Router]
    public private(set) var now: UInt64
    public private(set) var deliveries: [Delivery] = []
    /// Deliveries with their content, when `keepContents` is set (invite exchanges in tests).
    public var keepContents = false
    public private(set) var inbox: [(node: Int, delivery: MeshDelivery)] = []
    /// Frames put on the air, by packet id8 (fragments counted once per packet and link):
    /// what the storm bound (7.2) is about.
    public private(set) var transmissions: [MeshID: Int] = [:]
    public private(set) var framesSent = 0
    public private(set) var framesLost = 0
    /// Connections a router closed (`MeshAction.close`), in order: the node and the edge.
    public private(set) var closes: [(node: Int, edge: Int)] = []

    var air: SplitMix64
    var queue: [(time: UInt64, seq: UInt64, event: Event)] = []
    var sequence: UInt64 = 0
    var wakeAt: [UInt64?]
    var down: Set<Int> = []
    /// Latest arrival time per link direction, for in-order links.
    var lastArrival: [Int: UInt64] = [:]

    public init(
        topology: Topology, seed: UInt64, impairment: Impairment = Impairment(),
        configuration: MeshConfiguration = MeshConfiguration(), start: UInt64 = 1_767_225_600_000
    ) {
        self.topology = topology
        self.impairment = impairment
        now = start
        air = SplitMix64(seed: seed ^ 0xA5A5_A5A5_5A5A_5A5A)
        var keys = SplitMix64(seed: seed)
        routers = (0..<topology.nodeCount).map { i in
            let identity = MeshIdentity(now: start, using: &keys)
            return Router(identity: identity, configuration: configuration, now: start,
                          random: SplitMix64(seed: seed &+ UInt64(i) &* 0x9E37_79B9))
        }
        wakeAt = Array(repeating: nil, count: topology.nodeCount)
        for (index, edge) in topology.edges.enumerated() {
            routers[edge.a].linkUp(LinkID(UInt32(index)), mtu: edge.mtu, now: start)
            routers[edge.b].linkUp(LinkID(UInt32(index)), mtu: edge.mtu, now: start)
        }
        for node in routers.indices { scheduleWake(node) }
    }

    /// Takes edge `edge` down over `[from, until)`: both ends see the link drop and come back.
    public mutating func partition(edge: Int, from: UInt64, until: UInt64) {
        guard topology.edges.indices.contains(edge), from < until else { return }
        push(from, .linkDown(edge: edge))
        push(until, .linkUp(edge: edge))
    }

    /// Runs an action on node `node` at the current time (originating a packet, say).
    public mutating func perform(on node: Int, _ body: (inout Router, UInt64, inout [MeshAction]) throws -> Void) rethrows {
        guard routers.indices.contains(node) else { return }
        var actions: [MeshAction] = []
        try body(&routers[node], now, &actions)
        apply(actions, from: node)
        scheduleWake(node)
    }

    /// Advances the virtual clock to `time`, delivering every frame and timer due until then.
    public mutating func run(until time: UInt64) {
        while let next = popNext(notAfter: time) {
            now = max(now, next.time)
            switch next.event {
            case .frame(let node, let link, let bytes):
                guard !down.contains(Int(link.value)) else { continue }
                var actions: [MeshAction] = []
                routers[node].receive(bytes, on: link, now: now, actions: &actions)
                apply(actions, from: node)
                scheduleWake(node)
            case .wake(let node):
                guard let due = wakeAt[node], due <= now else { continue }
                wakeAt[node] = nil
                var actions: [MeshAction] = []
                routers[node].tick(now: now, actions: &actions)
                apply(actions, from: node)
                scheduleWake(node)
            case .linkDown(let edge):
                down.insert(edge)
                let e = topology.edges[edge]
                routers[e.a].linkDown(LinkID(UInt32(edge)))
                routers[e.b].linkDown(LinkID(UInt32(edge)))
            case .linkUp(let edge):
                down.remove(edge)
                let e = topology.edges[edge]
                for node in [e.a, e.b] {
                    routers[node].linkUp(LinkID(UInt32(edge)), mtu: e.mtu, now: now)
                    scheduleWake(node)
                }
            }
        }
        now = max(now, time)
    }

    /// Nodes that delivered the packet.
    public func receivers(of id: PacketID) -> Set<Int> {
        Set(deliveries.filter { $0.packet == id }.map(\.node))
    }

    /// Takes the kept deliveries of `node` (oldest first).
    public mutating func takeInbox(of node: Int) -> [MeshDelivery] {
        let mine = inbox.filter { $0.node == node }.map(\.delivery)
        inbox.removeAll { $0.node == node }
        return mine
    }

    public mutating func resetCounts() {
        transmissions = [:]
        framesSent = 0
        framesLost = 0
    }

    // MARK: The air

    private mutating func apply(_ actions: [MeshAction], from node: Int) {
        for action in actions {
            switch action {
            case .deliver(let delivery):
                deliveries.append(Delivery(node: node, packet: delivery.packet.id, type: delivery.packet.type, at: now))
                if keepContents { inbox.append((node, delivery)) }
            case .close(let link):
                // The connection ends for good: both ends see the link go down.
                let edgeIndex = Int(link.value)
                guard edgeIndex < topology.edges.count, !down.contains(edgeIndex) else { continue }
                closes.append((node, edgeIndex))
                down.insert(edgeIndex)
                let edge = topology.edges[edgeIndex]
                routers[edge.a].linkDown(link)
                routers[edge.b].linkDown(link)
            case .transmit(let link, let frame):
                let edgeIndex = Int(link.value)
                guard edgeIndex < topology.edges.count, !down.contains(edgeIndex) else { continue }
                let edge = topology.edges[edgeIndex]
                let peer = edge.a == node ? edge.b : edge.a
                count(frame)
                framesSent += 1
                if air.unit() < impairment.loss {
                    framesLost += 1
                    continue
                }
                let copies = air.unit() < impairment.duplication ? 2 : 1
                for _ in 0..<copies {
                    let span = impairment.latency.upperBound - impairment.latency.lowerBound
                    var at = now &+ impairment.latency.lowerBound + UInt64(air.unit() * Double(span + 1))
                    if !impairment.reordering {
                        let direction = edgeIndex * 2 + (edge.a == node ? 0 : 1)
                        at = max(at, lastArrival[direction, default: 0])
                        lastArrival[direction] = at
                    }
                    push(at, .frame(node: peer, link: link, bytes: frame))
                }
            }
        }
    }

    /// Counts a packet once per link transmission: whole packets, and fragment 0 of a packet.
    private mutating func count(_ frame: [UInt8]) {
        if FragmentFrame.isFragment(frame) {
            guard let fragment = try? FragmentFrame.decode(frame), fragment.index == 0 else { return }
            transmissions[MeshID(fragment.fragmentID), default: 0] += 1
        } else if let packet = try? UnverifiedPacket.decode(frame) {
            transmissions[packet.id.id8, default: 0] += 1
        }
    }

    private mutating func scheduleWake(_ node: Int) {
        guard let deadline = routers[node].nextDeadline else { return }
        let at = max(deadline, now)
        if let current = wakeAt[node], current <= at { return }
        wakeAt[node] = at
        push(at, .wake(node: node))
    }

    private mutating func push(_ time: UInt64, _ event: Event) {
        sequence += 1
        queue.append((time, sequence, event))
        var i = queue.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard Self.before(queue[i], queue[parent]) else { break }
            queue.swapAt(i, parent)
            i = parent
        }
    }

    private mutating func popNext(notAfter limit: UInt64) -> (time: UInt64, seq: UInt64, event: Event)? {
        guard let top = queue.first, top.time <= limit else { return nil }
        let last = queue.removeLast()
        if !queue.isEmpty {
            queue[0] = last
            var i = 0
            while true {
                let l = 2 * i + 1, r = l + 1
                var smallest = i
                if l < queue.count, Self.before(queue[l], queue[smallest]) { smallest = l }
                if r < queue.count, Self.before(queue[r], queue[smallest]) { smallest = r }
                guard smallest != i else { break }
                queue.swapAt(i, smallest)
                i = smallest
            }
        }
        return top
    }

    private static func before(_ a: (time: UInt64, seq: UInt64, event: Event), _ b: (time: UInt64, seq: UInt64, event: Event)) -> Bool {
        (a.time, a.seq) < (b.time, b.seq)
    }
}
