/// Creating an UpdatePath (RFC 9420 §7.4–§7.6): the committer refreshes its leaf and filtered
/// direct path, then encrypts each path secret to the resolution of the matching copath child.
///
/// Two steps, because the encryption context is the provisional GroupContext, whose tree hash
/// covers the new path: `applyOwnUpdatePath` changes the tree and returns a
/// `PreparedUpdatePath`; once the caller has built the GroupContext from the new tree hash,
/// `PreparedUpdatePath.encrypt` produces the wire `UpdatePath`.

/// The committer's side of an UpdatePath between tree update and encryption. Holds the path
/// secrets of this commit: keep it only until the Commit and Welcomes are built.
public struct PreparedUpdatePath: Sendable, CustomStringConvertible {
    public let sender: LeafIndex
    /// The new, signed leaf node (source `commit`).
    public let leafNode: LeafNode
    /// The filtered direct path the secrets belong to, leaf to root.
    public let path: [FilteredPathStep]
    /// `path_secret[i]` for `path[i]`.
    let pathSecrets: [Secret]
    /// `commit_secret`: DeriveSecret of the last path secret, "path" (RFC 9420 §12.4.2).
    public let commitSecret: Secret
    /// The committer's private keys after the commit (new leaf key and every path node key).
    public let privateKeys: TreeKEMPrivateKeys

    public var description: String { "PreparedUpdatePath(\(sender), \(path.count) nodes, secrets redacted)" }

    /// The path secret a new member at `joiner` receives in its Welcome: the one of the lowest
    /// node of the path above both the joiner and the committer (RFC 9420 §12.4.3.1).
    public func pathSecret(forJoiner joiner: LeafIndex) -> Secret? {
        guard let ancestor = sender.nodeIndex.commonAncestor(with: joiner.nodeIndex),
              let i = path.firstIndex(where: { $0.node == ancestor })
        else { return nil }
        return pathSecrets[i]
    }

    /// Encrypts each path secret to every node of its copath child's resolution, leaving out
    /// `newMembers` (those added by this commit, who get the secret in their Welcome).
    /// `groupContext` is the provisional GroupContext of the new epoch (its tree hash is the
    /// one of `tree` after `applyOwnUpdatePath`).
    public func encrypt(in tree: RatchetTree, groupContext: GroupContext, excluding newMembers: Set<LeafIndex>,
                        suite: CipherSuiteProvider, using rng: inout some RandomNumberGenerator) throws -> UpdatePath {
        let context = groupContext.tlsSerialized
        var nodes: [UpdatePathNode] = []
        nodes.reserveCapacity(path.count)
        for (step, secret) in zip(path, pathSecrets) {
            guard let publicKey = tree.encryptionKey(at: step.node) else {
                throw MLSError.invalidUpdatePath("node \(step.node.value) of the prepared path is blank in this tree")
            }
            var ciphertexts: [HPKECiphertext] = []
            for target in tree.resolution(of: step.copathChild, excluding: newMembers) {
                guard let key = tree.encryptionKey(at: target) else { continue }  // resolutions hold non-blank nodes
                let plaintext = secret.unsafeBytes
                ciphertexts.append(try suite.encryptWithLabel(
                    HPKEPublicKey(key), label: PathSecrets.encryptionLabel, context: context,
                    plaintext: plaintext, using: &rng))
            }
            nodes.append(UpdatePathNode(encryptionKey: publicKey, encryptedPathSecret: ciphertexts))
        }
        return UpdatePath(leafNode: leafNode, nodes: nodes)
    }
}

extension RatchetTree {
    /// The committer's tree update (RFC 9420 §7.5 "updates their direct path"): fresh path
    /// secrets and node keys along the filtered direct path of `sender`, parent hashes, and a new
    /// leaf node signed by `signer` with `groupID` and its leaf index.
    ///
    /// The new leaf keeps the credential, capabilities and extensions of `leafTemplate` (the
    /// current leaf when nil); its signature key becomes `signer`'s. Call after applying the
    /// commit's proposals. Costs O(log N) hashes plus one key derivation per path node; the
    /// tree changes only once everything succeeded.
    public mutating func applyOwnUpdatePath(
        from sender: LeafIndex, groupID: [UInt8], signer: SignaturePrivateKey, leafTemplate: LeafNode? = nil,
        suite: CipherSuiteProvider, using rng: inout some RandomNumberGenerator
    ) throws -> PreparedUpdatePath {
        try requireMember(sender)
        guard let template = leafTemplate ?? leaf(at: sender) else { throw MLSError.blankLeaf(sender.value) }
        let path = filteredDirectPath(of: sender)

        // Path secrets and node keys (§7.4).
        var secrets: [Secret] = []
        var pairs: [HPKEKeyPair] = []
        var secret = rng.randomSecret(suite.kdfNh)
        for _ in path {
            secrets.append(secret)
            pairs.append(try PathSecrets.nodeKeyPair(secret, suite: suite))
            secret = PathSecrets.next(secret, suite: suite)
        }
        // With an empty path (a one-member tree) the random secret itself is the commit secret,
        // as in OpenMLS 0.8.1.
        let commitSecret = secret

        // The new path nodes with chained parent hashes (§7.5, §7.9).
        let (nodes, leafParentHash) = newPathNodes(along: path, keys: pairs.map(\.publicKey.bytes))

        // The new leaf: fresh encryption key, commit source, signed in the group context.
        let leafPair = try suite.hpke.generateKeyPair(using: &rng)
        var leaf = LeafNode(
            encryptionKey: leafPair.publicKey.bytes, signatureKey: signer.publicKey.bytes,
            credential: template.credential, capabilities: template.capabilities,
            source: .commit(parentHash: leafParentHash), extensions: template.extensions)
        try leaf.sign(with: signer, suite: suite, position: TreePosition(groupID: groupID, leafIndex: sender.value))
        writePath(of: sender, path: path, nodes: nodes, leaf: leaf)

        var keys = TreeKEMPrivateKeys(ownLeaf: sender, leafPrivateKey: leafPair.privateKey)
        for (step, pair) in zip(path, pairs) { keys.setKey(pair.privateKey, at: step.node) }
        return PreparedUpdatePath(
            sender: sender, leafNode: leaf, path: path, pathSecrets: secrets, commitSecret: commitSecret, privateKeys: keys)
    }
}
