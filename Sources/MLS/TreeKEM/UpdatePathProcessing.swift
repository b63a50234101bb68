/// Processing a received UpdatePath (RFC 9420 §7.5, §12.4.2): merge its public part into the
/// tree, then decrypt the one path secret addressed to this member and derive the rest.
///
/// Like creation, two steps: `mergeUpdatePath` changes the tree (validating the path against
/// it); the caller then builds the provisional GroupContext from the new tree hash and passes
/// it to `TreeKEMPrivateKeys.processUpdatePath`.

/// What a member learns from a received UpdatePath.
public struct ProcessedUpdatePath: Sendable, CustomStringConvertible {
    /// The lowest node of the sender's filtered direct path above this member: where the
    /// decrypted path secret belongs.
    public let commonAncestor: NodeIndex
    /// The path secret this member decrypted (for `commonAncestor`).
    public let pathSecret: Secret
    /// `commit_secret` for the key schedule.
    public let commitSecret: Secret

    public var description: String { "ProcessedUpdatePath(at \(commonAncestor), secrets redacted)" }
}

extension RatchetTree {
    /// Validates a received UpdatePath against this tree (with the commit's proposals applied)
    /// and merges its public part (RFC 9420 §7.5 "merges UpdatePath into the tree"):
    ///
    /// - the sender is a member and the path has one node per filtered direct-path entry, each
    ///   with one ciphertext per resolution node of its copath child, `newMembers` excluded;
    /// - the leaf node's source is `commit`, its signature verifies with `groupID` and the
    ///   sender's index, and its encryption key differs from the sender's current one;
    /// - no public key of the path already appears in the tree;
    /// - the leaf's `parent_hash` equals the parent hash computed over the merged path.
    ///
    /// On error the tree is unchanged. Costs O(log N) hashes (no full-tree rehash).
    public mutating func mergeUpdatePath(_ updatePath: UpdatePath, from sender: LeafIndex, groupID: [UInt8],
                                         excluding newMembers: Set<LeafIndex>, suite: CipherSuiteProvider) throws {
        try requireMember(sender)
        let path = filteredDirectPath(of: sender)
        guard updatePath.nodes.count == path.count else {
            throw MLSError.invalidUpdatePath("\(updatePath.nodes.count) path nodes for a filtered direct path of \(path.count)")
        }
        for (i, (step, node)) in zip(path, updatePath.nodes).enumerated() {
            let expected = resolution(of: step.copathChild, excluding: newMembers).count
            guard node.encryptedPathSecret.count == expected else {
                throw MLSError.invalidUpdatePath("path node \(i) has \(node.encryptedPathSecret.count) ciphertexts for a resolution of \(expected)")
            }
        }

        let leaf = updatePath.leafNode
        guard case .commit(let claimedParentHash) = leaf.source else {
            throw MLSError.invalidUpdatePath("leaf node source is not commit")
        }
        do {
            try leaf.verifySignature(suite: suite, position: TreePosition(groupID: groupID, leafIndex: sender.value))
        } catch {
            throw MLSError.invalidLeafSignature(leaf: sender.value)
        }
        guard leaf.encryptionKey != self.leaf(at: sender)?.encryptionKey else {
            throw MLSError.invalidUpdatePath("leaf encryption key is unchanged")
        }
        var fresh = Set<[UInt8]>()
        for key in [leaf.encryptionKey] + updatePath.nodes.map(\.encryptionKey) {
            guard fresh.insert(key).inserted, !containsEncryptionKey(key) else {
                throw MLSError.invalidUpdatePath("an encryption key of the path already appears in the tree")
            }
        }

        // Check the parent hash before touching the tree, so any failure leaves it as it was.
        let (nodes, parentHash) = newPathNodes(along: path, keys: updatePath.nodes.map(\.encryptionKey))
        guard parentHash == claimedParentHash else { throw MLSError.parentHashMismatch }
        writePath(of: sender, path: path, nodes: nodes, leaf: leaf)
    }
}

extension TreeKEMPrivateKeys {
    /// Decrypts this member's path secret from an UpdatePath already merged into `tree`,
    /// derives the keys of every path node above it, checks them against the path's public
    /// keys, and returns the commit secret (RFC 9420 §7.5 "decrypts the path secrets").
    ///
    /// `groupContext` is the provisional GroupContext; `newMembers` the leaves added by
    /// the same commit (excluded from the resolutions, as by the sender). Keys of nodes the
    /// commit blanked or replaced are dropped (RFC 9420 §7.5's deletion of outdated keys). On
    /// error this state is unchanged.
    public mutating func processUpdatePath(
        _ updatePath: UpdatePath, from sender: LeafIndex, tree: RatchetTree, groupContext: GroupContext,
        excluding newMembers: Set<LeafIndex>, suite: CipherSuiteProvider
    ) throws -> ProcessedUpdatePath {
        guard sender != ownLeaf else { throw MLSError.invalidUpdatePath("an UpdatePath is not processed by its sender") }
        let path = tree.filteredDirectPath(of: sender)
        guard updatePath.nodes.count == path.count else {
            throw MLSError.invalidUpdatePath("\(updatePath.nodes.count) path nodes for a filtered direct path of \(path.count)")
        }
        guard let start = path.firstIndex(where: { $0.copathChild.subtreeContains(ownLeaf) }) else {
            throw MLSError.noPathSecretForMember
        }
        let resolution = tree.resolution(of: path[start].copathChild, excluding: newMembers)
        let ciphertexts = updatePath.nodes[start].encryptedPathSecret
        guard ciphertexts.count == resolution.count else {
            throw MLSError.invalidUpdatePath("path node \(start) has \(ciphertexts.count) ciphertexts for a resolution of \(resolution.count)")
        }
        guard let slot = resolution.firstIndex(where: { keys[$0] != nil }), let key = keys[resolution[slot]] else {
            throw MLSError.noPathSecretForMember
        }
        let decrypted: [UInt8]
        do {
            decrypted = try suite.decryptWithLabel(
                key, label: PathSecrets.encryptionLabel, context: groupContext.tlsSerialized, ciphertext: ciphertexts[slot])
        } catch {
            throw MLSError.pathSecretDecryptionFailed
        }
        guard decrypted.count == suite.kdfNh else { throw MLSError.invalidUpdatePath("path secret of \(decrypted.count) bytes") }
        let pathSecret = Secret(decrypted)

        // Derive and check every key from the common ancestor up, then commit the new state.
        var updated = self
        for node in tree.size.directPath(of: sender) { updated.removeKey(at: node) }
        var secret = pathSecret
        for i in start..<path.count {
            let pair = try PathSecrets.nodeKeyPair(secret, suite: suite)
            guard pair.publicKey.bytes == updatePath.nodes[i].encryptionKey else {
                throw MLSError.pathKeyMismatch(node: path[i].node.value)
            }
            updated.setKey(pair.privateKey, at: path[i].node)
            secret = PathSecrets.next(secret, suite: suite)
        }
        updated.prune(to: tree)
        self = updated
        return ProcessedUpdatePath(commonAncestor: path[start].node, pathSecret: pathSecret, commitSecret: secret)
    }

    /// The private state of a member joining by Welcome (RFC 9420 §12.4.3.1): its leaf key and,
    /// when the Welcome carried a path secret, the keys of the committer's filtered direct path
    /// from the common ancestor of `ownLeaf` and `committer` up, each checked against `tree`.
    public init(joining tree: RatchetTree, ownLeaf: LeafIndex, leafPrivateKey: HPKEPrivateKey, pathSecret: Secret?,
                committer: LeafIndex, suite: CipherSuiteProvider) throws {
        self.init(ownLeaf: ownLeaf, leafPrivateKey: leafPrivateKey)
        guard let leafKey = tree.leaf(at: ownLeaf)?.encryptionKey, (try? leafPrivateKey.publicKey())?.bytes == leafKey else {
            throw MLSError.privateStateMismatch(node: ownLeaf.nodeIndex.value)
        }
        guard var secret = pathSecret else { return }
        guard committer != ownLeaf, tree.leaf(at: committer) != nil else { throw MLSError.blankLeaf(committer.value) }
        let path = tree.filteredDirectPath(of: committer)
        guard let ancestor = ownLeaf.nodeIndex.commonAncestor(with: committer.nodeIndex),
              let start = path.firstIndex(where: { $0.node == ancestor })
        else { throw MLSError.invalidUpdatePath("no node of the committer's path lies above \(ownLeaf)") }
        for step in path[start...] {
            try insertPathSecret(secret, at: step.node, tree: tree, suite: suite)
            secret = PathSecrets.next(secret, suite: suite)
        }
    }
}
