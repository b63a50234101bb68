/// Validation of a received ratchet tree (RFC 9420 §12.4.3.1 "Verify the integrity of the
/// ratchet tree", §7.9.2, §7.3's uniqueness rules).
extension RatchetTree {
    /// The checks that need no signatures: unmerged-leaves bookkeeping, key uniqueness and
    /// parent-hash validity of every non-blank parent node.
    func verifyStructure() throws {
        try verifyUnmergedLeaves()
        try verifyKeyUniqueness()
        try verifyParentHashes()
    }

    /// For each non-blank parent P and each entry L of its `unmerged_leaves` (RFC 9420
    /// §12.4.3.1): the list is strictly increasing, L is a non-blank leaf below P, and every
    /// non-blank node between L and P lists L too.
    func verifyUnmergedLeaves() throws {
        for i in parents.indices {
            guard let p = parents[i] else { continue }
            let node = NodeIndex(2 * i + 1)
            var previous: LeafIndex?
            for leaf in p.unmergedLeaves {
                if let previous, previous >= leaf {
                    throw MLSError.invalidRatchetTree("unmerged leaves of parent \(node.value) are not strictly increasing")
                }
                previous = leaf
                guard size.contains(leaf), node.subtreeContains(leaf) else {
                    throw MLSError.invalidRatchetTree("parent \(node.value) lists \(leaf) which is not below it")
                }
                guard leaves[Int(leaf.value)] != nil else {
                    throw MLSError.invalidRatchetTree("parent \(node.value) lists blank \(leaf) as unmerged")
                }
                for between in size.directPath(of: leaf) {
                    if between == node { break }
                    if let q = parents[between.value >> 1], !q.unmergedLeaves.contains(leaf) {
                        throw MLSError.invalidRatchetTree(
                            "\(leaf) is unmerged at parent \(node.value) but not at parent \(between.value) below it")
                    }
                }
            }
        }
    }

    /// Encryption keys are unique across all nodes; signature keys across all leaves.
    func verifyKeyUniqueness() throws {
        var encryptionKeys = Set<[UInt8]>()
        var signatureKeys = Set<[UInt8]>()
        for x in 0..<size.nodeCount {
            let index = NodeIndex(x)
            guard let key = encryptionKey(at: index) else { continue }
            guard encryptionKeys.insert(key).inserted else { throw MLSError.duplicateEncryptionKey(node: x) }
            if index.isLeaf, let leaf = leaves[x >> 1], !signatureKeys.insert(leaf.signatureKey).inserted {
                throw MLSError.duplicateSignatureKey(leaf: UInt32(x >> 1))
            }
        }
    }

    /// Whether `key` is the encryption key of any node (for the §12.4.2 rule that an
    /// UpdatePath's keys are new to the tree).
    public func containsEncryptionKey(_ key: [UInt8]) -> Bool {
        leaves.contains { $0?.encryptionKey == key } || parents.contains { $0?.encryptionKey == key }
    }
}

extension RatchetTree {
    /// Validates everything but leaf signatures: for trees whose group id is unknown, as in the
    /// mlswg tree-operations vectors. Not for trees received in a group.
    @_spi(Conformance)
    public init(verifyingStructureOf unverified: UnverifiedRatchetTree) throws {
        let tree = unverified.padded()
        try tree.verifyStructure()
        self = tree
    }
}
