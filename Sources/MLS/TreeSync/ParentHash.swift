/// Parent hashes (RFC 9420 §7.9): the chain that binds each parent node's key to the leaf that
/// set it, so a joiner can tell that parent nodes were produced by members' UpdatePaths.
///
/// `ParentHashInput { HPKEPublicKey encryption_key; opaque parent_hash<V>;
/// opaque original_sibling_tree_hash<V>; }`.
extension RatchetTree {
    static func parentHashInput(encryptionKey: [UInt8], parentHash: [UInt8], originalSiblingTreeHash: [UInt8]) -> [UInt8] {
        var w = TLSWriter(capacity: 112)
        w.writeOpaque(encryptionKey)
        w.writeOpaque(parentHash)
        w.writeOpaque(originalSiblingTreeHash)
        return TreeHashing.hash(w.bytes)
    }

    /// "The parent hash of P with copath child S"; nil when P is blank or not a parent.
    public func parentHash(of node: NodeIndex, copathChild: NodeIndex) -> [UInt8]? {
        guard let p = parent(at: node) else { return nil }
        return Self.parentHashInput(
            encryptionKey: p.encryptionKey, parentHash: p.parentHash,
            originalSiblingTreeHash: treeHash(of: copathChild, removingLeaves: p.unmergedLeaves))
    }

    /// The parent nodes a new filtered direct path with public keys `keys` consists of, with
    /// their `parent_hash` fields chained from the root side (the topmost gets the empty hash),
    /// and the `parent_hash` its leaf must carry (RFC 9420 §7.9). New nodes have no unmerged
    /// leaves and copath children lie off the path, so the cached tree hashes of the copath
    /// children are the original sibling tree hashes: O(log N), no tree change.
    func newPathNodes(along path: [FilteredPathStep], keys: [[UInt8]]) -> (nodes: [ParentNode], leafParentHash: [UInt8]) {
        var nodes: [ParentNode] = []
        nodes.reserveCapacity(path.count)
        var above: [UInt8] = []
        for (step, key) in zip(path, keys).reversed() {
            nodes.append(ParentNode(encryptionKey: key, parentHash: above))
            above = Self.parentHashInput(encryptionKey: key, parentHash: above, originalSiblingTreeHash: hashes[step.copathChild.value])
        }
        return (nodes.reversed(), above)
    }

    /// Writes a new filtered direct path and leaf for `sender`: blanks its direct path, sets the
    /// path nodes and the leaf, and refreshes the caches along the path.
    mutating func writePath(of sender: LeafIndex, path: [FilteredPathStep], nodes: [ParentNode], leaf: LeafNode) {
        blankDirectPath(of: sender)
        for (step, node) in zip(path, nodes) { setParent(node, at: step.node.value >> 1) }
        setLeaf(leaf, at: Int(sender.value))
        refreshCaches(from: sender.nodeIndex)
    }

    /// The `parent_hash` a node holds: a parent's field, a commit leaf's, or nil otherwise.
    func storedParentHash(at index: NodeIndex) -> [UInt8]? {
        switch node(at: index) {
        case .parent(let p)?: return p.parentHash
        case .leaf(let leaf)?:
            if case .commit(let ph) = leaf.source { return ph }
            return nil
        case nil: return nil
        }
    }

    /// Checks that every non-blank parent node is parent-hash valid (RFC 9420 §7.9.2, "top
    /// down"): it has exactly one descendant D, in the resolution of one child C and not among
    /// its own unmerged leaves, whose `parent_hash` is its parent hash with the other child as
    /// copath child, and the rest of C's resolution is exactly its unmerged leaves under C.
    /// Since D is strictly lower, every chain ends at a leaf.
    func verifyParentHashes() throws {
        for i in parents.indices {
            guard let p = parents[i] else { continue }
            let node = NodeIndex(2 * i + 1)
            guard let left = size.left(of: node), let right = size.right(of: node) else {
                throw MLSError.invalidRatchetTree("parent \(node.value) lacks a child")
            }
            var valid = 0
            for (child, sibling) in [(left, right), (right, left)] {
                let resolution = resolution(of: child)
                let unmergedHere = Set(p.unmergedLeaves.filter { child.subtreeContains($0) }.map(\.nodeIndex))
                let candidates = resolution.filter { !unmergedHere.contains($0) }
                // D must be the single non-unmerged node of C's resolution, and the remainder
                // must be exactly P's unmerged leaves under C.
                guard candidates.count == 1, let d = candidates.first,
                      Set(resolution).subtracting([d]) == unmergedHere,
                      resolution.count == unmergedHere.count + 1
                else { continue }
                guard let stored = storedParentHash(at: d),
                      let expected = parentHash(of: node, copathChild: sibling),
                      stored == expected
                else { continue }
                valid += 1
            }
            guard valid == 1 else {
                throw MLSError.invalidRatchetTree("parent \(node.value) is not parent-hash valid")
            }
        }
    }
}
