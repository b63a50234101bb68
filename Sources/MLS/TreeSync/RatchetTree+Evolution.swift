/// Membership changes to the tree (RFC 9420 §7.7, §12.1.1–§12.1.3): adding a leaf in the
/// leftmost blank slot or by extending, replacing a leaf (Update), removing one with truncation.
///
/// These operations take leaf nodes the caller has already validated (KeyPackage or Update
/// validation belongs to proposal processing); they keep the tree full, truncated and its
/// caches current.
extension RatchetTree {
    /// Adds a member (an Add proposal): fills the leftmost blank leaf or extends the tree, and
    /// records the new leaf as unmerged at every non-blank node of its direct path.
    @discardableResult
    public mutating func add(_ leaf: LeafNode) -> LeafIndex {
        add(leaf, at: LeafIndex(UInt32(truncatingIfNeeded: firstBlankLeaf(from: 0) ?? leaves.count)))
    }

    /// `add` into `index`, which the caller found as the leftmost blank leaf (or the leaf count,
    /// to extend): a commit adding many members scans the leaves once rather than per Add.
    mutating func add(_ leaf: LeafNode, at index: LeafIndex) -> LeafIndex {
        let slot = Int(index.value)
        assert(slot == leaves.count || firstBlankLeaf(from: slot) == slot, "add(_:at:) needs a blank slot")
        if slot == leaves.count { extend() }
        setLeaf(leaf, at: slot)
        for node in size.directPath(of: index) {
            parents[node.value >> 1]?.addUnmerged(index)
        }
        refreshCaches(from: index.nodeIndex)
        return index
    }

    /// Replaces a member's leaf (an Update proposal) and blanks its direct path.
    public mutating func update(_ index: LeafIndex, with leaf: LeafNode) throws {
        try requireMember(index)
        setLeaf(leaf, at: Int(index.value))
        blankDirectPath(of: index)
        refreshCaches(from: index.nodeIndex)
    }

    /// Removes a member (a Remove proposal): blanks the leaf and its direct path, then
    /// truncates the tree while its right half holds no member.
    public mutating func remove(_ index: LeafIndex) throws {
        try requireMember(index)
        setLeaf(nil, at: Int(index.value))
        blankDirectPath(of: index)
        refreshCaches(from: index.nodeIndex)
        truncate()
    }

    /// Fails unless `index` holds a member.
    func requireMember(_ index: LeafIndex) throws {
        guard size.contains(index) else { throw MLSError.leafIndexOutOfRange(index.value) }
        guard leaves[Int(index.value)] != nil else { throw MLSError.blankLeaf(index.value) }
    }

    /// Blanks every parent on the leaf's direct path (caches are the caller's to refresh).
    mutating func blankDirectPath(of index: LeafIndex) {
        for node in size.directPath(of: index) { setParent(nil, at: node.value >> 1) }
    }

    /// Doubles the tree: the old tree becomes the left subtree of a new blank root, with a
    /// blank right subtree (RFC 9420 §7.7). Existing node indices do not change.
    mutating func extend() {
        let old = size.leafCount
        size = TreeSize(validLeafCount: old * 2)
        leaves.append(contentsOf: repeatElement(nil, count: old))
        parents.append(contentsOf: repeatElement(nil, count: old))
        let oldNodes = hashes.count
        hashes.append(contentsOf: repeatElement([], count: size.nodeCount - oldNodes))
        nonBlankCounts.append(contentsOf: repeatElement(0, count: size.nodeCount - oldNodes))
        // Fill the new nodes' caches bottom-up: blank leaves, then each level's new parents.
        var level = 0
        while (1 << level) - 1 < size.nodeCount {
            var x = (1 << level) - 1
            while x < size.nodeCount {
                if x >= oldNodes { refreshCache(NodeIndex(x)) }  // children are new or the old root
                x += 1 << (level + 1)
            }
            level += 1
        }
    }

    /// Halves the tree while its right half has no member (RFC 9420 §12.1.3), keeping at least
    /// one leaf. The remaining nodes keep their indices and caches.
    mutating func truncate() {
        while size.leafCount > 1 {
            let half = size.leafCount / 2
            guard leaves[half...].allSatisfy({ $0 == nil }) else { return }
            size = TreeSize(validLeafCount: half)
            for parent in parents[(half - 1)...] { countKey(parent?.encryptionKey, -1) }
            leaves.removeLast(half)
            parents.removeLast(half)
            hashes.removeLast(hashes.count - size.nodeCount)
            nonBlankCounts.removeLast(nonBlankCounts.count - size.nodeCount)
        }
    }
}
