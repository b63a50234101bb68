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
    /// Sorted lists make each membership test a binary search, so a hostile tree costs
    /// O(U log² N) for U entries in all, never quadratic.
    func verifyUnmergedLeaves() throws {
        for i in parents.indices {
            guard let p = parents[i] else { continue }
            for (a, b) in zip(p.unmergedLeaves, p.unmergedLeaves.dropFirst()) where a >= b {
                throw MLSError.invalidRatchetTree("unmerged leaves of parent \(2 * i + 1) are not strictly increasing")
            }
        }
        for i in parents.indices {
            guard let p = parents[i] else { continue }
            let node = NodeIndex(2 * i + 1)
            for leaf in p.unmergedLeaves {
                guard size.contains(leaf), node.subtreeContains(leaf) else {
                    throw MLSError.invalidRatchetTree("parent \(node.value) lists \(leaf) which is not below it")
                }
                guard leaves[Int(leaf.value)] != nil else {
                    throw MLSError.invalidRatchetTree("parent \(node.value) lists blank \(leaf) as unmerged")
                }
                for between in size.directPath(of: leaf) {
                    if between == node { break }
                    if let q = parents[between.value >> 1], !q.unmergedLeaves.sortedContains(leaf) {
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
        encryptionKeyCounts[key] != nil
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

extension RatchetTree {
    /// Validates a received tree as a joiner must (RFC 9420 §12.4.3.1), all but the tree-hash
    /// comparison, which needs the GroupInfo: every non-blank parent is parent-hash valid,
    /// unmerged leaves are consistent, encryption and signature keys are unique, and every leaf
    /// passes `validateLeafNode` at its own position (signature with `groupID`, capabilities,
    /// `requiredCapabilities` of the GroupContext when present). Leaf lifetimes are not checked:
    /// RFC 9420 leaves that optional for trees and OpenMLS 0.8.1 skips it.
    public init(verifying unverified: UnverifiedRatchetTree, groupID: [UInt8], suite: CipherSuiteProvider,
                requiredCapabilities: RequiredCapabilities? = nil) throws {
        let tree = unverified.padded()
        try tree.verifyStructure()
        let members = tree.members
        // Every member supporting every credential type in use is the pairwise rule of §7.3,
        // checked in O(N) instead of for each pair.
        let credentialTypes = Set(members.map(\.leaf.credential.credentialType))
        for (index, leaf) in members {
            try leaf.validateOwnContent(at: index, groupID: groupID, suite: suite, requiredCapabilities: requiredCapabilities)
            for type in credentialTypes where !leaf.capabilities.supportsCredential(type) {
                throw MLSError.invalidLeafNode(leaf: index.value, "capabilities lack credential type \(type) used in the group")
            }
        }
        self = tree
    }

    /// Leaf node validation (RFC 9420 §7.3, as OpenMLS 0.8.1 applies it) for a leaf at `index`
    /// of this tree, whether already in it or about to enter it by Update or Commit:
    ///
    /// - the signature verifies under the leaf's key, with `groupID` and `index` for update and
    ///   commit sources;
    /// - its extensions are all listed in its capabilities, and so is its credential type;
    /// - its capabilities include the group's cipher suite, MLS 1.0, and `requiredCapabilities`;
    /// - its credential type is supported by every other member, and it supports theirs.
    ///
    /// Source-specific rules (which source a proposal or path requires, a changed encryption
    /// key, lifetimes of KeyPackages) belong to the caller.
    public func validateLeafNode(_ leaf: LeafNode, at index: LeafIndex, groupID: [UInt8], suite: CipherSuiteProvider,
                                 requiredCapabilities: RequiredCapabilities? = nil) throws {
        try leaf.validateOwnContent(at: index, groupID: groupID, suite: suite, requiredCapabilities: requiredCapabilities)
        let credentialType = leaf.credential.credentialType
        for (other, member) in members where other != index {
            guard member.capabilities.supportsCredential(credentialType),
                  leaf.capabilities.supportsCredential(member.credential.credentialType)
            else {
                throw MLSError.invalidLeafNode(leaf: index.value, "credential types not mutually supported with \(other)")
            }
        }
    }
}

extension LeafNode {
    /// The checks of §7.3 that need only the leaf and the group's parameters.
    func validateOwnContent(at index: LeafIndex, groupID: [UInt8], suite: CipherSuiteProvider,
                            requiredCapabilities: RequiredCapabilities?) throws {
        let leaf = self
        do {
            try leaf.verifySignature(suite: suite, position: TreePosition(groupID: groupID, leafIndex: index.value))
        } catch {
            throw MLSError.invalidLeafSignature(leaf: index.value)
        }
        let capabilities = leaf.capabilities
        for ext in leaf.extensions where !capabilities.supportsExtension(ext.extensionType) {
            throw MLSError.invalidLeafNode(leaf: index.value, "extension \(ext.extensionType) is not in its capabilities")
        }
        let credentialType = leaf.credential.credentialType
        guard capabilities.supportsCredential(credentialType) else {
            throw MLSError.invalidLeafNode(leaf: index.value, "credential type \(credentialType) is not in its capabilities")
        }
        guard capabilities.cipherSuites.contains(suite.suite), capabilities.versions.contains(.mls10) else {
            throw MLSError.invalidLeafNode(leaf: index.value, "capabilities lack the group's cipher suite or MLS 1.0")
        }
        if let requiredCapabilities, !capabilities.satisfies(requiredCapabilities) {
            throw MLSError.invalidLeafNode(leaf: index.value, "capabilities do not meet the group's required capabilities")
        }
    }
}
