@_spi(Conformance) import MLS

/// mlswg `tree-operations.json`: applying one Add, Update or Remove proposal to a ratchet tree
/// gives the expected tree and tree hash.
///
/// These vectors carry no group id, so leaf signatures (which bind it) cannot be checked: the
/// tree before is validated structurally (parent hashes, unmerged leaves, key uniqueness).
enum TreeOperationsConformance {
    static func run(_ cases: [[String: Any]]) -> ConformanceReport {
        ConformanceReport.forEachSuiteCase(cases, file: "tree-operations") { v, _, _ in try check(v) }
    }

    static func check(_ v: VectorCase) throws {
        var tree = try RatchetTree(verifyingStructureOf: try UnverifiedRatchetTree(tlsSerialized: try v.bytes("tree_before")))
        guard tree.treeHash == (try v.bytes("tree_hash_before")) else { throw ConformanceCaseError.mismatch("tree_hash_before") }

        let sender = try v.int("proposal_sender")
        guard let senderIndex = UInt32(exactly: sender) else { throw ConformanceCaseError.malformed("proposal_sender") }
        switch try Proposal(tlsSerialized: try v.bytes("proposal")) {
        case .add(let add):
            tree.add(add.keyPackage.leafNode)
        case .update(let update):
            try tree.update(LeafIndex(senderIndex), with: update.leafNode)
        case .remove(let remove):
            try tree.remove(LeafIndex(remove.removed))
        case let other:
            throw ConformanceCaseError.unsupported("proposal type \(other.proposalType) does not change the tree")
        }

        guard tree.tlsSerialized == (try v.bytes("tree_after")) else { throw ConformanceCaseError.mismatch("tree_after") }
        guard tree.treeHash == (try v.bytes("tree_hash_after")) else { throw ConformanceCaseError.mismatch("tree_hash_after") }
    }
}
