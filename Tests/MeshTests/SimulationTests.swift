@testable import Mesh
import Nostr
import XCTest

/// The router driven by the in-process radio (11.3): real routers, simulated air.
final class SimulationTests: XCTestCase {
    let start = MeshFixture.now

    func event(_ n: Int, keys: Keys, at: UInt64, rng: inout MeshSplitMix64) throws -> Event {
        try Event.sign(kind: 445, content: "group message \(n) " + String(repeating: "x", count: 120), tags: [["h", "00"]],
                       createdAt: Int64(at / 1000), keys: keys, rng: &rng)
    }

    /// 50 nodes, random geometric graph, 10 % frame loss (and some duplication and reordering):
    /// carried packets reach ≥ 99 % of the nodes within TTL, exactly once each.
    func testFiftyNodesTenPercentLossDeliverWithinTTL() throws {
        var rng = MeshSplitMix64(seed: 2026)
        let topology = Topology.randomGeometric(nodeCount: 50, meanDegree: 6.5, using: &rng)
        var simulation = MeshSimulation(
            topology: topology, seed: 11, impairment: .init(loss: 0.10, duplication: 0.02, latency: 5...40)
        )
        simulation.run(until: start + 22_000)
        let keys = Keys.generate(using: &rng)
        var sent: [(packet: Packet, source: Int)] = []
        for n in 0..<10 {
            let source = Int(rng.next() % 50)
            let e = try event(n, keys: keys, at: simulation.now, rng: &rng)
            try simulation.perform(on: source) { router, now, actions in
                sent.append((try router.sendEvent(e, now: now, actions: &actions), source))
            }
            simulation.run(until: simulation.now + 1_000)
        }
        simulation.run(until: start + 5 * 60_000)

        var expected = 0, delivered = 0, live = 0
        for (packet, source) in sent {
            let hops = topology.hops(from: source)
            let within = Set((0..<50).filter { $0 != source && (hops[$0] ?? .max) <= 7 })
            let receivers = simulation.deliveries.filter { $0.packet == packet.id }
            XCTAssertEqual(receivers.count, Set(receivers.map(\.node)).count, "a node delivered a packet twice")
            expected += within.count
            delivered += within.intersection(receivers.map(\.node)).count
            live += receivers.filter { $0.at < packet.timestamp + 2_000 }.count
        }
        let ratio = Double(delivered) / Double(expected)
        print("mesh simulation: |E| \(topology.edges.count), degree \(topology.meanDegree), delivery \(delivered)/\(expected) = \(ratio), live (2 s, before sync) \(live), frames \(simulation.framesSent), lost \(simulation.framesLost)")
        XCTAssertGreaterThanOrEqual(ratio, 0.99)
        XCTAssertGreaterThan(simulation.framesLost, 0)
        for router in simulation.routers {
            XCTAssertLessThanOrEqual(router.footprint.seen, SeenCache.defaultCapacity)
            XCTAssertEqual(router.footprint.pending, 0)
        }
    }

    /// Section 7.2: within 2|E| always, and pruning well under plain flooding.
    func testStormBoundPrunedVersusPlain() {
        let result = FloodExperiment.run(graphs: 6, nodes: 50, meanDegree: 6.5, seed: 7)
        print("flood experiment: \(result)")
        XCTAssertEqual(result.graphs, 6)
        XCTAssertLessThanOrEqual(result.worstBoundRatio, 1.0, "a flood exceeded 2|E| transmissions")
        XCTAssertEqual(result.prunedComplete, 6, "pruned floods must reach every node within TTL without loss")
        XCTAssertEqual(result.plainComplete, 6)
        XCTAssertLessThanOrEqual(result.ratio, 0.6)
        XCTAssertLessThan(result.prunedPerTwoE, 0.45)
    }

    /// TTL bounds reach, live and by sync: on a 10-node line a packet from node 0 reaches
    /// nodes 1–7 and never 8 or 9, however long sync runs.
    func testTTLBoundsReachOnALine() throws {
        let topology = Topology(nodeCount: 10, edges: (0..<9).map { Topology.Edge($0, $0 + 1) })
        var simulation = MeshSimulation(topology: topology, seed: 3)
        simulation.run(until: start + 22_000)
        var rng = MeshSplitMix64(seed: 4)
        let e = try event(0, keys: Keys.generate(using: &rng), at: simulation.now, rng: &rng)
        var packet: Packet?
        try simulation.perform(on: 0) { router, now, actions in packet = try router.sendEvent(e, now: now, actions: &actions) }
        simulation.run(until: start + 4 * 60_000)
        guard let packet else { return XCTFail("not sent") }
        XCTAssertEqual(simulation.receivers(of: packet.id), Set(1...7))
        // One transmission per link crossed: 7 links forward, the last node (7, TTL 1) does not.
        XCTAssertEqual(simulation.transmissions[packet.id.id8], 7)
    }

    /// Store-and-forward: a DM sent while its recipient's only link is down arrives by sync
    /// soon after the link comes back.
    func testSyncAfterPartitionHeals() throws {
        let topology = Topology(nodeCount: 3, edges: [Topology.Edge(0, 1), Topology.Edge(1, 2)])
        var simulation = MeshSimulation(topology: topology, seed: 5)
        let cKey = [UInt8](repeating: 0xCC, count: 32)
        simulation.perform(on: 2) { router, _, _ in router.dmIdentityKeys = [cKey] }
        simulation.partition(edge: 1, from: start + 15_000, until: start + 90_000)
        simulation.run(until: start + 20_000)
        var packet: Packet?
        try simulation.perform(on: 0) { router, now, actions in
            packet = try router.sendDM(Array("hello C".utf8), toIdentityKey: cKey, now: now, actions: &actions)
        }
        simulation.run(until: start + 89_999)
        guard let packet else { return XCTFail("not sent") }
        XCTAssertTrue(simulation.receivers(of: packet.id).isEmpty, "C is cut off")
        XCTAssertNotNil(simulation.routers[1].store.packet(id8: packet.id.id8), "B carries it")
        simulation.run(until: start + 93_000)
        let arrivals = simulation.deliveries.filter { $0.packet == packet.id }
        XCTAssertEqual(arrivals.map(\.node), [2], "C gets it once, by sync")
        XCTAssertLessThanOrEqual((arrivals.first?.at ?? .max) - (start + 90_000), 2_000)
        // A replay of the packet into C later is refused.
        var actions: [MeshAction] = []
        let replay = simulation.routers[2]
        var c = replay
        XCTAssertEqual(c.receive(packet.encoded(ttl: 5), on: LinkID(1), now: start + 100_000, actions: &actions), .duplicate)
        XCTAssertTrue(actions.isEmpty)
    }
}
