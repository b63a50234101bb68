import SeededRandom

/// A mesh topology: nodes and undirected edges, each edge one link at both ends.
public struct Topology: Sendable {
    public struct Edge: Sendable, Hashable {
        public let a: Int
        public let b: Int
        public let mtu: Int

        public init(_ a: Int, _ b: Int, mtu: Int = 185) {
            self.a = min(a, b)
            self.b = max(a, b)
            self.mtu = mtu
        }
    }

    public let nodeCount: Int
    public let edges: [Edge]

    public init(nodeCount: Int, edges: [Edge]) {
        self.nodeCount = nodeCount
        self.edges = edges
    }

    public var meanDegree: Double { nodeCount == 0 ? 0 : 2 * Double(edges.count) / Double(nodeCount) }

    public func neighbours(of node: Int) -> [Int] {
        edges.compactMap { $0.a == node ? $0.b : ($0.b == node ? $0.a : nil) }
    }

    /// Hop distances from `source` (breadth-first); `nil` for unreachable nodes.
    public func hops(from source: Int) -> [Int?] {
        var adjacency = [[Int]](repeating: [], count: nodeCount)
        for edge in edges {
            adjacency[edge.a].append(edge.b)
            adjacency[edge.b].append(edge.a)
        }
        var distance = [Int?](repeating: nil, count: nodeCount)
        guard source < nodeCount else { return distance }
        distance[source] = 0
        var queue = [source], head = 0
        while head < queue.count {
            let node = queue[head]
            head += 1
            for next in adjacency[node] where distance[next] == nil {
                distance[next] = (distance[node] ?? 0) + 1
                queue.append(next)
            }
        }
        return distance
    }

    public var isConnected: Bool { nodeCount == 0 || hops(from: 0).allSatisfy { $0 != nil } }

    /// A connected random geometric graph: `nodeCount` points uniform in the unit square, an
    /// edge between points closer than the radius giving `meanDegree` on average (ignoring the
    /// border). Redrawn until connected (up to 1000 draws).
    public static func randomGeometric(
        nodeCount: Int, meanDegree: Double, mtu: Int = 185, using rng: inout SplitMix64
    ) -> Topology {
        guard nodeCount >= 2, meanDegree > 0 else { return Topology(nodeCount: max(nodeCount, 0), edges: []) }
        // Points near the border have fewer neighbours; 1.10 compensates roughly for 50 nodes.
        let radius = (meanDegree / (Double(nodeCount - 1) * Double.pi)).squareRoot() * 1.10
        var last = Topology(nodeCount: nodeCount, edges: [])
        // Sparse requests may never give a connected graph: the 1000th draw is returned as is.
        for _ in 0..<1000 {
            let points = (0..<nodeCount).map { _ in (rng.unit(), rng.unit()) }
            var edges: [Edge] = []
            for i in 0..<nodeCount {
                for j in (i + 1)..<nodeCount {
                    let dx = points[i].0 - points[j].0, dy = points[i].1 - points[j].1
                    if dx * dx + dy * dy < radius * radius { edges.append(Edge(i, j, mtu: mtu)) }
                }
            }
            last = Topology(nodeCount: nodeCount, edges: edges)
            if last.isConnected { return last }
        }
        return last
    }
}
