import Nostr
import SeededRandom

/// The storm-bound measurement of section 7.2, as a function `burrow-bench` can print: floods
/// of one nostr-event packet over random geometric graphs, counting packet transmissions (one
/// per link crossed, whatever the fragment count) with plain flooding (the duplicate rule
/// alone) and with pruning, after announces have spread fresh neighbour lists.
public enum FloodExperiment {
    public struct Result: Sendable, CustomStringConvertible {
        public var graphs = 0
        public var meanEdges = 0.0
        public var meanDegree = 0.0
        /// Transmissions per flood.
        public var plainMean = 0.0
        public var plainMax = 0
        public var prunedMean = 0.0
        public var prunedMax = 0
        /// Floods that reached every node within TTL (out of `graphs`).
        public var plainComplete = 0
        public var prunedComplete = 0
        /// The largest transmissions / 2|E| seen (the MUST bound is 1).
        public var worstBoundRatio = 0.0

        /// Pruned transmissions as a fraction of plain flooding's.
        public var ratio: Double { plainMean > 0 ? prunedMean / plainMean : 0 }
        /// Pruned transmissions as a fraction of 2|E| (the spec's "near 0.35").
        public var prunedPerTwoE: Double { meanEdges > 0 ? prunedMean / (2 * meanEdges) : 0 }

        public var description: String {
            let f = { (x: Double) in String(Int((x * 100).rounded())) }
            return "graphs \(graphs), |E| \(Int(meanEdges.rounded())), degree \(Double(Int(meanDegree * 10)) / 10): "
                + "plain \(Int(plainMean.rounded())) (max \(plainMax)), pruned \(Int(prunedMean.rounded())) (max \(prunedMax)), "
                + "pruned/plain \(f(ratio))%, pruned/2|E| \(f(prunedPerTwoE))%, complete \(prunedComplete)/\(graphs) pruned, "
                + "\(plainComplete)/\(graphs) plain"
        }
    }

    /// Runs `graphs` floods of each kind. Deterministic for a seed.
    public static func run(graphs: Int = 20, nodes: Int = 50, meanDegree: Double = 6.5, seed: UInt64 = 7) -> Result {
        var result = Result()
        guard nodes >= 2, graphs >= 1, meanDegree > 0 else { return result }
        var rng = SplitMix64(seed: seed)
        let start: UInt64 = 1_767_225_600_000
        var eventRNG = SplitMix64(seed: seed ^ 0x5EED)
        let keys = Keys.generate(using: &eventRNG)
        for g in 0..<graphs {
            let topology = Topology.randomGeometric(nodeCount: nodes, meanDegree: meanDegree, using: &rng)
            result.graphs += 1
            result.meanEdges += Double(topology.edges.count)
            result.meanDegree += topology.meanDegree
            let source = Int(rng.next() % UInt64(nodes))
            let reachable = topology.hops(from: source).filter { ($0 ?? .max) <= Int(MeshProtocol.maxTTL) }.count - 1
            for pruned in [false, true] {
                var configuration = MeshConfiguration()
                configuration.capabilities = [.relay, .dm]
                configuration.pruning = pruned
                var simulation = MeshSimulation(topology: topology, seed: seed &+ UInt64(g), configuration: configuration, start: start)
                // Two announce rounds: the second carries neighbour lists.
                simulation.run(until: start + 22_000)
                guard let event = try? Event.sign(
                    kind: 1059, content: "flood \(g)", tags: [["p", keys.publicKey.hex]],
                    createdAt: Int64((start + 22_000) / 1000), keys: keys, rng: &eventRNG)
                else { continue }
                var sent: Packet?
                simulation.perform(on: source) { router, now, actions in
                    sent = try? router.sendEvent(event, now: now, actions: &actions)
                }
                simulation.run(until: start + 25_000)
                guard let packet = sent else { continue }
                let count = simulation.transmissions[packet.id.id8] ?? 0
                let complete = simulation.receivers(of: packet.id).count >= reachable
                result.worstBoundRatio = max(result.worstBoundRatio, Double(count) / Double(2 * topology.edges.count))
                if pruned {
                    result.prunedMean += Double(count)
                    result.prunedMax = max(result.prunedMax, count)
                    if complete { result.prunedComplete += 1 }
                } else {
                    result.plainMean += Double(count)
                    result.plainMax = max(result.plainMax, count)
                    if complete { result.plainComplete += 1 }
                }
            }
        }
        let n = Double(max(result.graphs, 1))
        result.meanEdges /= n
        result.meanDegree /= n
        result.plainMean /= n
        result.prunedMean /= n
        return result
    }
}
