import MLS

/// mlswg `tree-math.json`: root, children, parent and sibling of every node for a leaf count.
enum TreeMathConformance {
    static func run(_ cases: [[String: Any]]) -> ConformanceReport {
        var report = ConformanceReport()
        for (i, object) in cases.enumerated() {
            report.record("tree-math[\(i)]", Result { try check(VectorCase(object)) })
        }
        return report
    }

    static func check(_ v: VectorCase) throws {
        let nLeaves = try v.int("n_leaves")
        guard let size = TreeSize(leafCount: nLeaves) else {
            throw ConformanceCaseError.malformed("n_leaves \(nLeaves) is not a tree size")
        }
        let nNodes = try v.int("n_nodes")
        guard size.nodeCount == nNodes else { throw ConformanceCaseError.mismatch("n_nodes \(size.nodeCount) ≠ \(nNodes)") }
        let root = try v.int("root")
        guard size.root.value == root else { throw ConformanceCaseError.mismatch("root \(size.root.value) ≠ \(root)") }

        let relations: [(String, (NodeIndex) -> NodeIndex?)] = [
            ("left", size.left(of:)), ("right", size.right(of:)),
            ("parent", size.parent(of:)), ("sibling", size.sibling(of:)),
        ]
        for (name, relation) in relations {
            let expected = try v.optionalInts(name)
            guard expected.count == nNodes else {
                throw ConformanceCaseError.malformed("'\(name)' has \(expected.count) entries for \(nNodes) nodes")
            }
            for (x, want) in expected.enumerated() {
                let got = relation(NodeIndex(x))?.value
                guard got == want else {
                    throw ConformanceCaseError.mismatch("\(name)(\(x)) = \(got.map(String.init) ?? "none"), expected \(want.map(String.init) ?? "none")")
                }
            }
        }
    }
}
